//! Starts the real `checkout` binary for a test and talks to it as a merchant backend would.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use checkout_domain::auth::{OAuthClient, Role};
use checkout_domain::terminal::{CaptureMethod, Terminal};
use checkout_domain::values::TerminalNumber;
use checkout_postgres::PgStore;
use checkout_test_db::TestDatabase;
use diesel_async::{AsyncConnection, RunQueryDsl};
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Which environment the server runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The default: sandbox terminal provisioned at start, sandbox processor.
    Sandbox,
    /// Production: no provisioning, a key file given, the Stripe processor configured.
    Production,
}

/// A running server, its database and its artifacts folder. The process is killed on drop.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The bound port.
    pub port: u16,
    /// The metrics listener's port, when `CHECKOUT__METRICS__ADDRESS` was given.
    pub metrics_port: Option<u16>,
    /// The sandbox terminal number (sandbox mode).
    pub terminal: String,
    /// The sandbox client id (sandbox mode).
    pub client_id: String,
    /// The sandbox client secret (sandbox mode).
    pub client_secret: String,
    /// Where this server's data, key and log live.
    pub dir: PathBuf,
    /// A merchant-side HTTP client (no redirects followed).
    pub http: reqwest::Client,
    /// The sandbox client's token, fetched once (the auth endpoint is rate limited).
    token: tokio::sync::OnceCell<String>,
    env: Vec<(String, String)>,
    launches: u32,
    child: Child,
    store: PgStore,
    // Dropped last: the server's connections go first.
    db: Arc<TestDatabase>,
}

/// A response as a merchant backend sees it.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: reqwest::header::HeaderMap,
    /// The body, parsed as JSON when it is JSON, else `Value::String` of the text.
    pub body: Value,
    /// The body as sent (exact decimals survive here, not in `body`).
    pub text: String,
}

