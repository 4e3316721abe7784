//! A merchant's receiver for tests: `scripts/webhook_receiver.py`, which verifies every
//! request with the third-party `standardwebhooks` library (from PyPI, installed by
//! `scripts/webhook-receiver.sh`), answers as told, and logs one JSON line per request and
//! one per answer.
//!
//! The interpreter is `WEBHOOK_RECEIVER_PYTHON`; without it the install script is run, and
//! only when that fails (no Python, no PyPI) is the receiver unavailable, said loudly.

#![allow(clippy::expect_used)] // test support: a receiver that cannot start is a failed test

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use url::Url;

/// How long the receiver may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(30);

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The receiver's interpreter, or `None` (after a loud message) when it cannot be had.
pub fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            if let Some(path) = std::env::var_os("WEBHOOK_RECEIVER_PYTHON") {
                let path = PathBuf::from(path);
                assert!(
                    path.is_file(),
                    "WEBHOOK_RECEIVER_PYTHON={} is not a file: run scripts/webhook-receiver.sh",
                    path.display()
                );
                return Some(path);
            }
            let script = repo_root().join("scripts/webhook-receiver.sh");
            match Command::new(&script).stdin(Stdio::null()).output() {
                Ok(out) if out.status.success() => {
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    let last = stdout.lines().last().unwrap_or("").trim().to_owned();
                    assert!(
                        Path::new(&last).is_file(),
                        "{} printed {last:?}, not an interpreter",
                        script.display()
                    );
                    Some(PathBuf::from(last))
                }
                other => {
                    let why = match other {
                        Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
                        Err(e) => e.to_string(),
                    };
                    eprintln!(
                        "\n==================== SKIPPED ====================\n\
                         The Standard Webhooks receiver could not be installed: \
                         WEBHOOK_RECEIVER_PYTHON is unset and {} failed:\n{why}\n\
                         These tests did NOT run. CI runs scripts/test.sh, which installs it.\n\
                         =================================================\n",
                        script.display()
                    );
                    None
                }
            }
        })
        .clone()
}

/// A running receiver, killed on drop.
pub struct Receiver {
    child: Child,
    port: u16,
    log: PathBuf,
    secrets_file: PathBuf,
    mode_file: PathBuf,
}

impl Receiver {
    /// Starts a receiver under `dir` that verifies with each of `secrets` (separately) and
    /// answers `ok`; `None` when the receiver cannot be installed.
    pub fn start(dir: &Path, secrets: &[String]) -> Option<Receiver> {
        let python = python()?;
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        std::fs::create_dir_all(dir).expect("the receiver's directory");
        let name = format!(
            "receiver-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let log = dir.join(format!("{name}.jsonl"));
        let secrets_file = dir.join(format!("{name}.secrets"));
        let mode_file = dir.join(format!("{name}.mode"));
        let stderr = std::fs::File::create(dir.join(format!("{name}.stderr"))).expect("stderr");
        let mut child = Command::new(python)
            .arg(repo_root().join("scripts/webhook_receiver.py"))
            .args(["--host", "127.0.0.1", "--port", "0", "--log"])
            .arg(&log)
            .arg("--secrets-file")
            .arg(&secrets_file)
            .arg("--mode-file")
            .arg(&mode_file)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the receiver starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(address) = line.strip_prefix("listening on ") {
                    let _ = tx.send(address.to_owned());
                }
            }
        });
        let mut receiver = Receiver {
            child,
            port: 0,
            log,
            secrets_file,
            mode_file,
        };
        receiver.set_secrets(secrets);
        receiver.set_mode("ok");
        let address = rx
            .recv_timeout(START_TIMEOUT)
            .expect("the receiver prints `listening on HOST:PORT`");
        receiver.port = address
            .rsplit_once(':')
            .and_then(|(_, port)| port.parse().ok())
            .expect("a port");
        Some(receiver)
    }

    /// The port it listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The receiver's address with `path`.
    pub fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://127.0.0.1:{}{path}", self.port)).expect("url")
    }

    /// Verifies the next requests with each of `secrets`.
    pub fn set_secrets(&self, secrets: &[String]) {
        std::fs::write(&self.secrets_file, secrets.join(" ")).expect("the secrets file");
    }

    /// Answers the next requests (whose path names no mode) as `mode`: `ok`, `slow`, `fail`,
    /// `hang`, `close` or `redirect`.
    pub fn set_mode(&self, mode: &str) {
        std::fs::write(&self.mode_file, mode).expect("the mode file");
    }

    fn lines(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        // A line being written may be incomplete: stop at the first that does not parse.
        text.lines()
            .map_while(|line| serde_json::from_str::<Value>(line).ok())
            .collect()
    }

    /// Every request received so far: method, path, mode, headers, body, the library's
    /// verdict per secret, and `received_at`.
    pub fn requests(&self) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|line| line.get("answered").is_none())
            .collect()
    }

    /// When each request was received and answered (or given up): `answered` (its
    /// `webhook-id`), `received_at`, `answered_at`.
    pub fn answers(&self) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|line| line.get("answered").is_some())
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
