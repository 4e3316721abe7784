//! Sends one signed webhook and reports what happened.
//!
//! Each delivery checks the URL again, resolves its host once, checks every address, and
//! connects only to those addresses (a client made for the delivery, its host name pinned to
//! them, with no other name resolution, no proxy and no connection pool), so that a host
//! re-pointed after the check (DNS rebinding) cannot move the connection. Redirects are never
//! followed; any 2xx is delivered; everything else, and every network error, is not.
//!
//! An attempt has three time limits: the lookup (the URL policy's), then, from the end of the
//! lookup, the connection (TCP and TLS: a host that does not accept connections is given up
//! after the connect time-out, a few seconds) within the answer time-out (the status and the
//! first bytes of the body, 15 s by default). No
//! byte of the answer's body is kept when the address connected to is loopback or private:
//! where such targets are allowed (a sandbox on loopback), the deliveries log must not become
//! a way to read the host's other services.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve as ReqwestResolve, Resolving};
use reqwest::header::{HeaderValue, CONTENT_TYPE};
use time::OffsetDateTime;
use tokio::time::{timeout_at, Instant};
use url::Url;

use crate::signature::{SignError, WebhookHeaders, WebhookSecret};
use crate::url_policy::{CheckedTarget, UrlError, UrlPolicy};

/// The `Content-Type` of every delivery: bodies are JSON events.
pub const CONTENT_TYPE_JSON: &str = "application/json";
/// The `User-Agent` of every delivery.
pub const USER_AGENT: &str = concat!("hosted-checkout-webhooks/", env!("CARGO_PKG_VERSION"));
/// How many bytes of a response are kept in a report.
pub const EXCERPT_BYTES: usize = 256;

/// Posts signed webhooks.
#[derive(Debug, Clone)]
pub struct WebhookSender {
    policy: UrlPolicy,
    timeout: Duration,
    connect_timeout: Duration,
    /// This crate's tests only: read the body of loopback answers as if they were public (the
    /// only receivers a test can run are on loopback).
    #[cfg(test)]
    read_internal_bodies: bool,
}

/// What one delivery attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryReport {
    /// When the attempt started (its `webhook-timestamp` is this time's unix seconds).
    pub attempted_at: OffsetDateTime,
    /// How long it took, from the start to the answer's excerpt or the error.
    pub duration: Duration,
    /// The answer, or why there was none.
    pub outcome: DeliveryOutcome,
}

/// The answer to an attempt, or why there was none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// The receiver answered (any status; redirects are not followed).
    Responded {
        /// The HTTP status.
        status: u16,
        /// The first [`EXCERPT_BYTES`] bytes of the answer's body, as lossy UTF-8, with tabs
        /// and line breaks turned into spaces and other control characters removed; `None`
        /// when the receiver's address is loopback or private (its body is never read).
        body_excerpt: Option<String>,
    },
    /// No answer.
    Failed(DeliveryError),
}

/// Why an attempt got no answer. The message never holds a secret or the URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// Not sent: the URL or an address of its host is refused by the policy.
    #[error("not sent: the URL {0}")]
    Refused(UrlError),
    /// Not sent: the message cannot be signed (bad message id, no secret).
    #[error("not sent: {0}")]
    Unsigned(SignError),
    /// No answer within the sender's answer time-out.
    #[error("no answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// No connection within the sender's connect time-out.
    #[error("cannot connect within {} ms", .0.as_millis())]
    ConnectTimeout(Duration),
    /// The connection could not be made (refused, unreachable, TLS handshake failed).
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The connection failed during the exchange (closed or reset before an answer).
    #[error("network error: {0}")]
    Network(String),
}

impl DeliveryReport {
    /// True when the receiver answered with a 2xx status.
    pub fn delivered(&self) -> bool {
        self.status().is_some_and(|s| (200..300).contains(&s))
    }

    /// The answer's HTTP status, if there was an answer.
    pub fn status(&self) -> Option<u16> {
        match &self.outcome {
            DeliveryOutcome::Responded { status, .. } => Some(*status),
            DeliveryOutcome::Failed(_) => None,
        }
    }

