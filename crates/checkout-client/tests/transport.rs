//! The client against a scripted HTTP server on loopback: retries under one idempotency key
//! and one operation id, `Retry-After`, the token's renewals, errors, what is never sent
//! again, amounts refused before sending, the events feed's cursor, and the call's span.
//! (The tests against the real service are in `crates/checkout-server/tests/sdk/`.)

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use checkout_client::{
    CallOptions, Client, Currency, Error, EventType, Item, Money, RetryPolicy, StartPaymentRequest,
    SvcCode,
};
use rust_decimal::Decimal;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request as the scripted server received it.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    /// The path with its query.
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the scripted server does with a request.
enum Answer {
    /// Answers with a status, extra headers and a body.
    With(u16, Vec<(&'static str, String)>, String),
    /// Closes the connection without answering.
    Drop,
}

fn ok(body: serde_json::Value) -> Answer {
    Answer::With(200, vec![], body.to_string())
}

fn problem(status: u16, body: serde_json::Value) -> Answer {
    Answer::With(
        status,
        vec![("content-type", "application/problem+json".into())],
        body.to_string(),
    )
}

type Script = dyn Fn(&Received, &[Received]) -> Answer + Send + Sync;

/// A server that answers each request as `script` says (given the request and every
/// request received before it) and records them all.
struct Scripted {
    base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Scripted {
    async fn start(
        script: impl Fn(&Received, &[Received]) -> Answer + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let log = received.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, script.clone(), log.clone()));
            }
        });
        Scripted { base, received }
    }

    fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    fn to(&self, path: &str) -> Vec<Received> {
        self.requests()
            .into_iter()
            .filter(|r| r.target.split('?').next() == Some(path))
            .collect()
    }

    fn client(&self) -> Client {
        Client::builder(&self.base, "merchant-1", "s3cr3t-value")
            .retry_policy(fast())
            .build()
            .unwrap()
    }
}

fn fast() -> RetryPolicy {
    RetryPolicy::default()
        .initial_backoff(Duration::from_millis(5))
        .max_backoff(Duration::from_millis(20))
}

async fn serve(mut stream: TcpStream, script: Arc<Script>, log: Arc<Mutex<Vec<Received>>>) {
    let mut buffer = Vec::new();
    loop {
        let Some(request) = read_request(&mut stream, &mut buffer).await else {
            return;
        };
        let answer = {
            let mut log = log.lock().unwrap();
            let answer = script(&request, &log);
            log.push(request);
            answer
        };
        match answer {
            Answer::Drop => return,
            Answer::With(status, headers, body) => {
                let mut head = format!(
                    "HTTP/1.1 {status} Scripted\r\ncontent-length: {}\r\n",
                    body.len()
                );
                if !headers.iter().any(|(n, _)| *n == "content-type") {
                    head.push_str("content-type: application/json\r\n");
                }
                for (name, value) in headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                if stream.write_all(head.as_bytes()).await.is_err()
                    || stream.write_all(body.as_bytes()).await.is_err()
                {
                    return;
                }
            }
        }
    }
}

/// Reads one request (head and `content-length` body) from `stream`, parsed by `httparse`.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Received> {
    loop {
        if let Some((request, used)) = parse_request(buffer)? {
            buffer.drain(..used);
            return Some(request);
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// The whole request at the front of `buffer` and its length; `Some(None)` while it is not
/// whole yet, `None` when it is not HTTP.
fn parse_request(buffer: &[u8]) -> Option<Option<(Received, usize)>> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut headers);
    let httparse::Status::Complete(head) = request.parse(buffer).ok()? else {
        return Some(None);
    };
    let length: usize = request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.parse().ok())
        .unwrap_or(0);
    let headers = request.headers.iter().map(|h| {
        let value = String::from_utf8_lossy(h.value).into_owned();
        (h.name.to_ascii_lowercase(), value)
    });
    if buffer.len() < head + length {
        return Some(None);
    }
    let received = Received {
        method: request.method?.to_owned(),
        target: request.path?.to_owned(),
        headers: headers.collect(),
        body: buffer[head..head + length].to_vec(),
    };
    Some(Some((received, head + length)))
}

