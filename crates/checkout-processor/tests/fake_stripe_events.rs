//! The fake Stripe's events and their delivery as signed webhooks to a real loopback HTTP
//! receiver: signatures, retries, duplicates, reordering; and the events of an expired
//! authorisation, a dispute and a late refund failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use checkout_processor::testing::fake_stripe::{
    Call, EventDelivery, FakeStripe, FakeStripeConfig, Fault, When,
};
use ring::hmac;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use url::Url;

const KEY: &str = "sk_test_fake";
const SECRET: &str = "whsec_test_fake_secret";
const VISA: &str = "4242424242424242";
const DECLINED: &str = "4000000000000002";
const THREE_DS: &str = "4000002760003184";
const REFUND_FAILS: &str = "4000000000005126";

// --- A webhook receiver on 127.0.0.1 ---------------------------------------------------------

/// One POST as the receiver got it.
#[derive(Clone, Debug)]
struct Received {
    at: Instant,
    headers: HashMap<String, String>,
    body: String,
    event: Value,
}

impl Received {
    fn id(&self) -> &str {
        self.event["id"].as_str().unwrap_or_default()
    }

    fn kind(&self) -> &str {
        self.event["type"].as_str().unwrap_or_default()
    }

    fn signature(&self) -> &str {
        self.headers.get("stripe-signature").unwrap()
    }
}

/// The status to answer for an event, given how many times its id was received before.
type Answer = dyn Fn(usize) -> u16 + Send + Sync;

/// A tiny HTTP server: reads one request per connection, records it, answers, closes.
struct Receiver {
    url: Url,
    log: Arc<Mutex<Vec<Received>>>,
    task: JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// A receiver that always answers 200.
    async fn ok() -> Receiver {
        Receiver::start(|_| 200).await
    }

    async fn start(answer: impl Fn(usize) -> u16 + Send + Sync + 'static) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!(
            "http://{}/webhooks/stripe",
            listener.local_addr().unwrap()
        ))
        .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let answer: Arc<Answer> = Arc::new(answer);
        let task = tokio::spawn(accept(listener, log.clone(), answer));
        Receiver { url, log, task }
    }

    fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }

    /// The ids received, in order of arrival.
    fn ids(&self) -> Vec<String> {
        self.received().iter().map(|r| r.id().to_owned()).collect()
    }

    fn of_kind(&self, kind: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.kind() == kind)
            .collect()
    }
}

async fn accept(listener: TcpListener, log: Arc<Mutex<Vec<Received>>>, answer: Arc<Answer>) {
    let mut connections = JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        while connections.try_join_next().is_some() {}
        connections.spawn(serve(stream, log.clone(), answer.clone()));
    }
}