    /// The answer's first bytes, if there was an answer and they were kept.
    pub fn body_excerpt(&self) -> Option<&str> {
        match &self.outcome {
            DeliveryOutcome::Responded { body_excerpt, .. } => body_excerpt.as_deref(),
            DeliveryOutcome::Failed(_) => None,
        }
    }

    /// Why there was no answer, if there was none.
    pub fn error(&self) -> Option<&DeliveryError> {
        match &self.outcome {
            DeliveryOutcome::Responded { .. } => None,
            DeliveryOutcome::Failed(error) => Some(error),
        }
    }
}

impl fmt::Display for DeliveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.duration.as_millis();
        match &self.outcome {
            DeliveryOutcome::Responded {
                status,
                body_excerpt: Some(body_excerpt),
            } => write!(f, "HTTP {status} after {ms} ms: {body_excerpt:?}"),
            DeliveryOutcome::Responded {
                status,
                body_excerpt: None,
            } => write!(f, "HTTP {status} after {ms} ms (body not kept)"),
            DeliveryOutcome::Failed(error) => write!(f, "{error} (after {ms} ms)"),
        }
    }
}

impl WebhookSender {
    /// The answer time-out the specification recommends (15 to 30 s).
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);
    /// The default connect time-out: a TCP and TLS handshake with a host that answers takes
    /// well under a second; 3 s leaves room for one lost SYN (retransmitted after 1 s).
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

    /// A sender under `policy` whose attempts wait at most `timeout` for the answer (its
    /// status and excerpt, counted from the end of the lookup), and at most
    /// [`WebhookSender::DEFAULT_CONNECT_TIMEOUT`] of it for the connection.
    pub fn new(policy: UrlPolicy, timeout: Duration) -> WebhookSender {
        WebhookSender {
            policy,
            timeout,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            #[cfg(test)]
            read_internal_bodies: false,
        }
    }

    /// The same sender with another connect time-out (TCP and TLS handshakes).
    pub fn with_connect_timeout(mut self, connect_timeout: Duration) -> WebhookSender {
        self.connect_timeout = connect_timeout;
        self
    }

    /// The URL policy.
    pub fn policy(&self) -> &UrlPolicy {
        &self.policy
    }

    /// The answer time-out of one attempt.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The connect time-out of one attempt.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The longest one attempt may take: its lookup and answer time-outs.
    pub fn max_attempt(&self) -> Duration {
        self.policy.lookup_timeout() + self.timeout
    }

    /// Posts `body` (exactly these bytes) to `target` with the Standard Webhooks headers for
    /// `message_id`, signed with every secret in `secrets`, and reports the attempt. Never
    /// fails: every problem is in the report.
    pub async fn deliver(
        &self,
        target: &Url,
        message_id: &str,
        body: &[u8],
        secrets: &[WebhookSecret],
    ) -> DeliveryReport {
        self.attempt(target, message_id, body, body, secrets).await
    }

    /// Like [`WebhookSender::deliver`], but signs `signed_body` and sends `sent_body`: a body
    /// tampered with on the way, for tests of receivers.
    #[cfg(any(test, feature = "testing"))]
    pub async fn deliver_tampered(
        &self,
        target: &Url,
        message_id: &str,
        sent_body: &[u8],
        signed_body: &[u8],
        secrets: &[WebhookSecret],
    ) -> DeliveryReport {
        self.attempt(target, message_id, sent_body, signed_body, secrets)
            .await
    }

    async fn attempt(
        &self,
        target: &Url,
        message_id: &str,
        sent_body: &[u8],
        signed_body: &[u8],
        secrets: &[WebhookSecret],
    ) -> DeliveryReport {
        let attempted_at = OffsetDateTime::now_utc();
        let started = Instant::now();
        let outcome = match WebhookHeaders::sign(
            message_id,
            attempted_at.unix_timestamp(),
            signed_body,
            secrets,
        ) {
            Ok(headers) => self.post(target, &headers, sent_body).await,
            Err(error) => DeliveryOutcome::Failed(DeliveryError::Unsigned(error)),
        };
        let report = DeliveryReport {
            attempted_at,
            duration: started.elapsed(),
            outcome,
        };
        tracing::debug!(
            message_id,
            host = target.host_str().unwrap_or(""),
            delivered = report.delivered(),
            status = report.status(),
            duration_ms = report.duration.as_millis() as u64,
            error = report.error().map(tracing::field::display),
            "webhook attempt"
        );
        report
    }

    async fn post(&self, url: &Url, headers: &WebhookHeaders, body: &[u8]) -> DeliveryOutcome {
        let failed = DeliveryOutcome::Failed;
        // The lookup ends within the policy's own time-out.
        let checked = match self.policy.resolve(url).await {
            Ok(checked) => checked,
            Err(error) => return failed(DeliveryError::Refused(error)),
        };
        // The connection has its own, shorter time-out (in the client), within the answer's.
        let deadline = Instant::now() + self.timeout;
        #[cfg(not(test))]
        let keep_body = !checked.internal();
        #[cfg(test)]
        let keep_body = self.read_internal_bodies || !checked.internal();
        let client = match pinned_client(&checked, self.connect_timeout) {
            Ok(client) => client,
            Err(error) => return failed(DeliveryError::Connect(describe(error))),
        };
        let mut request = client
            .post(checked.url)
            .header(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_JSON));
        for (name, value) in headers.pairs() {
            request = request.header(name, value);
        }
        let mut response = match timeout_at(deadline, request.body(body.to_vec()).send()).await {
            Ok(Ok(response)) => response,
            Ok(Err(error)) if error.is_connect() && error.is_timeout() => {
                return failed(DeliveryError::ConnectTimeout(self.connect_timeout))
            }
            Ok(Err(error)) if error.is_connect() => {
                return failed(DeliveryError::Connect(describe(error)))
            }
            Ok(Err(error)) if error.is_timeout() => {
                return failed(DeliveryError::Timeout(self.timeout))
            }
            Ok(Err(error)) => return failed(DeliveryError::Network(describe(error))),
            Err(_) => return failed(DeliveryError::Timeout(self.timeout)),
        };
        let status = response.status().as_u16();
        if !keep_body {
            // Loopback or private: the status only, never a byte of what the host answered.
            return DeliveryOutcome::Responded {
                status,
                body_excerpt: None,
            };
        }
        // Only the first bytes are read; a body that is slow or endless is cut at the deadline
        // or at EXCERPT_BYTES, and the connection is dropped with the client.
        let mut first = Vec::new();
        while first.len() < EXCERPT_BYTES {
            match timeout_at(deadline, response.chunk()).await {
                Ok(Ok(Some(chunk))) => first.extend_from_slice(&chunk),
                _ => break,
            }
        }
        DeliveryOutcome::Responded {
            status,
            body_excerpt: Some(excerpt(&first)),
        }
    }
}

