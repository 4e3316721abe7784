//! The npm `oidc-provider` package as a real OpenID Connect provider, started by the tests
//! (`scripts/oidc-provider.mjs`, installed by `scripts/oidc-provider.sh`).

// Test helpers panic on failure, like the tests that call them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The folder holding the package: `OIDC_PROVIDER_DIR`, else what `scripts/oidc-provider.sh`
/// installs and prints.
fn package_dir() -> String {
    if let Ok(dir) = std::env::var("OIDC_PROVIDER_DIR") {
        return dir;
    }
    let out = Command::new(repo_root().join("scripts/oidc-provider.sh"))
        .stderr(Stdio::inherit())
        .output()
        .expect("running scripts/oidc-provider.sh (needs npm)");
    assert!(out.status.success(), "scripts/oidc-provider.sh failed");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A running provider; stopped on drop.
pub struct NodeProvider {
    child: Option<Child>,
    config: Value,
    /// Its issuer, `http://127.0.0.1:<port>`.
    pub issuer: String,
    http: reqwest::Client,
}

impl NodeProvider {
    /// Starts a provider with this configuration (see the script's header). With `tls`, its
    /// `ca` (a PEM the script ignores) is what the harness's own client trusts.
    pub fn start(config: Value) -> Self {
        let (child, issuer) = spawn(&config);
        let mut http = reqwest::Client::builder();
        if let Some(ca) = config["tls"]["ca"].as_str() {
            http =
                http.add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap());
        }
        NodeProvider {
            child: Some(child),
            config,
            issuer,
            http: http.build().unwrap(),
        }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.issuer.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Stops it (SIGKILL); its port stays free for [`restart`](Self::restart).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port with the keys it had (`keys`, read before stopping).
    pub fn restart(&mut self, keys: Value) {
        self.stop();
        let mut config = self.config.clone();
        config["port"] = json!(self.port());
        config["keys"] = keys;
        let (child, issuer) = spawn(&config);
        assert_eq!(issuer, self.issuer);
        self.child = Some(child);
    }

    /// Its private signing keys.
    pub async fn keys(&self) -> Value {
        let url = format!("{}/__test/keys", self.issuer);
        let answer: Value = self
            .http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["keys"].clone()
    }

    /// Rotates: a new signing key first, the old ones kept. Answers the new kid.
    pub async fn rotate(&self) -> String {
        self.post("/__test/rotate", json!({})).await["kid"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Keeps only the signing key in the JWKS.
    pub async fn retire_old_keys(&self) {
        self.post("/__test/retire", json!({})).await;
    }

    /// A JWS over `header` (merged into RS256 with the signing key's kid) and `claims`, signed
    /// by the signing key, or with `foreign` by a key that is in no JWKS.
    pub async fn sign(&self, header: Value, claims: Value, foreign: bool) -> String {
        let answer = self
            .post(
                "/__test/sign",
                json!({"header": header, "claims": claims, "foreign": foreign}),
            )
            .await;
        answer["token"].as_str().unwrap().to_owned()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.issuer);
        let response = self.http.post(url).json(&body).send().await.unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.json().await.unwrap()
    }

    /// A client credentials token straight from the provider's token endpoint (as a merchant
    /// fetching its own token would), with client_secret_basic.
    pub async fn token(&self, client_id: &str, secret: &str) -> String {
        let response = self
            .http
            .post(format!("{}/token", self.issuer))
            .basic_auth(client_id, Some(secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "token: {}",
            response.status()
        );
        let answer: Value = response.json().await.unwrap();
        answer["access_token"].as_str().unwrap().to_owned()
    }
}

impl Drop for NodeProvider {
    fn drop(&mut self) {
        self.stop();
    }
}

static LAUNCHES: AtomicU32 = AtomicU32::new(0);

fn spawn(config: &Value) -> (Child, String) {
    let dir = package_dir();
    // Its standard error goes to a file, shown if it does not start.
    let n = LAUNCHES.fetch_add(1, Ordering::Relaxed);
    let errors =
        std::env::temp_dir().join(format!("oidc-provider-{}-{n}.stderr", std::process::id()));
    let mut child = Command::new("node")
        .arg(repo_root().join("scripts/oidc-provider.mjs"))
        .arg(config.to_string())
        .env("OIDC_PROVIDER_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&errors).unwrap())
        .spawn()
        .expect("starting node (scripts/oidc-provider.mjs)");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(line) if !line.trim().is_empty() => line,
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = std::fs::read_to_string(&errors).unwrap_or_default();
            panic!("the OpenID Connect provider did not start:\n{stderr}");
        }
    };
    let _ = std::fs::remove_file(&errors);
    let ready: Value = serde_json::from_str(line.trim()).unwrap();
    (child, ready["issuer"].as_str().unwrap().to_owned())
}