async fn serve(mut stream: TcpStream, log: Arc<Mutex<Vec<Received>>>, answer: Arc<Answer>) {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf.split_off(head_end + 4);
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    assert!(
        request_line.starts_with("POST /webhooks/stripe "),
        "{request_line}"
    );
    let body = String::from_utf8(body).unwrap();
    let event: Value = serde_json::from_str(&body).unwrap();
    let status = {
        let mut log = log.lock().unwrap();
        let before = log.iter().filter(|r| r.event["id"] == event["id"]).count();
        log.push(Received {
            at: Instant::now(),
            headers,
            body,
            event,
        });
        answer(before)
    };
    let response =
        format!("HTTP/1.1 {status} Test\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

// --- Stripe's signature, recomputed ----------------------------------------------------------

/// The `t`, `v1` and `v0` of a `Stripe-Signature` header.
fn parts(header: &str) -> (i64, Vec<String>, Vec<String>) {
    let (mut t, mut v1, mut v0) = (None, Vec::new(), Vec::new());
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", value)) => t = value.parse().ok(),
            Some(("v1", value)) => v1.push(value.to_owned()),
            Some(("v0", value)) => v0.push(value.to_owned()),
            _ => panic!("unexpected part {part} in {header}"),
        }
    }
    (t.expect("a timestamp"), v1, v0)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sign(secret: &str, t: i64, body: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    hex(hmac::sign(&key, format!("{t}.{body}").as_bytes()).as_ref())
}

/// Whether `header` signs `body` with `secret`, as a receiver checks it: a `v1` equal to the
/// HMAC of `"<t>.<body>"`, `t` within five minutes; `v0` ignored.
fn verifies(header: &str, body: &str, secret: &str) -> bool {
    let (t, v1, _) = parts(header);
    let expected = sign(secret, t, body);
    (now() - t).abs() <= 300 && v1.contains(&expected)
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .try_into()
        .unwrap()
}

// --- The fake's API --------------------------------------------------------------------------

struct Api {
    http: reqwest::Client,
    base: Url,
}

impl Api {
    fn new(fake: &FakeStripe) -> Api {
        Api {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .no_proxy()
                .build()
                .unwrap(),
            base: fake.base_url.clone(),
        }
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        form: &[(&str, &str)],
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method.clone(), self.base.join(path).unwrap())
            .bearer_auth(KEY);
        if method == reqwest::Method::POST {
            request = request.form(form);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    async fn post(&self, path: &str, form: &[(&str, &str)]) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, form).await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, &[]).await
    }

    /// An intent of 10.00 USD confirmed with `number`: its id and the answer's body.
    async fn pay(&self, number: &str, extra: &[(&str, &str)]) -> (String, Value) {
        let card = [
            ("type", "card"),
            ("card[number]", number),
            ("card[exp_month]", "12"),
            ("card[exp_year]", "2099"),
            ("card[cvc]", "123"),
        ];
        let (status, pm) = self.post("v1/payment_methods", &card).await;
        assert_eq!(status, 200, "{pm}");
        let pm = pm["id"].as_str().unwrap();
        let mut form = vec![
            ("amount", "1000"),
            ("currency", "usd"),
            ("payment_method", pm),
            ("confirm", "true"),
        ];
        form.extend_from_slice(extra);
        let (_, intent) = self.post("v1/payment_intents", &form).await;
        // A decline (402) carries the intent in its error.
        let id = intent["id"]
            .as_str()
            .or(intent["error"]["payment_intent"]["id"].as_str())
            .unwrap();
        (id.to_owned(), intent)
    }

    /// An intent only authorised (`capture_method=manual`).
    async fn authorise(&self) -> String {
        let (id, intent) = self.pay(VISA, &[("capture_method", "manual")]).await;
        assert_eq!(intent["status"], "requires_capture", "{intent}");
        id
    }
}

async fn fake_with(config: FakeStripeConfig) -> FakeStripe {
    FakeStripe::start(config).await
}

async fn fake() -> FakeStripe {
    fake_with(FakeStripeConfig {
        list_delay: Duration::ZERO,
        ..FakeStripeConfig::default()
    })
    .await
}

/// Retries quickly, so that tests do not wait long.
fn quick() -> EventDelivery {
    EventDelivery {
        retry_base: Duration::from_millis(20),
        ..EventDelivery::default()
    }
}

/// Waits until `check` holds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(10), "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until every event of the fake after the first `skip` was answered a 2xx `copies`
/// times; returns their ids, oldest first.
async fn all_delivered(fake: &FakeStripe, skip: usize, copies: usize) -> Vec<String> {
    eventually("every event delivered", || {
        let deliveries = fake.deliveries();
        fake.events().iter().skip(skip).all(|event| {
            deliveries
                .iter()
                .filter(|d| d.event_id == event.id)
                .filter(|d| d.status.is_some_and(|s| (200..300).contains(&s)))
                .count()
                == copies
        })
    })
    .await;
    fake.events()
        .iter()
        .skip(skip)
        .map(|e| e.id.clone())
        .collect()
}

/// The types of the fake's events about `object`, oldest first.
fn kinds_of(fake: &FakeStripe, object: &str) -> Vec<String> {
    fake.events()
        .into_iter()
        .filter(|e| e.object_id == object)
        .map(|e| e.kind)
        .collect()
}

// --- Events ----------------------------------------------------------------------------------

