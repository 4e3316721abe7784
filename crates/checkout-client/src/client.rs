//! The client: configuration, the token cache, and how one call is sent (headers, retries,
//! errors, its tracing span).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use tracing::field::Empty;
use tracing::Instrument;

use crate::error::{ApiError, DecodeError, Error, InvalidRequest, NetworkError, Problem};
use crate::retry::{parse_retry_after, RetryPolicy};
use crate::types::{TokenAnswer, TokenBody};

/// The operation id header: one value per call, the same on each of its retries, recorded
/// in the call's span and in its errors. The service logs it with the request.
pub const OPERATION_ID_HEADER: &str = "X-idoperacion";
/// The idempotency key header: one value per POST call, the same on each of its retries.
pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";
/// The answer header that marks a replay of the first answer to an idempotency key.
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";

/// The service's routes.
pub(crate) mod paths {
    pub const TOKEN: &str = "/api/public/security/auth";
    pub const START_PAYMENT: &str = "/pay/api/start-payment";
    pub const PAYMENT_LINK: &str = "/pay/api/generate-payment-link";
    pub const PAYMENTS: &str = "/pay/api/payment";
    pub const EVENTS: &str = "/pay/api/events";
    pub const WEBHOOK_ENDPOINTS: &str = "/pay/api/webhook-endpoints";
    pub const CHECKOUT_PAGE: &str = "/pay/checkout-payment";
}

/// A merchant's client of the hosted checkout service.
///
/// Cheap to clone (clones share one connection pool and one token cache). It fetches a token
/// with the client credentials when first needed, renews it before `expiresIn` runs out
/// (and once when a call is answered 401), and retries each call by its
/// [`RetryPolicy`].
///
/// ```no_run
/// use checkout_client::{Client, Currency, Money, StartPaymentRequest};
/// use rust_decimal::Decimal;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = Client::new("https://pay.example.com", "my-client-id", "my-client-secret")?;
/// let session = client
///     .start_payment(&StartPaymentRequest::new(
///         "ORDER-1001",
///         Money::new(Decimal::new(2550, 2), Currency::USD)?,
///         "https://merchant.example/ok",
///         "https://merchant.example/fail",
///     ))
///     .await?;
/// println!("send the payer to {}", client.checkout_page_url(&session.checkout_session_id));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    /// The base URL without a trailing `/`.
    base: String,
    client_id: String,
    client_secret: Secret,
    retry: RetryPolicy,
    tokens: TokenCache,
}

/// A secret that never prints.
#[derive(Clone)]
struct Secret(String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base)
            .field("client_id", &self.inner.client_id)
            .field("client_secret", &self.inner.client_secret)
            .field("retry", &self.inner.retry)
            .finish()
    }
}

/// Builds a [`Client`] with settings other than the defaults.
///
/// ```
/// use std::time::Duration;
/// use checkout_client::{Client, RetryPolicy};
///
/// let client = Client::builder("http://127.0.0.1:8080", "sandbox-client", "secret")
///     .timeout(Duration::from_secs(10))
///     .retry_policy(RetryPolicy::default().max_attempts(3))
///     .build()?;
/// assert!(!format!("{client:?}").contains("secret\""));
/// # Ok::<(), checkout_client::Error>(())
/// ```
#[derive(Debug)]
pub struct ClientBuilder {
    base_url: String,
    client_id: String,
    client_secret: Secret,
    retry: RetryPolicy,
    timeout: Duration,
    connect_timeout: Duration,
    user_agent: String,
}