const TOKEN: &str = "/api/public/security/auth";

/// Tokens `t1`, `t2`... valid `expires_in` seconds each.
fn token(previous: &[Received], expires_in: u64) -> Answer {
    let n = previous.iter().filter(|r| r.target == TOKEN).count() + 1;
    ok(json!({ "token": format!("t{n}"), "expiresIn": expires_in }))
}

fn status_record(id: &str, state: &str) -> serde_json::Value {
    json!({
        "checkoutSessionId": id, "state": state, "stateCode": 1,
        "sessionType": "IntegratedCheckout", "transactionReferenceNumber": "ORDER-1",
        "internalTransactionReferenceNumber": "IN-1", "terminalNumber": "SANDBOX-001",
        "totalTransactionAmount": 25.50, "currencyCode": "USD",
        "creationDateTime": "2026-11-23T11:30:00Z", "lastUpdateDateTime": "2026-11-23T11:32:10Z",
        "expirationDateTime": "2026-11-23T12:30:00Z", "capturedAmount": 25.50,
        "refundedAmount": 0.00, "attempts": [], "disputes": []
    })
}

fn checkout_request() -> StartPaymentRequest {
    StartPaymentRequest::new(
        "ORDER-1",
        Money::new(Decimal::new(2550, 2), Currency::USD).unwrap(),
        "https://merchant.example/ok",
        "https://merchant.example/fail",
    )
}

#[tokio::test]
async fn a_post_is_sent_again_with_the_same_key_and_operation_id_after_503_and_a_dropped_connection(
) {
    let server = Scripted::start(|request, previous| {
        if request.target == TOKEN {
            return token(previous, 3600);
        }
        match previous.iter().filter(|r| r.target != TOKEN).count() {
            0 => problem(503, json!({"type": "https://tools.ietf.org/html/rfc7231#section-6.6.4", "title": "Service Unavailable", "status": 503, "detail": "", "instance": "x"})),
            1 => Answer::Drop,
            _ => ok(json!({
                "checkoutSessionId": "s-1", "internalTransactionReferenceNumber": "IN-1",
                "expirationDateTime": "2026-11-23T12:30:00Z"
            })),
        }
    })
    .await;
    let client = server.client();
    let created = client.start_payment(&checkout_request()).await.unwrap();
    assert_eq!(created.checkout_session_id, "s-1");

    let sent = server.to("/pay/api/start-payment");
    assert_eq!(sent.len(), 3);
    let key = sent[0].header("idempotency-key").unwrap();
    let operation = sent[0].header("x-idoperacion").unwrap();
    assert_eq!(key.len(), 36, "a UUID");
    for request in &sent {
        assert_eq!(request.method, "POST");
        assert_eq!(request.header("idempotency-key"), Some(key));
        assert_eq!(request.header("x-idoperacion"), Some(operation));
        assert_eq!(request.header("authorization"), Some("Bearer t1"));
        assert_eq!(request.body, sent[0].body, "the same bytes each time");
    }
    let body = String::from_utf8(sent[0].body.clone()).unwrap();
    assert!(
        body.contains(r#""totalTransactionAmount":25.50,"currencyCode":"USD""#),
        "{body}"
    );

    // The next call is another logical call: another key and operation id.
    let again = client.start_payment(&checkout_request()).await.unwrap();
    assert_eq!(again.checkout_session_id, "s-1");
    let sent = server.to("/pay/api/start-payment");
    assert_ne!(sent[3].header("idempotency-key"), Some(key));
    assert_ne!(sent[3].header("x-idoperacion"), Some(operation));

    // A caller's key and operation id are sent as given.
    client
        .with_options(
            CallOptions::new()
                .idempotency_key("ORDER-1-try")
                .operation_id("ticket-42"),
        )
        .start_payment(&checkout_request())
        .await
        .unwrap();
    let last = server.to("/pay/api/start-payment").pop().unwrap();
    assert_eq!(last.header("idempotency-key"), Some("ORDER-1-try"));
    assert_eq!(last.header("x-idoperacion"), Some("ticket-42"));
    // One token for all of it; reads carry no key.
    assert_eq!(server.to(TOKEN).len(), 1);
    assert_eq!(client.tokens_fetched(), 1);
}

#[tokio::test]
async fn retry_after_is_honoured_within_the_policy_and_409_and_429_are_retried() {
    let server = Scripted::start(|request, previous| {
        if request.target == TOKEN {
            return token(previous, 3600);
        }
        let before = previous.iter().filter(|r| r.target != TOKEN).count();
        match (request.target.as_str(), before) {
            (_, 0) => Answer::With(429, vec![("retry-after", "1".into())], "{}".into()),
            (_, 1) => problem(409, json!({"type": "https://tools.ietf.org/html/rfc7231#section-6.5.8", "title": "Conflict", "status": 409, "detail": "still running", "instance": "y"})),
            ("/pay/api/payment/s-1", _) => ok(status_record("s-1", "Successful")),
            _ => Answer::With(429, vec![("retry-after", "120".into())], "{}".into()),
        }
    })
    .await;
    let client = server.client();
    let started = Instant::now();
    let status = client.payment_status("s-1").await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited for Retry-After"
    );
    assert_eq!(status.total_transaction_amount, Decimal::new(2550, 2));
    assert_eq!(server.to("/pay/api/payment/s-1").len(), 3);

    // A Retry-After beyond the policy's limit ends the retries at once.
    let started = Instant::now();
    let error = client.payment_status("s-2").await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let Error::Api(answer) = error else {
        panic!("{error:?}")
    };
    assert_eq!(answer.status, 429);
    assert_eq!(answer.retry_after, Some(Duration::from_secs(120)));
    assert_eq!(answer.attempts, 1);
}