#[tokio::test]
async fn every_change_of_an_intent_or_refund_is_an_event_with_the_object_at_that_moment() {
    let fake = fake().await;
    let api = Api::new(&fake);

    let (paid, _) = api.pay(VISA, &[]).await;
    assert_eq!(
        kinds_of(&fake, &paid),
        ["payment_intent.created", "payment_intent.succeeded"]
    );
    let events: Vec<_> = fake
        .events()
        .into_iter()
        .filter(|e| e.object_id == paid)
        .collect();
    assert_eq!(events[0].object["status"], "requires_confirmation");
    assert_eq!(events[1].object["status"], "succeeded");
    assert!(events
        .iter()
        .all(|e| e.id.starts_with("evt_") && e.created > 1_600_000_000));

    let (declined, _) = api.pay(DECLINED, &[]).await;
    assert_eq!(
        kinds_of(&fake, &declined),
        ["payment_intent.created", "payment_intent.payment_failed"]
    );

    let held = api.authorise().await;
    api.post(&format!("v1/payment_intents/{held}/capture"), &[])
        .await;
    assert_eq!(
        kinds_of(&fake, &held),
        [
            "payment_intent.created",
            "payment_intent.amount_capturable_updated",
            "payment_intent.succeeded"
        ]
    );

    let voided = api.authorise().await;
    api.post(&format!("v1/payment_intents/{voided}/cancel"), &[])
        .await;
    assert_eq!(
        kinds_of(&fake, &voided).last().map(String::as_str),
        Some("payment_intent.canceled")
    );

    let (challenged, _) = api.pay(THREE_DS, &[]).await;
    assert!(fake.complete_3ds(&challenged, true));
    assert_eq!(
        kinds_of(&fake, &challenged),
        [
            "payment_intent.created",
            "payment_intent.requires_action",
            "payment_intent.succeeded"
        ]
    );

    let (_, refund) = api.post("v1/refunds", &[("payment_intent", &paid)]).await;
    let refund_id = refund["id"].as_str().unwrap();
    assert_eq!(kinds_of(&fake, refund_id), ["refund.created"]);

    // A refused request changes nothing and so makes no event.
    let before = fake.events().len();
    let (status, _) = api
        .post(&format!("v1/payment_intents/{paid}/capture"), &[])
        .await;
    assert_eq!(status, 400);
    assert_eq!(fake.events().len(), before);
}

#[tokio::test]
async fn events_are_signed_with_the_endpoint_secret_and_only_later_ones_are_delivered() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let receiver = Receiver::ok().await;
    api.pay(VISA, &[]).await;
    let earlier = fake.events().len();
    assert_eq!(earlier, 2);

    fake.deliver_events_to(receiver.url.clone(), SECRET, quick());
    let (paid, _) = api.pay(VISA, &[]).await;
    let delivered = all_delivered(&fake, earlier, 1).await;
    assert_eq!(delivered.len(), 2);
    let mut ids = receiver.ids();
    ids.sort();
    let mut expected = delivered.clone();
    expected.sort();
    assert_eq!(ids, expected, "only the events after deliver_events_to");

    let events = fake.events();
    for received in receiver.received() {
        let headers = &received.headers;
        assert_eq!(
            headers.get("content-type").map(String::as_str),
            Some("application/json; charset=utf-8")
        );
        assert_eq!(
            headers.get("user-agent").map(String::as_str),
            Some("Stripe/1.0 (+https://stripe.com/docs/webhooks)")
        );
        let signature = received.signature();
        assert!(verifies(signature, &received.body, SECRET), "{signature}");
        assert!(!verifies(signature, &received.body, "whsec_wrong"));
        let tampered = received.body.replace("1000", "1");
        assert!(!verifies(signature, &tampered, SECRET));
        let (t, v1, v0) = parts(signature);
        assert_eq!((v1.len(), v0.len()), (1, 1), "{signature}");
        assert!(v1[0].len() == 64 && v1[0].chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')));
        assert_ne!(
            v0[0],
            sign(SECRET, t, &received.body),
            "v0 is not signed with the secret"
        );

        let event = &received.event;
        assert_eq!(event["object"], "event");
        assert_eq!(event["api_version"], "2024-06-20");
        assert_eq!(event["livemode"], false);
        assert_eq!(event["pending_webhooks"], 1);
        assert!(event["request"]["id"].is_null() && event["request"]["idempotency_key"].is_null());
        assert_eq!(event["data"]["object"]["id"], paid.as_str());
        let recorded = events.iter().find(|e| e.id == received.id()).unwrap();
        assert_eq!(event["type"], recorded.kind.as_str());
        assert_eq!(event["created"], recorded.created);
        assert_eq!(event["data"]["object"], recorded.object);
    }
}