impl ClientBuilder {
    /// How each call is retried (default: [`RetryPolicy::default`]).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The time limit of one attempt, from sending to the end of the answer (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The time limit of connecting (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The `User-Agent` header (default `checkout-client/<version>`).
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// The client; fails when the base URL is not an absolute `http` or `https` URL.
    pub fn build(self) -> Result<Client, Error> {
        let invalid = |message: String| Error::InvalidRequest(InvalidRequest::new(message));
        let url = reqwest::Url::parse(&self.base_url)
            .map_err(|e| invalid(format!("the base URL is not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
            return Err(invalid("the base URL must be an http or https URL".into()));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid(
                "the base URL must have no query or fragment".into(),
            ));
        }
        if self.client_id.is_empty() || self.client_secret.0.is_empty() {
            return Err(invalid("the client id and secret must not be empty".into()));
        }
        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .user_agent(self.user_agent)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| invalid(format!("the HTTP client cannot be built: {e}")))?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                base: url.as_str().trim_end_matches('/').to_owned(),
                client_id: self.client_id,
                client_secret: self.client_secret,
                retry: self.retry,
                tokens: TokenCache::default(),
            }),
        })
    }
}

/// Settings of one call: its idempotency key and its operation id.
///
/// ```
/// use checkout_client::CallOptions;
///
/// let options = CallOptions::new()
///     .idempotency_key("ORDER-1001-refund-1")
///     .operation_id("support-ticket-42");
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallOptions {
    idempotency_key: Option<String>,
    operation_id: Option<String>,
}

impl CallOptions {
    /// No key and no operation id given: the SDK makes both (UUIDs).
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// The `Idempotency-Key` of a POST (1 to 255 visible ASCII characters). Give your own
    /// to retry a call safely after your process restarted: the service answers the first
    /// request's outcome again and never moves money twice.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// The `X-idoperacion` of the call (1 to 64 visible ASCII characters).
    pub fn operation_id(mut self, id: impl Into<String>) -> Self {
        self.operation_id = Some(id.into());
        self
    }

    fn checked_key(&self) -> Result<String, Error> {
        match &self.idempotency_key {
            None => Ok(uuid::Uuid::new_v4().to_string()),
            Some(key) => visible_ascii(key, 255, "an Idempotency-Key"),
        }
    }

    fn checked_operation_id(&self) -> Result<String, Error> {
        match &self.operation_id {
            None => Ok(uuid::Uuid::new_v4().to_string()),
            Some(id) => visible_ascii(id, 64, "an operation id"),
        }
    }
}

/// `text` when it is 1 to `max` visible ASCII characters.
fn visible_ascii(text: &str, max: usize, what: &str) -> Result<String, Error> {
    if text.is_empty() || text.len() > max || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::InvalidRequest(InvalidRequest::new(format!(
            "{what} must be 1 to {max} visible ASCII characters"
        ))));
    }
    Ok(text.to_owned())
}

/// When a request may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replay {
    /// Reads, deletes and token requests: on any network error.
    Safe,
    /// POSTs the service deduplicates by `Idempotency-Key`: on any network error.
    Keyed,
    /// POSTs the service does not deduplicate: only when the request was not received (a
    /// failed connection, 429, 503).
    Once,
}

/// One request as the client sends it.
pub(crate) struct Call {
    pub name: &'static str,
    pub method: Method,
    pub path: String,
    pub query: Vec<(&'static str, String)>,
    pub body: Option<Vec<u8>>,
    pub auth: bool,
    pub replay: Replay,
}

impl Call {
    /// A call of `name`: `method path`, with the bearer token.
    pub fn new(name: &'static str, method: Method, path: String, replay: Replay) -> Call {
        Call {
            name,
            method,
            path,
            query: Vec::new(),
            body: None,
            auth: true,
            replay,
        }
    }

    /// With a JSON body.
    pub fn json<T: serde::Serialize>(mut self, body: &T) -> Result<Call, Error> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| Error::InvalidRequest(InvalidRequest::new(e.to_string())))?;
        self.body = Some(bytes);
        Ok(self)
    }

    /// With a query parameter.
    pub fn query(mut self, name: &'static str, value: String) -> Call {
        self.query.push((name, value));
        self
    }
}

/// An answer as received.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub operation_id: String,
}