#[tokio::test]
async fn attempts_are_bounded() {
    let server = Scripted::start(|request, previous| {
        if request.target == TOKEN {
            return token(previous, 3600);
        }
        problem(503, json!({"type": "about:blank", "title": "Service Unavailable", "status": 503, "detail": "down", "instance": "z"}))
    })
    .await;
    let client = Client::builder(&server.base, "merchant-1", "s3cr3t-value")
        .retry_policy(fast().max_attempts(3))
        .build()
        .unwrap();
    let error = client.refunds("s-1").await.unwrap_err();
    assert_eq!(error.status(), Some(503));
    assert_eq!(error.problem().unwrap().detail, "down");
    assert_eq!(server.to("/pay/api/payment/s-1/refunds").len(), 3);
    let never = Client::builder(&server.base, "merchant-1", "s3cr3t-value")
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();
    assert!(never.refunds("s-1").await.is_err());
    assert_eq!(server.to("/pay/api/payment/s-1/refunds").len(), 4);
}

#[tokio::test]
async fn a_401_renews_the_token_once() {
    let server = Scripted::start(|request, previous| {
        if request.target == TOKEN {
            return token(previous, 3600);
        }
        let refused = problem(401, json!({"type": "https://tools.ietf.org/html/rfc7235#section-3.1", "title": "Unauthorized", "status": 401, "detail": "The token has expired.", "instance": "u"}));
        match (request.target.as_str(), request.header("authorization")) {
            ("/pay/api/payment/s-1", Some("Bearer t2")) => ok(status_record("s-1", "Pending")),
            _ => refused,
        }
    })
    .await;
    let client = server.client();
    let status = client.payment_status("s-1").await.unwrap();
    assert_eq!(status.state, checkout_client::PaymentState::Pending);
    assert_eq!(client.tokens_fetched(), 2);
    let sent = server.to("/pay/api/payment/s-1");
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0].header("x-idoperacion"),
        sent[1].header("x-idoperacion"),
        "one call"
    );

    // Refused again after the renewal: the 401 is the answer, after one renewal only.
    let error = client.payment_status("s-9").await.unwrap_err();
    assert_eq!(error.status(), Some(401));
    assert_eq!(server.to("/pay/api/payment/s-9").len(), 2);
    assert_eq!(client.tokens_fetched(), 3);

    // Wrong credentials: the token route's 401, once, with its problem.
    let refusing = Scripted::start(|_, _| {
        problem(401, json!({"type": "https://tools.ietf.org/html/rfc7235#section-3.1", "title": "Unauthorized", "status": 401, "detail": "Invalid client credentials.", "instance": "v"}))
    })
    .await;
    let error = refusing.client().payment_status("s-1").await.unwrap_err();
    assert_eq!(
        error.problem().unwrap().detail,
        "Invalid client credentials."
    );
    assert_eq!(refusing.requests().len(), 1);
    let body: serde_json::Value = serde_json::from_slice(&refusing.requests()[0].body).unwrap();
    assert_eq!(
        body,
        json!({"client_id": "merchant-1", "client_secret": "s3cr3t-value"})
    );
}