#[tokio::test]
async fn an_event_answered_500_is_sent_again_after_a_doubling_wait_until_2xx() {
    let fake = fake().await;
    let receiver = Receiver::start(|before| if before < 2 { 500 } else { 204 }).await;
    let base = Duration::from_millis(60);
    fake.deliver_events_to(
        receiver.url.clone(),
        SECRET,
        EventDelivery {
            retry_base: base,
            ..EventDelivery::default()
        },
    );
    Api::new(&fake).pay(VISA, &[]).await;
    let delivered = all_delivered(&fake, 0, 1).await;
    assert_eq!(delivered.len(), 2);

    let deliveries = fake.deliveries();
    for id in &delivered {
        let sends: Vec<(u32, Option<u16>)> = deliveries
            .iter()
            .filter(|d| d.event_id == *id)
            .map(|d| (d.attempt, d.status))
            .collect();
        assert_eq!(sends, [(1, Some(500)), (2, Some(500)), (3, Some(204))]);
        assert!(deliveries.iter().all(|d| d.url == receiver.url));

        let received: Vec<Received> = receiver
            .received()
            .into_iter()
            .filter(|r| r.id() == id)
            .collect();
        assert_eq!(received.len(), 3);
        assert!(received[1].at - received[0].at >= base, "waits the base");
        assert!(
            received[2].at - received[1].at >= base * 2,
            "then twice as long"
        );
        for send in &received {
            assert_eq!(send.body, received[0].body, "the same event every time");
            assert!(verifies(send.signature(), &send.body, SECRET));
        }
    }
}

#[tokio::test]
async fn a_dead_endpoint_is_tried_max_attempts_times_then_given_up() {
    let fake = fake().await;
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = Url::parse(&format!("http://127.0.0.1:{port}/gone")).unwrap();
    fake.deliver_events_to(
        url,
        SECRET,
        EventDelivery {
            max_attempts: 3,
            retry_base: Duration::from_millis(10),
            ..EventDelivery::default()
        },
    );
    Api::new(&fake).pay(VISA, &[]).await;
    eventually("three tries of both events", || {
        fake.deliveries().len() == 6
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let deliveries = fake.deliveries();
    assert_eq!(deliveries.len(), 6, "no fourth try: {deliveries:?}");
    assert!(deliveries.iter().all(|d| d.status.is_none()));
    for event in fake.events() {
        let attempts: Vec<u32> = deliveries
            .iter()
            .filter(|d| d.event_id == event.id)
            .map(|d| d.attempt)
            .collect();
        assert_eq!(attempts, [1, 2, 3]);
    }
}

#[tokio::test]
async fn with_duplicates_every_event_arrives_twice_with_the_same_id_and_body() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let receiver = Receiver::ok().await;
    fake.deliver_events_to(
        receiver.url.clone(),
        SECRET,
        EventDelivery {
            duplicates: 1.0,
            ..quick()
        },
    );
    let (paid, _) = api.pay(VISA, &[]).await;
    api.post("v1/refunds", &[("payment_intent", &paid)]).await;
    let delivered = all_delivered(&fake, 0, 2).await;
    assert_eq!(delivered.len(), 3);
    let received = receiver.received();
    assert_eq!(received.len(), 6);
    for id in &delivered {
        let copies: Vec<&Received> = received.iter().filter(|r| r.id() == id).collect();
        assert_eq!(copies.len(), 2, "{id}");
        assert_eq!(copies[0].body, copies[1].body);
        assert!(copies
            .iter()
            .all(|c| verifies(c.signature(), &c.body, SECRET)));
    }
}

#[tokio::test]
async fn a_reorder_window_makes_events_arrive_out_of_order() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let receiver = Receiver::ok().await;
    fake.deliver_events_to(
        receiver.url.clone(),
        SECRET,
        EventDelivery {
            reorder_window: Duration::from_millis(400),
            seed: 42,
            ..quick()
        },
    );
    // Thirty events, most of them at once: a dispute's status moved back and forth.
    let (paid, _) = api.pay(VISA, &[]).await;
    let dispute = fake.open_dispute(&paid, "general");
    for i in 0..27 {
        let status = if i % 2 == 0 {
            "under_review"
        } else {
            "needs_response"
        };
        fake.set_dispute_status(&dispute, status);
    }
    let sent = all_delivered(&fake, 0, 1).await;
    assert_eq!(sent.len(), 2 + 1 + 27);
    let arrived = receiver.ids();
    assert_eq!(arrived.len(), sent.len(), "each once");
    let position = |id: &String| sent.iter().position(|s| s == id).unwrap();
    let order: Vec<usize> = arrived.iter().map(position).collect();
    let inversions = order.windows(2).filter(|w| w[0] > w[1]).count();
    assert!(inversions > 0, "arrived in order: {order:?}");
}

