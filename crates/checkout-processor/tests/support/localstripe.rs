//! Starts localstripe on a free loopback port for one test and stops it afterwards, and reads
//! what it holds (the test's own view of the processor, not the adapter's).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;
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

impl Localstripe {
    /// `GET path` with a secret key; the JSON answer, which must be a 200.
    async fn get(&self, path: &str) -> Value {
        let url = self.base_url.join(path).expect("url");
        answer(reqwest::Client::new().get(url), &format!("GET {path}")).await
    }

    /// Every object of the list at `path` (the store is fresh per test, so one page is
    /// enough).
    async fn list(&self, path: &str) -> Vec<Value> {
        let page = self.get(&format!("{path}?limit=100")).await;
        assert_eq!(page["has_more"], Value::Bool(false), "{page}");
        page["data"].as_array().cloned().unwrap_or_default()
    }

    /// Every PaymentIntent localstripe holds.
    pub async fn payment_intents(&self) -> Vec<Value> {
        self.list("v1/payment_intents").await
    }

    /// One PaymentIntent.
    pub async fn payment_intent(&self, id: &str) -> Value {
        self.get(&format!("v1/payment_intents/{id}")).await
    }

    /// `POST path` of `form` with a secret key; the JSON answer, which must be a 200.
    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Value {
        let url = self.base_url.join(path).expect("url");
        answer(
            reqwest::Client::new().post(url).form(form),
            &format!("POST {path}"),
        )
        .await
    }

    /// Every refund localstripe holds.
    pub async fn refunds(&self) -> Vec<Value> {
        self.list("v1/refunds").await
    }

    /// The charges that succeeded: money taken (captured or only authorised).
    pub async fn succeeded_charges(&self) -> Vec<Value> {
        self.list("v1/charges")
            .await
            .into_iter()
            .filter(|charge| charge["status"] == "succeeded")
            .collect()
    }
}

/// Sends `request` with a secret key; the JSON answer, which must be a 200.
async fn answer(request: reqwest::RequestBuilder, what: &str) -> Value {
    let response = request
        .bearer_auth("sk_test_inspector")
        .send()
        .await
        .expect("localstripe answers");
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON answer");
    assert!(status.is_success(), "{what}: {status}: {body}");
    body
}

impl Drop for Localstripe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}