#[tokio::test]
async fn a_token_is_renewed_before_it_expires() {
    let server = Scripted::start(|request, previous| {
        if request.target == TOKEN {
            return token(previous, 1);
        }
        ok(status_record("s-1", "Pending"))
    })
    .await;
    let client = server.client();
    client.payment_status("s-1").await.unwrap();
    client.payment_status("s-1").await.unwrap();
    assert_eq!(client.tokens_fetched(), 1);
    // A fifth of a 1 s lifetime is left after 0.8 s: renewed then, before it expires.
    tokio::time::sleep(Duration::from_millis(850)).await;
    client.payment_status("s-1").await.unwrap();
    assert_eq!(client.tokens_fetched(), 2);
    let auth: Vec<Option<String>> = server
        .to("/pay/api/payment/s-1")
        .iter()
        .map(|r| r.header("authorization").map(str::to_owned))
        .collect();
    assert_eq!(
        auth,
        vec![
            Some("Bearer t1".into()),
            Some("Bearer t1".into()),
            Some("Bearer t2".into())
        ]
    );
    // Clones share the cache.
    client.clone().payment_status("s-1").await.unwrap();
    assert_eq!(server.to(TOKEN).len(), 2);
}

#[tokio::test]
async fn problems_become_typed_errors() {
    let server = Scripted::start(|request, previous| {
        if request.target == TOKEN {
            return token(previous, 3600);
        }
        match request.target.as_str() {
            "/pay/api/start-payment" => problem(422, json!({
                "type": "SVC_001", "title": "Payment session already exists", "status": 422,
                "detail": "The payment session already exists.", "instance": "i-1",
                "checkoutSessionId": "s-0"
            })),
            "/pay/api/payment/s-1/capture" => problem(400, json!({
                "type": "https://tools.ietf.org/html/rfc7231#section-6.5.1", "title": "Validation failed",
                "status": 400, "detail": "One or more fields are invalid.", "instance": "i-2",
                "errors": {"Amount": ["must be greater than 0"]}
            })),
            "/pay/api/payment/s-1/void" => problem(422, json!({
                "type": "SVC_099", "title": "New", "status": 422, "detail": "", "instance": "i-3"
            })),
            _ => Answer::With(502, vec![("content-type", "text/html".into())], "<h1>Bad gateway</h1>".into()),
        }
    })
    .await;
    let client = server.client();
    let duplicate = client.start_payment(&checkout_request()).await.unwrap_err();
    assert_eq!(duplicate.svc_code(), Some(SvcCode::Svc001));
    assert_eq!(duplicate.status(), Some(422));
    let problem = duplicate.problem().unwrap();
    assert_eq!(problem.checkout_session_id.as_deref(), Some("s-0"));
    assert_eq!(problem.instance, "i-1");
    assert_eq!(
        duplicate.operation_id(),
        server.to("/pay/api/start-payment")[0].header("x-idoperacion")
    );
    assert!(duplicate.to_string().contains("SVC_001"), "{duplicate}");

    let invalid = client
        .capture(
            "s-1",
            Some(Money::new(Decimal::ONE, Currency::USD).unwrap()),
        )
        .await
        .unwrap_err();
    assert!(invalid.problem().unwrap().is_validation());
    assert_eq!(
        invalid.problem().unwrap().errors["Amount"],
        vec!["must be greater than 0".to_owned()]
    );
    assert_eq!(invalid.svc_code(), None);

    let unknown = client.void("s-1").await.unwrap_err();
    assert_eq!(unknown.svc_code(), Some(SvcCode::Unknown("SVC_099".into())));

    let gateway = client.refunds("s-1").await.unwrap_err();
    assert_eq!(gateway.status(), Some(502));
    assert_eq!(gateway.problem().unwrap().detail, "<h1>Bad gateway</h1>");
    assert_eq!(
        server.to("/pay/api/payment/s-1/refunds").len(),
        1,
        "502 is not retried"
    );
}