// --- Authorisation expiry --------------------------------------------------------------------

#[tokio::test]
async fn an_authorisation_not_captured_in_time_expires_as_canceled_automatic() {
    let fake = fake_with(FakeStripeConfig {
        list_delay: Duration::from_millis(500),
        authorization_lifetime: Some(Duration::from_millis(1000)),
        ..FakeStripeConfig::default()
    })
    .await;
    let api = Api::new(&fake);
    let receiver = Receiver::ok().await;
    fake.deliver_events_to(receiver.url.clone(), SECRET, quick());
    let held = api.authorise().await;
    let listed_status = || async {
        let (_, list) = api.get("v1/payment_intents").await;
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == held.as_str())
            .map(|i| i["status"].as_str().unwrap().to_owned())
    };
    let (_, retrieved) = api.get(&format!("v1/payment_intents/{held}")).await;
    assert_eq!(retrieved["status"], "requires_capture");

    // No request is made: the fake expires it on its own and says so.
    eventually("the canceled event", || {
        !receiver.of_kind("payment_intent.canceled").is_empty()
    })
    .await;
    let canceled = &receiver.of_kind("payment_intent.canceled")[0].event["data"]["object"];
    assert_eq!(canceled["id"], held.as_str());
    assert_eq!(canceled["status"], "canceled");
    assert_eq!(canceled["cancellation_reason"], "automatic");
    assert_eq!(canceled["amount_capturable"], 0);
    assert!(canceled["canceled_at"].is_i64());
    assert_eq!(
        listed_status().await.as_deref(),
        Some("requires_capture"),
        "the list lags behind the expiry"
    );

    let (_, retrieved) = api.get(&format!("v1/payment_intents/{held}")).await;
    assert_eq!(retrieved["status"], "canceled");
    assert_eq!(retrieved["cancellation_reason"], "automatic");
    assert_eq!(retrieved["amount_capturable"], 0);
    let snapshot = fake.intent(&held).unwrap();
    assert_eq!(
        (
            snapshot.status.as_str(),
            snapshot.cancellation_reason.as_deref(),
            snapshot.amount_capturable
        ),
        ("canceled", Some("automatic"), 0)
    );

    let (status, refused) = api
        .post(&format!("v1/payment_intents/{held}/capture"), &[])
        .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], "payment_intent_unexpected_state");
    assert_eq!(refused["error"]["payment_intent"]["status"], "canceled");
    let (status, refused) = api
        .post(&format!("v1/payment_intents/{held}/cancel"), &[])
        .await;
    assert_eq!(status, 400, "as for any canceled intent: {refused}");
    assert_eq!(
        refused["error"]["payment_intent"]["cancellation_reason"],
        "automatic"
    );
    assert_eq!(
        kinds_of(&fake, &held),
        [
            "payment_intent.created",
            "payment_intent.amount_capturable_updated",
            "payment_intent.canceled"
        ]
    );

    let start = Instant::now();
    while listed_status().await.as_deref() != Some("canceled") {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the list never caught up"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn without_a_lifetime_or_once_captured_nothing_expires() {
    let forever = fake().await;
    let fake = fake_with(FakeStripeConfig {
        list_delay: Duration::ZERO,
        authorization_lifetime: Some(Duration::from_millis(100)),
        ..FakeStripeConfig::default()
    })
    .await;
    let api = Api::new(&fake);
    let held = api.authorise().await;
    let (status, _) = api
        .post(&format!("v1/payment_intents/{held}/capture"), &[])
        .await;
    assert_eq!(status, 200);
    let kept = Api::new(&forever).authorise().await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(fake.intent(&held).unwrap().status, "succeeded");
    assert_eq!(forever.intent(&kept).unwrap().status, "requires_capture");
}

