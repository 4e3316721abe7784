//! The processor's own news, through the whole service: the Stripe-like stand-in delivers
//! its signed events to `POST /pay/api/processor-events` as Stripe does (each event twice,
//! out of order, retried after a failure), and the service reads each object it names and
//! records what the processor holds. Each scenario asserts the money at the processor and
//! in the API, and one merchant event per change.

use std::time::{Duration, Instant};

use checkout_processor::testing::fake_stripe::{EventDelivery, FakeStripe, FakeStripeConfig};
use ring::hmac;
use serde_json::{json, Value};
use url::Url;

use crate::reversals::{act, events_about, held, refund, refund_list, refunds_at_processor, LEASE};
use crate::support::server::{into_reply, Reply};
use crate::support::TestServer;
use crate::{intents_of, pay, service, state_of, wait_while, APPROVED_CARD};

/// The signing secret of the processor's webhook endpoint, as the service is configured.
const SECRET: &str = "whsec_money_scenarios";

/// A card Stripe approves and whose refunds it fails after confirming them.
const REFUND_FAILS_CARD: &str = "4000000000005126";

/// The service over `stripe`, taking its events with [`SECRET`] (plus `extra` settings), and
/// the stand-in delivering every event to it twice, shuffled within 300 ms.
async fn with_events(label: &str, stripe: &FakeStripe, extra: &[(&str, &str)]) -> TestServer {
    let mut settings = vec![
        ("CHECKOUT__PROCESSOR__STRIPE_WEBHOOK_SECRETS", SECRET),
        LEASE,
    ];
    settings.extend_from_slice(extra);
    let server = service(label, stripe, &settings).await;
    let url = Url::parse(&format!("{}/pay/api/processor-events", server.base)).unwrap();
    stripe.deliver_events_to(
        url,
        SECRET,
        EventDelivery {
            duplicates: 1.0,
            reorder_window: Duration::from_millis(300),
            seed: 29,
            ..EventDelivery::default()
        },
    );
    server
}

