//! Starts localstripe on a free loopback port for one test and stops it afterwards.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use url::Url;

/// How long localstripe may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running localstripe, killed on drop.
pub struct Localstripe {
    child: Child,
    /// Its base URL.
    pub base_url: Url,
    log: PathBuf,
}

/// The localstripe executable: `LOCALSTRIPE_BIN`, else the one `scripts/localstripe.sh`
/// installs. A missing one fails the test: it is never skipped.
fn executable() -> PathBuf {
    let path = match std::env::var_os("LOCALSTRIPE_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => {
            let home = std::env::var_os("HOME").expect("HOME is not set");
            PathBuf::from(home).join(".cache/hosted-checkout/localstripe-venv/bin/localstripe")
        }
    };
    assert!(
        path.is_file(),
        "localstripe is not installed at {}: run scripts/localstripe.sh once \
         (or point LOCALSTRIPE_BIN at a localstripe executable)",
        path.display()
    );
    path
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("no free port")
        .port()
}

impl Localstripe {
    /// Starts a fresh localstripe (empty store) and waits until it listens.
    pub fn start() -> Self {
        let bin = executable();
        let mut last_log = String::new();
        // A port picked free can be taken before localstripe binds it: try a few.
        for _ in 0..3 {
            match Self::try_start(&bin) {
                Ok(running) => return running,
                Err(log) => last_log = log,
            }
        }
        panic!("localstripe did not start; its output:\n{last_log}");
    }

    fn try_start(bin: &PathBuf) -> Result<Self, String> {
        let port = free_port();
        let log = std::env::temp_dir().join(format!(
            "checkout-processor-localstripe-{}-{port}.log",
            std::process::id()
        ));
        let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let mut child = Command::new(bin)
            .args(["--port", &port.to_string(), "--from-scratch"])
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;

        // aiohttp prints "======== Running on http://[::]:PORT ========" once it listens; the
        // reader thread keeps draining stdout afterwards so that localstripe never blocks.
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.contains("Running on") {
                    let _ = tx.send(());
                }
            }
        });
        let running = Localstripe {
            child,
            base_url: Url::parse(&format!("http://127.0.0.1:{port}/")).expect("url"),
            log: log.clone(),
        };
        match rx.recv_timeout(START_TIMEOUT) {
            Ok(()) => Ok(running),
            Err(_) => {
                drop(running);
                Err(std::fs::read_to_string(&log).unwrap_or_default())
            }
        }
    }
}

impl Drop for Localstripe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}