impl Reply {
    /// The body as `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_slice(&self.body).map_err(|e| {
            tracing::warn!(status = self.status.as_u16(), error = %e, "unexpected answer body");
            Error::Decode(DecodeError {
                status: self.status.as_u16(),
                message: e.to_string(),
                operation_id: self.operation_id.clone(),
            })
        })
    }
}

/// A failed send, and whether it certainly never reached the service.
struct SendError {
    error: reqwest::Error,
    not_received: bool,
}

impl Client {
    /// A client of the service at `base_url` (e.g. `https://pay.example.com`) for the
    /// terminal's OAuth client `client_id` / `client_secret`, with default settings.
    pub fn new(
        base_url: &str,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Result<Client, Error> {
        Client::builder(base_url, client_id, client_secret).build()
    }

    /// A builder for a client with other settings.
    pub fn builder(
        base_url: &str,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> ClientBuilder {
        ClientBuilder {
            base_url: base_url.to_owned(),
            client_id: client_id.into(),
            client_secret: Secret(client_secret.into()),
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            user_agent: concat!("checkout-client/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }

    /// The base URL, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// The hosted checkout page of an integrated checkout session: where to send the payer.
    pub fn checkout_page_url(&self, checkout_session_id: &str) -> String {
        format!(
            "{}{}/{}",
            self.inner.base,
            paths::CHECKOUT_PAGE,
            segment(checkout_session_id)
        )
    }

    /// Sends `call` with `options`: a span per call carrying its operation id, the token,
    /// retries, and one renewal of the token after a 401.
    pub(crate) async fn execute(&self, call: Call, options: &CallOptions) -> Result<Reply, Error> {
        let operation_id = options.checked_operation_id()?;
        let key = if call.method == Method::POST {
            Some(options.checked_key()?)
        } else {
            None
        };
        let span = tracing::info_span!(
            "checkout_client",
            call = call.name,
            method = %call.method,
            path = %call.path,
            operation_id = %operation_id,
            idempotency_key = Empty,
            attempts = Empty,
            status = Empty,
            replayed = Empty,
        );
        if let Some(key) = &key {
            span.record("idempotency_key", tracing::field::display(key));
        }
        self.run(&call, &operation_id, key.as_deref())
            .instrument(span)
            .await
    }

    async fn run(
        &self,
        call: &Call,
        operation_id: &str,
        key: Option<&str>,
    ) -> Result<Reply, Error> {
        let mut renewed = false;
        loop {
            let token = match call.auth {
                true => Some(self.inner.tokens.current(self).await?),
                false => None,
            };
            let result = self
                .send_with_retries(call, operation_id, key, token.as_deref())
                .await;
            match (result, token) {
                (Err(Error::Api(e)), Some(token)) if e.status == 401 && !renewed => {
                    tracing::info!("the token was refused (401): renewing it and sending again");
                    self.inner.tokens.forget(&token).await;
                    renewed = true;
                }
                (result, _) => return result,
            }
        }
    }

    /// Sends `call` until it is answered with something other than a retryable status, or
    /// the policy's attempts are spent.
    async fn send_with_retries(
        &self,
        call: &Call,
        operation_id: &str,
        key: Option<&str>,
        token: Option<&str>,
    ) -> Result<Reply, Error> {
        let policy = &self.inner.retry;
        let span = tracing::Span::current();
        let mut attempt = 0;
        let result = loop {
            attempt += 1;
            let last = attempt >= policy.attempts();
            match self.send_once(call, operation_id, key, token).await {
                Err(SendError {
                    error,
                    not_received,
                }) => {
                    let retryable = match call.replay {
                        Replay::Safe | Replay::Keyed => true,
                        Replay::Once => not_received,
                    };
                    if retryable && !last {
                        let wait = policy.backoff(attempt);
                        tracing::warn!(attempt, error = %error, wait_ms = wait.as_millis() as u64, "network error; sending again");
                        tokio::time::sleep(wait).await;
                        continue;
                    }
                    tracing::warn!(attempt, error = %error, "network error");
                    break Err(Error::Network(NetworkError {
                        source: error,
                        operation_id: operation_id.to_owned(),
                        attempts: attempt,
                    }));
                }
                Ok(reply) => {
                    let status = reply.status.as_u16();
                    span.record("status", status);
                    if reply.status.is_success() {
                        if reply.headers.contains_key(REPLAYED_HEADER) {
                            span.record("replayed", true);
                        }
                        tracing::debug!(attempt, status, "answered");
                        break Ok(reply);
                    }
                    let retry_after = reply
                        .headers
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| parse_retry_after(v, SystemTime::now()));
                    if matches!(status, 409 | 429 | 503) && !last {
                        if let Some(wait) = policy.wait_for(attempt, retry_after) {
                            tracing::warn!(
                                attempt,
                                status,
                                wait_ms = wait.as_millis() as u64,
                                "answered {status}; sending again"
                            );
                            tokio::time::sleep(wait).await;
                            continue;
                        }
                    }
                    let problem = serde_json::from_slice::<Problem>(&reply.body)
                        .unwrap_or_else(|_| Problem::from_status(status, &reply.body));
                    tracing::info!(attempt, status, kind = %problem.kind, instance = %problem.instance, "error answer");
                    break Err(Error::Api(Box::new(ApiError {
                        status,
                        problem,
                        retry_after,
                        operation_id: operation_id.to_owned(),
                        attempts: attempt,
                    })));
                }
            }
        };
        span.record("attempts", attempt);
        result
    }

    /// Sends `call` once and reads the whole answer.
    async fn send_once(
        &self,
        call: &Call,
        operation_id: &str,
        key: Option<&str>,
        token: Option<&str>,
    ) -> Result<Reply, SendError> {
        let url = format!("{}{}", self.inner.base, call.path);
        let mut request = self
            .inner
            .http
            .request(call.method.clone(), url)
            .header(ACCEPT, "application/json")
            .header(OPERATION_ID_HEADER, operation_id);
        if !call.query.is_empty() {
            request = request.query(&call.query);
        }
        if let Some(key) = key {
            request = request.header(IDEMPOTENCY_KEY_HEADER, key);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = &call.body {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        let response = request.send().await.map_err(|error| SendError {
            not_received: error.is_connect(),
            error,
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await.map_err(|error| SendError {
            error,
            not_received: false,
        })?;
        Ok(Reply {
            status,
            headers,
            body: body.to_vec(),
            operation_id: operation_id.to_owned(),
        })
    }

    /// Asks the service for a token with the client credentials.
    async fn fetch_token(&self) -> Result<CachedToken, Error> {
        let body = TokenBody {
            client_id: &self.inner.client_id,
            client_secret: &self.inner.client_secret.0,
        };
        let mut call =
            Call::new("token", Method::POST, paths::TOKEN.to_owned(), Replay::Safe).json(&body)?;
        call.auth = false;
        let operation_id = uuid::Uuid::new_v4().to_string();
        let key = uuid::Uuid::new_v4().to_string();
        let span = tracing::info_span!(
            "checkout_client",
            call = call.name,
            method = %call.method,
            path = %call.path,
            operation_id = %operation_id,
            idempotency_key = %key,
            attempts = Empty,
            status = Empty,
            replayed = Empty,
        );
        async {
            let asked_at = Instant::now();
            let reply = self
                .send_with_retries(&call, &operation_id, Some(&key), None)
                .await?;
            let answer: TokenAnswer = reply.decode()?;
            if !answer.is_consistent() {
                tracing::warn!("the token answer's OAuth 2.0 fields differ from its own");
            }
            let lifetime = Duration::from_secs(answer.expires_in);
            // Renewed when a fifth of its life (at most a minute) is left.
            let margin = (lifetime / 5).min(Duration::from_secs(60));
            tracing::info!(expires_in = answer.expires_in, "token issued");
            Ok(CachedToken {
                token: answer.token,
                renew_at: asked_at + (lifetime - margin),
                expires_at: asked_at + lifetime,
            })
        }
        .instrument(span)
        .await
    }

    /// How many tokens this client (and its clones) fetched so far.
    pub fn tokens_fetched(&self) -> u64 {
        self.inner
            .tokens
            .fetched
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The token in use, and when to renew it.
struct CachedToken {
    token: String,
    renew_at: Instant,
    expires_at: Instant,
}

/// One token at a time: callers wait for one fetch rather than each fetching.
#[derive(Default)]
struct TokenCache {
    slot: tokio::sync::Mutex<Option<CachedToken>>,
    fetched: std::sync::atomic::AtomicU64,
}

impl TokenCache {
    /// A token that is not due for renewal, fetched if needed. When a renewal fails while the
    /// current token is still valid, the current one is used.
    async fn current(&self, client: &Client) -> Result<String, Error> {
        let mut slot = self.slot.lock().await;
        if let Some(cached) = slot.as_ref() {
            if Instant::now() < cached.renew_at {
                return Ok(cached.token.clone());
            }
        }
        match client.fetch_token().await {
            Ok(fresh) => {
                self.fetched
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let token = fresh.token.clone();
                *slot = Some(fresh);
                Ok(token)
            }
            Err(error) => match slot.as_ref() {
                Some(cached) if Instant::now() < cached.expires_at => {
                    tracing::warn!(error = %error, "token renewal failed; the current token is still valid");
                    Ok(cached.token.clone())
                }
                _ => Err(error),
            },
        }
    }

    /// Drops `token` if it is still the cached one (not a newer one another call fetched).
    async fn forget(&self, token: &str) {
        let mut slot = self.slot.lock().await;
        if slot.as_ref().is_some_and(|cached| cached.token == token) {
            *slot = None;
        }
    }
}

/// `text` percent-encoded as one path segment.
pub(crate) fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_never_prints() {
        let client = Client::new("http://127.0.0.1:9/", "merchant-1", "s3cr3t-value").unwrap();
        let printed = format!("{client:?}");
        assert!(!printed.contains("s3cr3t-value"), "{printed}");
        assert!(printed.contains("merchant-1"));
        let builder = Client::builder("http://127.0.0.1:9", "merchant-1", "s3cr3t-value");
        assert!(!format!("{builder:?}").contains("s3cr3t-value"));
        assert_eq!(client.base_url(), "http://127.0.0.1:9");
    }

    #[test]
    fn base_urls_and_options_are_checked() {
        assert!(Client::new("ftp://example.com", "a", "b").is_err());
        assert!(Client::new("not a url", "a", "b").is_err());
        assert!(Client::new("https://example.com?x=1", "a", "b").is_err());
        assert!(Client::new("https://example.com", "", "b").is_err());
        let client = Client::new("https://example.com/checkout/", "a", "b").unwrap();
        assert_eq!(
            client.checkout_page_url("abc/def"),
            "https://example.com/checkout/pay/checkout-payment/abc%2Fdef"
        );
        assert!(CallOptions::new()
            .idempotency_key("with space")
            .checked_key()
            .is_err());
        assert!(CallOptions::new()
            .idempotency_key("")
            .checked_key()
            .is_err());
        assert!(CallOptions::new()
            .idempotency_key("k".repeat(256))
            .checked_key()
            .is_err());
        assert_eq!(
            CallOptions::new()
                .idempotency_key("ORDER-1:refund#1")
                .checked_key()
                .unwrap(),
            "ORDER-1:refund#1"
        );
        assert!(CallOptions::new()
            .operation_id("x".repeat(65))
            .checked_operation_id()
            .is_err());
        let generated = CallOptions::new().checked_key().unwrap();
        assert_eq!(generated.len(), 36);
    }
}