/// Waits until every event the stand-in made so far was answered 2xx at least once (at most
/// 20 s); returns how many sends there were.
async fn all_delivered(stripe: &FakeStripe) -> usize {
    let started = Instant::now();
    loop {
        let deliveries = stripe.deliveries();
        let events = stripe.events();
        let delivered = |id: &str| {
            deliveries
                .iter()
                .any(|d| d.event_id == id && d.status.is_some_and(|s| (200..300).contains(&s)))
        };
        let sent_after_start: Vec<_> = events
            .iter()
            .filter(|e| deliveries.iter().any(|d| d.event_id == e.id))
            .collect();
        if sent_after_start.iter().all(|e| delivered(&e.id))
            || started.elapsed() > Duration::from_secs(20)
        {
            return deliveries.len();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How many events of `kind` about session `id` the feed holds, once it holds `expected` (or
/// after 20 s): the feed holds back events while an older transaction of the cluster runs,
/// and the test cluster is shared by every test.
async fn events_once(server: &TestServer, id: &str, kind: &str, expected: usize) -> usize {
    let count = eventually(
        || async { json!(events_about(server, id, kind).await) },
        |n| n.as_u64() >= Some(expected as u64),
    )
    .await;
    usize::try_from(count.as_u64().unwrap_or_default()).unwrap_or_default()
}

/// Polls `read` until `done` holds of it, at most 20 s; returns the last reading.
async fn eventually<F, Fut>(mut read: F, done: impl Fn(&Value) -> bool) -> Value
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let started = Instant::now();
    loop {
        let value = read().await;
        if done(&value) || started.elapsed() > Duration::from_secs(20) {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A `Stripe-Signature` of `body` at unix second `t` with `secret`.
fn signature(secret: &str, t: i64, body: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let tag = hmac::sign(&key, format!("{t}.{body}").as_bytes());
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("t={t},v1={hex}")
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// `POST /pay/api/processor-events` of `body` with `signature` (none when `None`).
async fn post_event(server: &TestServer, body: &str, signature: Option<&str>) -> Reply {
    let mut request = server
        .http
        .post(format!("{}/pay/api/processor-events", server.base))
        .header("Content-Type", "application/json")
        .body(body.to_owned());
    if let Some(signature) = signature {
        request = request.header("Stripe-Signature", signature);
    }
    into_reply(request.send().await.unwrap()).await
}

/// A refund the processor confirms and fails a second later: the merchant first sees it
/// Succeeded (4.00 refunded), then, from the processor's events alone, Failed with the
/// refunded amount back to 0 and one `payment.refund_failed`; the amount can be refunded
/// again. The processor holds one failed refund.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_the_processor_fails_later_is_given_back_and_announced_once() {
    let stripe = FakeStripe::start(FakeStripeConfig {
        list_delay: Duration::from_secs(5),
        refund_failure_delay: Duration::from_secs(1),
        ..FakeStripeConfig::default()
    })
    .await;
    let server = with_events("money-events-refund", &stripe, &[]).await;
    let id = server.new_checkout("EVENTS-REFUND").await;
    pay(&server, &id, REFUND_FAILS_CARD).await;
    assert_eq!(state_of(&server, &id).await, "Successful");

    let first = refund(&server, &id, Some("late-fail"), r#"{"amount": 4.00}"#).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["refund"]["state"], "Succeeded");
    assert_eq!(first.body["payment"]["refundedAmount"], 4.0);

    let list = eventually(
        || refund_list(&server, &id),
        |l| l["refunds"][0]["state"] == "Failed",
    )
    .await;
    assert_eq!(list["refunds"][0]["state"], "Failed", "{list}");
    assert_eq!(list["refundedAmount"], 0.0, "{list}");
    assert_eq!(
        refunds_at_processor(&stripe, &id),
        [(400, "failed".to_owned())]
    );
    all_delivered(&stripe).await;
    assert_eq!(
        events_once(&server, &id, "payment.refund_failed", 1).await,
        1
    );
    assert_eq!(events_once(&server, &id, "payment.refunded", 1).await, 1);

    // The amount is the merchant's again; nothing else moved at the processor.
    let again = refund(&server, &id, None, r#"{"amount": 12.34}"#).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(refunds_at_processor(&stripe, &id).len(), 2);
}

/// A held authorisation that is never captured expires at the processor after 2 s: its
/// events alone move the session to Expired with one `payment.authorization_expired`; a
/// capture afterwards is SVC_008 and nothing is charged at the processor.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_authorisation_that_expires_at_the_processor_is_announced_and_never_captured() {
    let stripe = FakeStripe::start(FakeStripeConfig {
        list_delay: Duration::from_secs(5),
        authorization_lifetime: Some(Duration::from_secs(2)),
        ..FakeStripeConfig::default()
    })
    .await;
    let server = with_events("money-events-expiry", &stripe, &[]).await;
    let id = held(&server, &stripe, "EVENTS-EXPIRY").await;
    let state = wait_while(&server, &id, "ApprovedTransaction", Duration::from_secs(20)).await;
    assert_eq!(state, "Expired");
    let intent = &intents_of(&stripe, &id)[0];
    assert_eq!(intent.status, "canceled", "{intent:?}");
    assert_eq!(intent.cancellation_reason.as_deref(), Some("automatic"));

    let capture = act(&server, &id, "capture", Some("too-late"), "").await;
    assert_eq!(capture.status, 422, "{}", capture.body);
    assert_eq!(capture.body["type"], "SVC_008", "{}", capture.body);
    assert_eq!(intents_of(&stripe, &id)[0].amount_received, 0);
    all_delivered(&stripe).await;
    assert_eq!(
        events_once(&server, &id, "payment.authorization_expired", 1).await,
        1
    );
}

/// A dispute opened, reviewed and lost at the processor: its events arrive twice each and
/// shuffled, yet the status record ends with the one dispute Lost, and the feed holds one
/// `payment.dispute_opened` and one `payment.dispute_closed` naming it Lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dispute_reaches_the_record_and_the_feed_once_whatever_the_order_of_its_events() {
    let stripe = crate::fake_stripe().await;
    let server = with_events("money-events-dispute", &stripe, &[]).await;
    let id = server.new_checkout("EVENTS-DISPUTE").await;
    pay(&server, &id, APPROVED_CARD).await;
    let intent = intents_of(&stripe, &id)[0].id.clone();
    let dispute = stripe.open_dispute(&intent, "fraudulent");
    stripe.set_dispute_status(&dispute, "under_review");
    stripe.set_dispute_status(&dispute, "lost");

    let record = eventually(
        || server.status_record(&id),
        |r| r["disputes"][0]["status"] == "Lost",
    )
    .await;
    assert_eq!(
        record["disputes"].as_array().map(Vec::len),
        Some(1),
        "{record}"
    );
    assert_eq!(record["disputes"][0]["disputeId"], dispute.as_str());
    assert_eq!(record["disputes"][0]["amount"], 12.34);
    assert_eq!(record["disputes"][0]["reason"], "fraudulent");
    assert_eq!(record["state"], "Successful");

    all_delivered(&stripe).await;
    assert_eq!(
        events_once(&server, &id, "payment.dispute_opened", 1).await,
        1
    );
    assert_eq!(
        events_once(&server, &id, "payment.dispute_closed", 1).await,
        1
    );
    let token = server.token().await;
    let feed = server
        .get("/pay/api/events?limit=100", Some(&token))
        .await
        .body;
    let closed = feed["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "payment.dispute_closed")
        .cloned()
        .unwrap();
    assert_eq!(
        closed["dispute"],
        json!({"disputeId": dispute, "status": "Lost"})
    );
}

/// Bad input on the processor's route: no, a wrong, a stale or an altered signature is 400
/// naming the header and changes nothing; a replayed event id is a 200 no-op; an event about
/// an object the service never made is answered 200 and left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn processor_events_with_bad_signatures_change_nothing_and_replays_are_no_ops() {
    let stripe = crate::fake_stripe().await;
    let server = service(
        "money-events-bad",
        &stripe,
        &[("CHECKOUT__PROCESSOR__STRIPE_WEBHOOK_SECRETS", SECRET)],
    )
    .await;
    let id = server.new_checkout("EVENTS-BAD").await;
    pay(&server, &id, APPROVED_CARD).await;
    let intent = intents_of(&stripe, &id)[0].id.clone();
    let dispute = stripe.open_dispute(&intent, "fraudulent");
    let body = json!({
        "id": "evt_hand_made_1",
        "object": "event",
        "type": "charge.dispute.created",
        "data": {"object": {"id": dispute, "object": "dispute"}},
    })
    .to_string();

    let refused = [
        None,
        Some(signature("whsec_someone_else", now(), &body)),
        Some(signature(SECRET, now() - 600, &body)),
        Some(signature(
            SECRET,
            now(),
            &body.replace("evt_hand", "evt_hand_x"),
        )),
    ];
    for signature in &refused {
        let reply = post_event(&server, &body, signature.as_deref()).await;
        assert_eq!(reply.status, 400, "{signature:?}: {}", reply.body);
        assert!(
            reply.body["errors"]["Stripe-Signature"].is_array(),
            "{}",
            reply.body
        );
        assert!(
            !reply.body.to_string().contains(SECRET),
            "the secret never reaches a body"
        );
    }
    let record = server.status_record(&id).await;
    assert_eq!(record["disputes"], json!([]), "nothing changed: {record}");
    assert_eq!(
        events_once(&server, &id, "payment.dispute_opened", 0).await,
        0
    );

    let signed = signature(SECRET, now(), &body);
    let first = post_event(&server, &body, Some(&signed)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body, json!({"received": true, "outcome": "applied"}));
    let replay = post_event(&server, &body, Some(&signed)).await;
    assert_eq!(
        replay.body,
        json!({"received": true, "outcome": "duplicate"})
    );
    let record = server.status_record(&id).await;
    assert_eq!(record["disputes"][0]["status"], "NeedsResponse", "{record}");

    let stranger = json!({
        "id": "evt_hand_made_2",
        "type": "payment_intent.succeeded",
        "data": {"object": {"id": "pi_not_ours", "metadata": {}}},
    })
    .to_string();
    let reply = post_event(
        &server,
        &stranger,
        Some(&signature(SECRET, now(), &stranger)),
    )
    .await;
    assert_eq!(
        reply.body,
        json!({"received": true, "outcome": "unknown_object"})
    );
    assert_eq!(
        events_once(&server, &id, "payment.dispute_opened", 1).await,
        1
    );
}

/// The sandbox takes no processor events: a signed one is 404, an unsigned one 400 (as
/// everywhere), nothing read.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sandbox_takes_no_processor_events() {
    let server = TestServer::sandbox("money-events-sandbox").await;
    let unsigned = post_event(&server, "{}", None).await;
    assert_eq!(unsigned.status, 400, "{}", unsigned.body);
    assert!(unsigned.body["errors"]["Stripe-Signature"].is_array());
    let reply = post_event(&server, "{}", Some("t=1,v1=00")).await;
    assert_eq!(reply.status, 404, "{}", reply.body);
    assert_eq!(
        reply.body["detail"],
        "This service takes no processor events: no signing secret is configured."
    );
}