// --- Disputes --------------------------------------------------------------------------------

#[tokio::test]
async fn a_dispute_lost_is_retrievable_and_gives_created_updated_and_closed_events() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let receiver = Receiver::ok().await;
    fake.deliver_events_to(receiver.url.clone(), SECRET, quick());
    let (paid, intent) = api.pay(VISA, &[]).await;
    let charge = intent["latest_charge"].as_str().unwrap().to_owned();

    let id = fake.open_dispute(&paid, "fraudulent");
    assert!(id.starts_with("dp_"), "{id}");
    let (status, dispute) = api.get(&format!("v1/disputes/{id}")).await;
    assert_eq!(status, 200, "{dispute}");
    assert_eq!(dispute["id"], id.as_str());
    assert_eq!(dispute["object"], "dispute");
    assert_eq!(dispute["amount"], 1000);
    assert_eq!(dispute["currency"], "usd");
    assert_eq!(dispute["charge"], charge.as_str());
    assert_eq!(dispute["payment_intent"], paid.as_str());
    assert_eq!(dispute["reason"], "fraudulent");
    assert_eq!(dispute["status"], "needs_response");
    assert_eq!(dispute["livemode"], false);
    assert_eq!(dispute["metadata"], serde_json::json!({}));
    assert_eq!(dispute["is_charge_refundable"], false);
    assert!(dispute["created"].as_i64().unwrap() > 1_600_000_000);

    fake.set_dispute_status(&id, "under_review");
    fake.set_dispute_status(&id, "under_review"); // unchanged: no event
    fake.set_dispute_status(&id, "lost");
    let (_, dispute) = api.get(&format!("v1/disputes/{id}")).await;
    assert_eq!(dispute["status"], "lost");
    let snapshot = &fake.disputes()[0];
    assert_eq!(
        (
            snapshot.id.as_str(),
            snapshot.status.as_str(),
            snapshot.charge.as_str()
        ),
        (id.as_str(), "lost", charge.as_str())
    );
    assert_eq!(
        kinds_of(&fake, &id),
        [
            "charge.dispute.created",
            "charge.dispute.updated",
            "charge.dispute.closed"
        ]
    );

    all_delivered(&fake, 0, 1).await;
    let about = |kind: &str| {
        let received = receiver.of_kind(kind);
        assert_eq!(received.len(), 1, "{kind}");
        received[0].event["data"]["object"].clone()
    };
    assert_eq!(about("charge.dispute.created")["status"], "needs_response");
    assert_eq!(about("charge.dispute.updated")["status"], "under_review");
    let closed = about("charge.dispute.closed");
    assert_eq!(closed["status"], "lost");
    assert_eq!(closed["id"], id.as_str());
    assert_eq!(closed["payment_intent"], paid.as_str());
}

