//! A real SMTP server for the receipt tests: `scripts/smtp_receiver.py` (Python's `aiosmtpd`
//! from PyPI, installed by `scripts/smtp-receiver.sh`), which accepts or refuses as told and
//! logs each message with its parts as Python's `email` package parsed them.
//!
//! The interpreter is `SMTP_RECEIVER_PYTHON`; without it the install script is run, and a
//! failure of that fails the test (CI installs it through `scripts/test.sh`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The receiver's interpreter: `SMTP_RECEIVER_PYTHON`, else what the install script prints.
fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            if let Some(path) = std::env::var_os("SMTP_RECEIVER_PYTHON") {
                return PathBuf::from(path);
            }
            let script = repo_root().join("scripts/smtp-receiver.sh");
            let out = Command::new(&script)
                .stdin(Stdio::null())
                .output()
                .expect("run scripts/smtp-receiver.sh");
            assert!(
                out.status.success(),
                "scripts/smtp-receiver.sh failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            PathBuf::from(stdout.lines().last().unwrap_or("").trim())
        })
        .clone()
}

/// One message the server received (accepted or refused).
#[derive(Debug, Clone)]
pub struct Received {
    /// Whether the server accepted it.
    pub accepted: bool,
    /// `RCPT TO` addresses.
    pub rcpt_tos: Vec<String>,
    /// The message as sent.
    pub raw: String,
    /// The decoded subject.
    pub subject: String,
    /// The `Message-ID`.
    pub message_id: String,
    /// (content type, decoded text) of each part.
    pub parts: Vec<(String, String)>,
}

impl Received {
    /// The decoded text of the part of `content_type`.
    pub fn part(&self, content_type: &str) -> &str {
        self.parts
            .iter()
            .find(|(t, _)| t == content_type)
            .map(|(_, text)| text.as_str())
            .unwrap_or_else(|| panic!("no {content_type} part in {:?}", self.parts))
    }
}

/// A running SMTP server, killed on drop.
pub struct SmtpReceiver {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    log: PathBuf,
    mode_file: PathBuf,
}

impl SmtpReceiver {
    /// Starts a server under `dir` in `mode` (`ok`, `refuse`, `reject`).
    pub fn start(dir: &Path, mode: &str) -> SmtpReceiver {
        std::fs::create_dir_all(dir).expect("the receiver's folder");
        let log = dir.join("smtp.jsonl");
        let mode_file = dir.join("smtp.mode");
        std::fs::write(&mode_file, mode).expect("the mode file");
        let stderr = std::fs::File::create(dir.join("smtp.stderr")).expect("stderr");
        let mut child = Command::new(python())
            .arg(repo_root().join("scripts/smtp_receiver.py"))
            .args(["--host", "127.0.0.1", "--port", "0", "--log"])
            .arg(&log)
            .arg("--mode-file")
            .arg(&mode_file)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the SMTP receiver starts");
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
        let address = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the SMTP receiver prints `listening on HOST:PORT`");
        let port = address
            .rsplit_once(':')
            .and_then(|(_, port)| port.parse().ok())
            .expect("a port");
        SmtpReceiver {
            child,
            port,
            log,
            mode_file,
        }
    }

    /// Switches the answer to the next messages.
    pub fn set_mode(&self, mode: &str) {
        std::fs::write(&self.mode_file, mode).expect("the mode file");
    }

    /// Every message received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .map(|v| Received {
                accepted: v["accepted"].as_bool().unwrap_or(false),
                rcpt_tos: v["rcpt_tos"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|r| r.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
                raw: v["raw"].as_str().unwrap_or_default().to_owned(),
                subject: v["subject"].as_str().unwrap_or_default().to_owned(),
                message_id: v["message_id"].as_str().unwrap_or_default().to_owned(),
                parts: v["parts"]
                    .as_array()
                    .map(|parts| {
                        parts
                            .iter()
                            .map(|p| {
                                (
                                    p["content_type"].as_str().unwrap_or_default().to_owned(),
                                    p["text"].as_str().unwrap_or_default().to_owned(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect()
    }

    /// The messages to `to` (accepted or not).
    pub fn to(&self, to: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|m| m.rcpt_tos.iter().any(|r| r == to))
            .collect()
    }

    /// Waits (up to `within`) until `done` holds of the messages received, and returns them.
    pub async fn wait_for(
        &self,
        within: Duration,
        what: &str,
        done: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let deadline = Instant::now() + within;
        loop {
            let received = self.received();
            if done(&received) {
                return received;
            }
            assert!(
                Instant::now() < deadline,
                "the SMTP server did not get {what} within {within:?}: {received:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for SmtpReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