impl Reply {
    /// The `Content-Type` header.
    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// A string field of the body.
    pub fn str(&self, field: &str) -> &str {
        self.body[field].as_str().unwrap_or_else(|| {
            panic!("no string field {field} in {}", self.body);
        })
    }
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A folder for one test's files under the target folder, emptied first.
pub fn artifacts_dir(label: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("checkout-server-tests")
        .join(format!("{label}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test folder");
    dir
}

impl TestServer {
    /// A sandbox server with default settings.
    pub async fn sandbox(label: &str) -> TestServer {
        TestServer::start(label, Mode::Sandbox, &[]).await
    }

    /// Starts the binary in `mode` with extra `CHECKOUT__...` settings, and waits until it
    /// prints that it listens.
    pub async fn start(label: &str, mode: Mode, extra: &[(&str, &str)]) -> TestServer {
        let db = Arc::new(TestDatabase::create().await.expect("a test database"));
        TestServer::start_on(db, label, mode, extra).await
    }

    /// Like [`TestServer::start`], over an existing database (several servers may share one).
    pub async fn start_on(
        db: Arc<TestDatabase>,
        label: &str,
        mode: Mode,
        extra: &[(&str, &str)],
    ) -> TestServer {
        let dir = artifacts_dir(label);
        let secret = format!("test-secret-{}", uuid_like());
        let mut env: Vec<(String, String)> = vec![
            ("RUST_LOG".into(), "info".into()),
            ("CHECKOUT_LOG_FORMAT".into(), "json".into()),
            ("DATABASE_URL".into(), db.url().to_owned()),
            ("CHECKOUT__DATA_DIR".into(), path_text(&dir.join("data"))),
            ("CHECKOUT__SERVER__PORT".into(), "0".into()),
            ("CHECKOUT__SERVER__WORKERS".into(), "2".into()),
            ("CHECKOUT__DATABASE__POOL_SIZE".into(), "4".into()),
            // No grace period after SIGTERM unless a test asks for one (tests/ops/shutdown.rs).
            ("CHECKOUT__SERVER__SHUTDOWN_GRACE_MS".into(), "0".into()),
        ];
        match mode {
            Mode::Sandbox => {
                env.push(("CHECKOUT__SANDBOX__CLIENT_SECRET".into(), secret.clone()));
            }
            Mode::Production => {
                let key = dir.join("production.pk8");
                checkout_identity::SigningKey::load_or_create(&key).expect("a production key");
                for (k, v) in [
                    ("CHECKOUT__ENVIRONMENT", "production"),
                    ("CHECKOUT__IDENTITY__KEY_FILE", path_text(&key).as_str()),
                    (
                        "CHECKOUT__SERVER__PUBLIC_BASE_URL",
                        "https://pay.example.test",
                    ),
                    ("CHECKOUT__PROCESSOR__KIND", "stripe"),
                    ("CHECKOUT__PROCESSOR__STRIPE_BASE_URL", "http://127.0.0.1:9"),
                    ("CHECKOUT__PROCESSOR__STRIPE_API_KEY", "sk_test_unused"),
                ] {
                    env.push((k.into(), v.into()));
                }
            }
        }
        for (k, v) in extra {
            env.push(((*k).into(), (*v).into()));
        }
        let (child, port, metrics_port) = launch(&env, &dir).await;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .expect("http client");
        let store = db.store();
        TestServer {
            base: format!("http://127.0.0.1:{port}"),
            port,
            metrics_port,
            terminal: "SANDBOX-001".into(),
            client_id: "sandbox-client".into(),
            client_secret: secret,
            dir,
            http,
            token: tokio::sync::OnceCell::new(),
            env,
            launches: 1,
            child,
            store,
            db,
        }
    }

    /// The database this server runs on (to start another server over it).
    pub fn database(&self) -> Arc<TestDatabase> {
        self.db.clone()
    }

    /// The settings this server was started with, `CHECKOUT__...` and the rest.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// Kills the process with SIGKILL (no shutdown of any kind) and waits for it to die.
    pub fn kill_hard(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the binary again with the same settings, data folder and database, after
    /// [`TestServer::kill_hard`] or [`TestServer::terminate`]; the port may change.
    pub async fn restart(&mut self) {
        self.launches += 1;
        let log = self.dir.join(format!("server-{}.log", self.launches));
        let _ = std::fs::rename(self.dir.join("server.log"), log);
        let (child, port, metrics_port) = launch(&self.env, &self.dir).await;
        self.child = child;
        self.port = port;
        self.metrics_port = metrics_port;
        self.base = format!("http://127.0.0.1:{port}");
    }

    /// The server's log so far (JSON lines).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// The database's URL.
    pub fn database_url(&self) -> &str {
        self.db.url()
    }

    /// The store over the server's database, for provisioning.
    pub fn store(&self) -> &PgStore {
        &self.store
    }

    /// Provisions a terminal.
    pub async fn add_terminal(&self, number: &str, active: bool) {
        self.store
            .create_terminal(&Terminal {
                number: TerminalNumber::parse(number).expect("terminal number"),
                display_name: format!("Merchant {number}"),
                active,
                callback_hosts: None,
                max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
                capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
            })
            .await
            .expect("create terminal");
    }

    /// Creates an OAuth client for `terminal` with `roles`; returns (client_id, secret).
    pub async fn add_client(&self, terminal: &str, roles: Vec<Role>) -> (String, String) {
        let client_id = format!("client-{}", uuid_like());
        let secret = format!("secret-{}", uuid_like());
        self.store
            .create_client(&OAuthClient {
                client_id: client_id.clone(),
                secret_hash: checkout_identity::hash_secret(&secret).expect("hash"),
                terminal: TerminalNumber::parse(terminal).expect("terminal number"),
                roles,
                active: true,
            })
            .await
            .expect("create client");
        (client_id, secret)
    }

    /// Creates an integrated checkout session of 12.34 USD with `reference` (success, fail and
    /// back URLs on merchant.example); returns its id.
    pub async fn start_checkout(&self, reference: &str) -> String {
        let body = serde_json::json!({
            "callbackSuccessUrl": "https://merchant.example/ok",
            "callbackFailUrl": "https://merchant.example/fail",
            "callbackBackUrl": "https://merchant.example/cart",
            "totalTransactionAmount": 12.34,
            "currencyCode": "USD",
            "transactionReferenceNumber": reference
        });
        let token = self.token().await;
        let reply = self
            .post("/pay/api/start-payment", Some(&token), &body)
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.str("checkoutSessionId").to_owned()
    }

    /// A fresh checkout session with a unique reference starting with `label`; returns its id.
    pub async fn new_checkout(&self, label: &str) -> String {
        self.start_checkout(&format!("{label}-{}", &uuid_like()[..8]))
            .await
    }

    /// A fresh checkout session (12.34 USD) paid on its card form with `card` (a sandbox or
    /// Stripe test card); returns its id.
    pub async fn paid_checkout(&self, label: &str, card: &str) -> String {
        let id = self.new_checkout(label).await;
        let form = super::payer::CardForm::open(&self.http, &self.base, &id).await;
        let answer = form.submit(&self.http, card).await;
        assert!(
            !answer.status().is_server_error(),
            "paying {id} with {label}: {}",
            answer.status()
        );
        id
    }

    /// The status record the merchant reads for session `id`.
    pub async fn status_record(&self, id: &str) -> Value {
        let token = self.token().await;
        let reply = self
            .get(&format!("/pay/api/payment/{id}"), Some(&token))
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body
    }

    /// Moves a session's expiry into the past (as if its validity had run out).
    pub async fn expire_session(&self, id: &str) {
        let mut conn = diesel_async::AsyncPgConnection::establish(self.database_url())
            .await
            .expect("connect");
        diesel::sql_query(
            "UPDATE payment_sessions SET expires_at = now() - interval '1 minute' WHERE id = $1",
        )
        .bind::<diesel::sql_types::Uuid, _>(uuid::Uuid::parse_str(id).expect("uuid"))
        .execute(&mut conn)
        .await
        .expect("expire");
    }

    /// Sets a terminal's `maxCardAttempts`.
    pub async fn set_max_card_attempts(&self, number: &str, n: i64) {
        self.store
            .set_max_card_attempts(
                &TerminalNumber::parse(number).expect("number"),
                checkout_domain::values::MaxCardAttempts::new(n).expect("1..=10"),
            )
            .await
            .expect("set maxCardAttempts");
    }

    /// Sets whether a terminal's payments are captured with their authorisation or held.
    pub async fn set_capture_method(&self, number: &str, method: CaptureMethod) {
        self.store
            .set_capture_method(&TerminalNumber::parse(number).expect("number"), method)
            .await
            .expect("set the capture method");
    }

    /// Sets a terminal's active flag.
    pub async fn set_terminal_active(&self, number: &str, active: bool) {
        self.store
            .set_terminal_active(&TerminalNumber::parse(number).expect("number"), active)
            .await
            .expect("set terminal active");
    }

    /// Sends a request; `body` as JSON when given.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("the server answers");
        into_reply(response).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.send(Method::POST, path, token, Some(body)).await
    }

    /// `GET path`.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.send(Method::GET, path, token, None).await
    }

    /// A token for the given credentials (asserts 200).
    pub async fn token_for(&self, client_id: &str, secret: &str) -> String {
        let reply = self
            .post(
                "/api/public/security/auth",
                None,
                &serde_json::json!({ "client_id": client_id, "client_secret": secret }),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "token: {}", reply.body);
        reply.str("token").to_owned()
    }

    /// A token for the sandbox client (fetched once per server).
    pub async fn token(&self) -> String {
        self.token
            .get_or_init(|| self.token_for(&self.client_id, &self.client_secret))
            .await
            .clone()
    }
}

impl TestServer {
    /// Sends SIGTERM and waits (up to `within`) for the process to exit; returns its status.
    pub fn terminate(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        self.send_sigterm();
        self.wait_for_exit(within)
    }