#[tokio::test]
async fn an_unknown_dispute_is_404_and_faults_strike_its_retrieve() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let (status, body) = api.get("v1/disputes/dp_nope").await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "resource_missing");

    let (paid, _) = api.pay(VISA, &[]).await;
    let id = fake.open_dispute(&paid, "product_not_received");
    fake.inject(Call::RetrieveDispute, When::Before, Fault::Status(503));
    let path = format!("v1/disputes/{id}");
    assert_eq!(api.get(&path).await.0, 503);
    assert_eq!(api.get(&path).await.0, 200);
    assert_eq!(
        fake.executions(Call::RetrieveDispute),
        1,
        "the 404 and the fault did no work"
    );
    assert_eq!(
        fake.requests().last().unwrap().call,
        Some(Call::RetrieveDispute)
    );

    // An inquiry leaves the payment refundable; closing it ends with charge.dispute.closed.
    fake.set_dispute_status(&id, "warning_under_review");
    assert_eq!(api.get(&path).await.1["is_charge_refundable"], true);
    fake.set_dispute_status(&id, "warning_closed");
    assert_eq!(
        kinds_of(&fake, &id).last().map(String::as_str),
        Some("charge.dispute.closed")
    );
}

#[tokio::test]
#[should_panic(expected = "no captured charge")]
async fn a_payment_only_authorised_cannot_be_disputed() {
    let fake = fake().await;
    let held = Api::new(&fake).authorise().await;
    fake.open_dispute(&held, "fraudulent");
}

// --- Refund failures -------------------------------------------------------------------------

#[tokio::test]
async fn a_refund_failing_late_emits_refund_failed_and_updated_when_it_fails() {
    let fake = fake_with(FakeStripeConfig {
        list_delay: Duration::ZERO,
        refund_failure_delay: Duration::from_millis(300),
        ..FakeStripeConfig::default()
    })
    .await;
    let api = Api::new(&fake);
    let receiver = Receiver::ok().await;
    fake.deliver_events_to(receiver.url.clone(), SECRET, quick());
    let (paid, _) = api.pay(REFUND_FAILS, &[]).await;
    let (_, refund) = api.post("v1/refunds", &[("payment_intent", &paid)]).await;
    assert_eq!(refund["status"], "succeeded");
    let id = refund["id"].as_str().unwrap().to_owned();

    // No request is made: the fake fails it on its own and says so.
    eventually("refund.failed", || {
        !receiver.of_kind("refund.failed").is_empty()
    })
    .await;
    let failed = &receiver.of_kind("refund.failed")[0].event["data"]["object"];
    assert_eq!(failed["id"], id.as_str());
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["failure_reason"], "unknown");
    let created = &receiver.of_kind("refund.created")[0].event["data"]["object"];
    assert_eq!(created["status"], "succeeded");
    assert_eq!(
        kinds_of(&fake, &id),
        ["refund.created", "refund.failed", "refund.updated"]
    );
    assert_eq!(fake.refunds()[0].status, "failed");
    let (_, retrieved) = api.get(&format!("v1/refunds/{id}")).await;
    assert_eq!(retrieved["status"], "failed");
}

#[tokio::test]
async fn a_refund_failing_at_once_emits_its_failure_too() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let (paid, _) = api.pay(REFUND_FAILS, &[]).await;
    let (_, refund) = api.post("v1/refunds", &[("payment_intent", &paid)]).await;
    assert_eq!(refund["status"], "failed");
    assert_eq!(
        kinds_of(&fake, refund["id"].as_str().unwrap()),
        ["refund.created", "refund.failed", "refund.updated"]
    );
}

// --- Stopping --------------------------------------------------------------------------------

#[tokio::test]
async fn dropping_the_fake_stops_its_deliveries() {
    let fake = fake().await;
    let receiver = Receiver::start(|_| 500).await;
    fake.deliver_events_to(
        receiver.url.clone(),
        SECRET,
        EventDelivery {
            retry_base: Duration::from_millis(30),
            max_attempts: 20,
            ..EventDelivery::default()
        },
    );
    Api::new(&fake).pay(VISA, &[]).await;
    eventually("some retries", || receiver.received().len() >= 4).await;
    drop(fake);
    // A send under way when the fake stopped may still land.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let settled = receiver.received().len();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        receiver.received().len(),
        settled,
        "sent after the fake stopped"
    );
}