#[tokio::test]
async fn posts_the_service_does_not_deduplicate_are_not_sent_again_after_a_lost_answer() {
    let server = Scripted::start(|request, previous| {
        if request.target == TOKEN {
            return token(previous, 3600);
        }
        Answer::Drop
    })
    .await;
    let client = server.client();
    let error = client
        .create_webhook_endpoint(
            "https://merchant.example/hooks",
            Some(&[EventType::PaymentSucceeded]),
        )
        .await
        .unwrap_err();
    let Error::Network(network) = &error else {
        panic!("{error:?}")
    };
    assert_eq!(network.attempts(), 1);
    assert_eq!(server.to("/pay/api/webhook-endpoints").len(), 1);
    let sent = &server.to("/pay/api/webhook-endpoints")[0];
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&sent.body).unwrap(),
        json!({"url": "https://merchant.example/hooks", "events": ["payment.succeeded"]})
    );
    assert!(sent.header("idempotency-key").is_some());
    // A read is sent again.
    assert!(client.webhook_endpoints().await.is_err());
    assert_eq!(server.to("/pay/api/webhook-endpoints").len(), 1 + 4);

    // Nothing listens: never received, so sent again up to the policy's attempts.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let closed = Client::builder(&format!("http://127.0.0.1:{port}"), "m", "s")
        .retry_policy(fast())
        .build()
        .unwrap();
    let error = closed.payment_status("s-1").await.unwrap_err();
    let Error::Network(network) = &error else {
        panic!("{error:?}")
    };
    assert!(network.is_connect());
    assert_eq!(network.attempts(), 4);
}