    /// Sends SIGTERM, and returns at once.
    pub fn send_sigterm(&self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
    }

    /// Waits (up to `within`) for the process to exit; returns its status.
    pub fn wait_for_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let started = std::time::Instant::now();
        while started.elapsed() < within {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill_hard();
    }
}

/// Starts `checkout serve` with `env` (none of the test process's own `CHECKOUT...`
/// settings), its log in `dir/server.log`; waits for the port it prints (and the metrics
/// port, when it prints one).
async fn launch(env: &[(String, String)], dir: &Path) -> (Child, u16, Option<u16>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_checkout"));
    cmd.arg("serve");
    for (key, _) in std::env::vars() {
        if key.starts_with("CHECKOUT") {
            cmd.env_remove(key);
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let log_path = dir.join("server.log");
    let log = std::fs::File::create(&log_path).expect("create the log file");
    cmd.stdout(Stdio::piped()).stderr(log).stdin(Stdio::null());
    let mut child = cmd.spawn().expect("start the checkout binary");
    let stdout = child.stdout.take().expect("stdout");
    let (port, metrics_port) = tokio::task::spawn_blocking(move || read_port(stdout))
        .await
        .expect("banner reader")
        .unwrap_or_else(|| {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            panic!("the server did not start; its log:\n{log}")
        });
    (child, port, metrics_port)
}

fn path_text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// Turns a response into a [`Reply`].
pub async fn into_reply(response: reqwest::Response) -> Reply {
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.expect("a body");
    let body = serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()));
    Reply {
        status,
        headers,
        body,
        text,
    }
}

/// Reads the banner until the `listening on http://host:port` line, noting the metrics
/// line's port on the way; `None` if the process ends first. Keeps draining stdout afterwards
/// so the server never blocks on a full pipe.
fn read_port(stdout: std::process::ChildStdout) -> Option<(u16, Option<u16>)> {
    let mut lines = BufReader::new(stdout).lines();
    let mut metrics_port = None;
    for line in lines.by_ref() {
        let line = line.ok()?;
        if let Some((_, address)) = line.split_once("Metrics (Prometheus) on http://") {
            let address = address.trim().trim_end_matches("/metrics");
            metrics_port = address.rsplit(':').next()?.parse().ok();
        }
        if let Some((_, address)) = line.split_once("listening on http://") {
            let port = address.trim().rsplit(':').next()?.parse().ok()?;
            std::thread::spawn(move || for _ in lines {});
            return Some((port, metrics_port));
        }
    }
    None
}

/// A random lowercase hex string (32 characters).
pub fn uuid_like() -> String {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes).expect("randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