/// A client for one delivery: no redirects, no proxy, no pool, no name resolution except the
/// checked addresses of the target's host, and `connect_timeout` on the TCP and TLS handshakes.
fn pinned_client(
    target: &CheckedTarget,
    connect_timeout: Duration,
) -> reqwest::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(USER_AGENT)
        .pool_max_idle_per_host(0)
        .dns_resolver(Arc::new(NoLookup));
    if let Some((host, addresses)) = &target.pinned {
        // Port 0: the URL's port (or the scheme's) is used.
        let addresses: Vec<SocketAddr> =
            addresses.iter().map(|ip| SocketAddr::new(*ip, 0)).collect();
        builder = builder.resolve_to_addrs(host, &addresses);
    }
    builder.build()
}

/// Refuses every lookup: a delivery's client connects only to its pinned addresses.
struct NoLookup;

impl ReqwestResolve for NoLookup {
    fn resolve(&self, name: Name) -> Resolving {
        let message = format!("{} was not checked: no lookup allowed", name.as_str());
        Box::pin(std::future::ready(Err::<Addrs, _>(message.into())))
    }
}

/// A reqwest error and its causes, without the URL (which may hold a merchant's token).
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
}

/// The first [`EXCERPT_BYTES`] bytes as lossy UTF-8, tabs and line breaks as spaces, other
/// control characters removed.
fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(EXCERPT_BYTES)];
    String::from_utf8_lossy(cut)
        .chars()
        .filter_map(|c| match c {
            '\t' | '\n' | '\r' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::url_policy::{AddressKind, StaticResolver};
    use checkout_domain::Environment;
    use std::net::IpAddr;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    fn secret() -> WebhookSecret {
        WebhookSecret::generate().unwrap()
    }

    fn sandbox(timeout: Duration) -> WebhookSender {
        WebhookSender::new(UrlPolicy::new(Environment::Sandbox), timeout)
    }

    /// A sandbox sender that reads loopback answers' bodies, to test the excerpt.
    fn reading(timeout: Duration) -> WebhookSender {
        WebhookSender {
            read_internal_bodies: true,
            ..sandbox(timeout)
        }
    }

    /// A one-shot raw HTTP server on loopback that answers `answer` and hands back the request.
    async fn one_shot(ip: &str, answer: &'static [u8]) -> (u16, tokio::task::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind((ip, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // Read until the headers and the Content-Length body have arrived.
            loop {
                let n = stream.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            stream.write_all(answer).await.unwrap();
            stream.shutdown().await.ok();
            request
        });
        (port, task)
    }

    #[test]
    fn excerpts_are_cut_lossy_and_without_control_characters() {
        assert_eq!(excerpt(b"ok"), "ok");
        assert_eq!(excerpt(b"a\r\nb\tc\x00\x1b[31md\x7f"), "a  b c[31md");
        assert_eq!(excerpt(&[b'x', 0xff, b'y']), "x\u{fffd}y");
        assert_eq!(excerpt(&[b'z'; 1000]).len(), EXCERPT_BYTES);
        // A character cut at the limit becomes one replacement character.
        let mut long = vec![b'a'; EXCERPT_BYTES - 1];
        long.extend_from_slice("é".as_bytes());
        assert_eq!(excerpt(&long).chars().last(), Some('\u{fffd}'));
    }

    #[test]
    fn reports_say_what_happened() {
        let at = OffsetDateTime::UNIX_EPOCH;
        let ok = DeliveryReport {
            attempted_at: at,
            duration: Duration::from_millis(12),
            outcome: DeliveryOutcome::Responded {
                status: 204,
                body_excerpt: Some(String::new()),
            },
        };
        assert!(ok.delivered());
        assert_eq!(ok.status(), Some(204));
        assert_eq!(ok.to_string(), "HTTP 204 after 12 ms: \"\"");
        for status in [199, 300, 302, 404, 500] {
            let mut r = ok.clone();
            r.outcome = DeliveryOutcome::Responded {
                status,
                body_excerpt: Some("x".into()),
            };
            assert!(!r.delivered(), "{status}");
        }
        let timeout = DeliveryReport {
            outcome: DeliveryOutcome::Failed(DeliveryError::Timeout(Duration::from_secs(2))),
            ..ok
        };
        assert!(!timeout.delivered());
        assert_eq!(timeout.status(), None);
        assert_eq!(
            timeout.to_string(),
            "no answer within 2000 ms (after 12 ms)"
        );
    }

    #[tokio::test]
    async fn the_request_carries_the_headers_and_the_exact_body() {
        let (port, server) = one_shot(
            "127.0.0.1",
            b"HTTP/1.1 202 Accepted\r\ncontent-length: 4\r\n\r\nthx\n",
        )
        .await;
        let secrets = [secret(), secret()];
        let body = br#"{"id":"e1","type":"payment.succeeded"}"#;
        let url: Url = format!("http://127.0.0.1:{port}/hooks?m=1")
            .parse()
            .unwrap();
        let report = reading(Duration::from_secs(5))
            .deliver(&url, "e1", body, &secrets)
            .await;
        assert!(report.delivered(), "{report}");
        assert_eq!(report.status(), Some(202));
        assert_eq!(report.body_excerpt(), Some("thx "));
        let request = String::from_utf8(server.await.unwrap()).unwrap();
        let (head, sent) = request.split_once("\r\n\r\n").unwrap();
        assert_eq!(sent.as_bytes(), body);
        let header = |name: &str| {
            head.lines()
                .find_map(|l| {
                    let (n, v) = l.split_once(':')?;
                    n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
                })
                .unwrap_or_default()
        };
        assert!(head.starts_with("POST /hooks?m=1 HTTP/1.1\r\n"), "{head}");
        assert_eq!(header("webhook-id"), "e1");
        assert_eq!(
            header("webhook-timestamp"),
            report.attempted_at.unix_timestamp().to_string()
        );
        assert_eq!(header("content-type"), "application/json");
        assert_eq!(header("user-agent"), USER_AGENT);
        let signature = header("webhook-signature");
        assert_eq!(signature.split(' ').count(), 2);
        for s in &secrets {
            crate::signature::verify::verify(
                s,
                "e1",
                &header("webhook-timestamp"),
                &signature,
                body,
                report.attempted_at.unix_timestamp(),
            )
            .unwrap();
        }
    }

    #[tokio::test]
    async fn the_connection_goes_to_the_checked_address_only() {
        // `localhost` resolves, in this test's resolver only, to 127.0.0.2, where the one
        // server listens; the system's resolver would say 127.0.0.1 or ::1, where nothing does.
        let (port, server) =
            one_shot("127.0.0.2", b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await;
        let resolver = Arc::new(
            StaticResolver::new().with("localhost", &["127.0.0.2".parse::<IpAddr>().unwrap()]),
        );
        let sender = WebhookSender::new(
            UrlPolicy::new(Environment::Sandbox).with_resolver(resolver.clone()),
            Duration::from_secs(5),
        );
        let url: Url = format!("http://localhost:{port}/").parse().unwrap();
        let report = sender.deliver(&url, "e1", b"{}", &[secret()]).await;
        assert!(report.delivered(), "{report}");
        assert_eq!(resolver.lookups(), 1);
        server.await.unwrap();
    }

    #[tokio::test]
    async fn a_host_resolving_to_a_refused_address_is_not_contacted() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        // In production, with the name pointing at loopback (a rebinding attack's second
        // answer): refused before any connection.
        let resolver = Arc::new(StaticResolver::new().with(
            "merchant.example",
            &[
                "93.184.216.34".parse().unwrap(),
                "127.0.0.1".parse().unwrap(),
            ],
        ));
        let sender = WebhookSender::new(
            UrlPolicy::new(Environment::Production).with_resolver(resolver),
            Duration::from_secs(5),
        );
        let url: Url = format!("https://merchant.example:{port}/").parse().unwrap();
        let report = sender.deliver(&url, "e1", b"{}", &[secret()]).await;
        assert!(matches!(
            report.error(),
            Some(DeliveryError::Refused(UrlError::ForbiddenAddress {
                kind: AddressKind::Loopback,
                ..
            }))
        ));
        assert_eq!(
            report.error().unwrap().to_string(),
            "not sent: the URL must not point to a loopback address"
        );
        // Nothing connected.
        let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
        assert!(accepted.is_err());

        let http: Url = format!("http://127.0.0.1:{port}/").parse().unwrap();
        let report = sender.deliver(&http, "e1", b"{}", &[secret()]).await;
        assert_eq!(
            report.error(),
            Some(&DeliveryError::Refused(UrlError::NotHttps))
        );
    }

    #[tokio::test]
    async fn an_unsignable_message_is_not_sent() {
        let url: Url = "http://127.0.0.1:9/".parse().unwrap();
        let sender = sandbox(Duration::from_secs(1));
        let report = sender.deliver(&url, "a.b", b"{}", &[secret()]).await;
        assert_eq!(
            report.error(),
            Some(&DeliveryError::Unsigned(SignError::InvalidMessageId))
        );
        let report = sender.deliver(&url, "e1", b"{}", &[]).await;
        assert_eq!(
            report.error(),
            Some(&DeliveryError::Unsigned(SignError::NoSecret))
        );
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_connect_error() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url: Url = format!("http://127.0.0.1:{port}/").parse().unwrap();
        let report = sandbox(Duration::from_secs(5))
            .deliver(&url, "e1", b"{}", &[secret()])
            .await;
        match report.error() {
            Some(DeliveryError::Connect(text)) => {
                assert!(!text.contains("127.0.0.1:"), "no URL: {text}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn an_endless_answer_is_cut_at_the_excerpt() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf).await;
            let _ = stream
                .write_all(b"HTTP/1.1 500 Oops\r\ntransfer-encoding: chunked\r\n\r\n")
                .await;
            loop {
                if stream.write_all(b"400\r\n").await.is_err()
                    || stream.write_all(&[b'e'; 1024]).await.is_err()
                    || stream.write_all(b"\r\n").await.is_err()
                {
                    break;
                }
            }
        });
        let url: Url = format!("http://127.0.0.1:{port}/").parse().unwrap();
        let report = reading(Duration::from_secs(5))
            .deliver(&url, "e1", b"{}", &[secret()])
            .await;
        assert_eq!(report.status(), Some(500));
        assert_eq!(report.body_excerpt().unwrap(), "e".repeat(EXCERPT_BYTES));
        assert!(report.duration < Duration::from_secs(4), "{report}");
    }

    #[tokio::test]
    async fn no_byte_of_a_loopback_answer_is_kept() {
        for ip in ["127.0.0.1", "127.0.0.2"] {
            let (port, server) = one_shot(
                ip,
                b"HTTP/1.1 200 OK\r\ncontent-length: 21\r\n\r\nINTERNAL-TOKEN-abc123",
            )
            .await;
            let url: Url = format!("http://{ip}:{port}/").parse().unwrap();
            let report = sandbox(Duration::from_secs(5))
                .deliver(&url, "e1", b"{}", &[secret()])
                .await;
            assert_eq!(report.status(), Some(200), "{report}");
            assert_eq!(report.body_excerpt(), None, "{report}");
            assert!(!report.to_string().contains("INTERNAL"), "{report}");
            server.await.unwrap();
        }
    }

    #[tokio::test]
    async fn a_host_that_takes_no_connection_is_given_up_at_the_connect_time_out() {
        // A listener whose backlog is full: further SYNs are not answered, so a connection
        // neither succeeds nor is refused (on Linux, the SYN is dropped).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut held = Vec::new();
        for _ in 0..5000 {
            if let Ok(Ok(stream)) = tokio::time::timeout(
                Duration::from_millis(50),
                tokio::net::TcpStream::connect(("127.0.0.1", port)),
            )
            .await
            {
                held.push(stream);
            } else {
                break;
            }
        }
        let sender =
            sandbox(Duration::from_secs(10)).with_connect_timeout(Duration::from_millis(300));
        let url: Url = format!("http://127.0.0.1:{port}/").parse().unwrap();
        let report = sender.deliver(&url, "e1", b"{}", &[secret()]).await;
        drop((listener, held));
        eprintln!("a full backlog: {report}");
        match report.error() {
            Some(DeliveryError::ConnectTimeout(limit)) => {
                assert_eq!(*limit, Duration::from_millis(300));
                assert!(report.duration < Duration::from_secs(3), "{report}");
                assert_eq!(
                    report.error().unwrap().to_string(),
                    "cannot connect within 300 ms"
                );
            }
            // Where the stack answers a full backlog with a reset, the connect is refused
            // quickly: the point (no wait for the answer time-out) holds either way.
            Some(DeliveryError::Connect(_)) => {
                assert!(report.duration < Duration::from_secs(3), "{report}")
            }
            other => panic!("{other:?}: {report}"),
        }
    }
}