#[tokio::test]
async fn amounts_are_checked_before_anything_is_sent() {
    let server = Scripted::start(|_, _| Answer::With(500, vec![], "{}".into())).await;
    let client = server.client();
    let too_precise = checkout_request().item(Item::new("SKU", 1, "Mug", Decimal::new(1001, 3)));
    let error = client.start_payment(&too_precise).await.unwrap_err();
    let Error::InvalidRequest(invalid) = &error else {
        panic!("{error:?}")
    };
    assert!(
        invalid.message().contains("at most 2 decimal places"),
        "{error}"
    );
    let negative = checkout_request().item(Item::new("SKU", 1, "Mug", Decimal::new(-1, 0)));
    assert!(matches!(
        client.start_payment(&negative).await,
        Err(Error::InvalidRequest(_))
    ));
    assert!(Money::new(Decimal::new(15, 1), Currency::JPY).is_err());
    let bad_key = client
        .with_options(CallOptions::new().idempotency_key("two words"))
        .start_payment(&checkout_request())
        .await;
    assert!(matches!(bad_key, Err(Error::InvalidRequest(_))));
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

fn event(id: &str) -> serde_json::Value {
    json!({
        "id": id, "type": "payment.succeeded", "timestamp": "2026-11-23T11:32:10Z",
        "data": status_record("s-1", "Successful")
    })
}

#[tokio::test]
async fn the_events_feed_keeps_a_cursor_to_resume_from() {
    let server = Scripted::start(|request, previous| {
        if request.target == TOKEN {
            return token(previous, 3600);
        }
        match request.target.as_str() {
            "/pay/api/events?limit=2" => {
                ok(json!({"events": [event("e1"), event("e2")], "cursor": "10.2", "hasMore": true}))
            }
            "/pay/api/events?after=10.2&limit=2" => {
                ok(json!({"events": [event("e3")], "cursor": "10.3", "hasMore": false}))
            }
            "/pay/api/events?after=10.3&limit=2" => {
                ok(json!({"events": [], "cursor": "10.3", "hasMore": false}))
            }
            other => panic!("unexpected {other}"),
        }
    })
    .await;
    let client = server.client();
    let mut feed = client.events(None).page_size(2);
    assert_eq!(feed.cursor(), None);
    let first = feed.next_event().await.unwrap().unwrap();
    assert_eq!(first.id, "e1");
    assert_eq!(first.kind, EventType::PaymentSucceeded);
    // The page is not all handed out yet: resuming from here reads e1 again, never skips e2.
    assert_eq!(feed.cursor(), None);
    assert_eq!(feed.next_event().await.unwrap().unwrap().id, "e2");
    assert_eq!(feed.cursor(), Some("10.2"));
    let saved = feed.cursor().map(str::to_owned);

    let mut resumed = client.events(saved).page_size(2);
    let page = resumed.next_page().await.unwrap();
    assert_eq!(
        page.events
            .iter()
            .map(|e| e.id.as_str())
            .collect::<Vec<_>>(),
        ["e3"]
    );
    assert!(!page.has_more);
    assert_eq!(resumed.cursor(), Some("10.3"));
    assert!(resumed.next_event().await.unwrap().is_none(), "caught up");
    assert_eq!(resumed.cursor(), Some("10.3"));
    assert!(!resumed.has_more());
}

/// A writer into a shared buffer, for the log lines of one test.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn each_call_runs_in_a_span_with_its_operation_id_and_the_secret_is_never_logged() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (operation, key) = runtime.block_on(async {
        let server = Scripted::start(|request, previous| {
            if request.target == TOKEN {
                return token(previous, 3600);
            }
            if previous.iter().filter(|r| r.target != TOKEN).count() == 0 {
                return Answer::Drop;
            }
            ok(json!({
                "checkoutSessionId": "s-1", "internalTransactionReferenceNumber": "IN-1",
                "expirationDateTime": "2026-11-23T12:30:00Z"
            }))
        })
        .await;
        server
            .client()
            .start_payment(&checkout_request())
            .await
            .unwrap();
        let sent = server.to("/pay/api/start-payment");
        (
            sent[0].header("x-idoperacion").unwrap().to_owned(),
            sent[0].header("idempotency-key").unwrap().to_owned(),
        )
    });
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains(&format!("operation_id={operation}")),
        "the span names the operation id: {text}"
    );
    assert!(text.contains(&format!("idempotency_key={key}")), "{text}");
    assert!(
        text.contains("call=\"start_payment\"") || text.contains("call=start_payment"),
        "{text}"
    );
    assert!(
        text.contains("sending again"),
        "the retry is logged: {text}"
    );
    assert!(!text.contains("s3cr3t-value"), "{text}");
    assert!(!text.contains("Bearer"), "{text}");
}
