//! The findings of the reversal ledger's issue, each through the whole service against the
//! Stripe-like stand-in: a refund in flight when the server is killed, a refund whose answer
//! outlives the client, and the merchant's retries of both. Each asserts the money the
//! processor holds and the money the API reports.

use std::time::{Duration, Instant};

use checkout_processor::testing::fake_stripe::{Call, FakeStripe, Fault, When};
use serde_json::Value;

use crate::support::server::{into_reply, Reply};
use checkout_domain::terminal::CaptureMethod;

use crate::support::TestServer;
use crate::{intents_of, pay, service, state_of, APPROVED_CARD};

/// The settings of these scenarios: a short claim lease, so that a retry after a crash runs
/// within the test.
pub(crate) const LEASE: (&str, &str) = ("CHECKOUT__CHECKOUT__IDEMPOTENCY_LEASE_SECONDS", "2");

/// `POST /pay/api/payment/{id}/refunds` of `body`, under `key` when given.
pub(crate) async fn refund(server: &TestServer, id: &str, key: Option<&str>, body: &str) -> Reply {
    let token = server.token().await;
    let mut request = server
        .http
        .post(format!("{}/pay/api/payment/{id}/refunds", server.base))
        .bearer_auth(&token)
        .header("Content-Type", "application/json")
        .body(body.to_owned());
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    into_reply(request.send().await.unwrap()).await
}

/// The refunds the processor holds for session `id`'s payment: (minor amount, status).
pub(crate) fn refunds_at_processor(stripe: &FakeStripe, id: &str) -> Vec<(i64, String)> {
    let intent = intents_of(stripe, id)[0].id.clone();
    stripe
        .refunds()
        .into_iter()
        .filter(|r| r.payment_intent == intent)
        .map(|r| (r.amount, r.status))
        .collect()
}

/// How many events of `kind` about session `id` the merchant's feed holds.
pub(crate) async fn events_about(server: &TestServer, id: &str, kind: &str) -> usize {
    let token = server.token().await;
    let feed = server.get("/pay/api/events?limit=100", Some(&token)).await;
    feed.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == kind && e["data"]["checkoutSessionId"] == id)
        .count()
}

/// The merchant's refund list of `id`.
pub(crate) async fn refund_list(server: &TestServer, id: &str) -> Value {
    let token = server.token().await;
    server
        .get(&format!("/pay/api/payment/{id}/refunds"), Some(&token))
        .await
        .body
}

/// Polls the refund list until every refund is settled (neither Pending nor Unknown), at
/// most `within`; returns the list.
async fn settled_refunds(server: &TestServer, id: &str, within: Duration) -> Value {
    let started = Instant::now();
    loop {
        let list = refund_list(server, id).await;
        let open = list["refunds"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| matches!(r["state"].as_str(), Some("Pending" | "Unknown")));
        if !open || started.elapsed() > within {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Finding 1: the server is killed while a 3.00 refund is at the processor. After the
/// restart the refund is settled by the sweep with its own key, and the merchant's retry
/// with the same key, once the claim's lease is over, answers that same refund: 3.00 at the
/// processor and in the API, never 6.00.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_in_flight_when_the_server_dies_is_made_once() {
    let stripe = crate::fake_stripe().await;
    let mut server = service("money-refund-crash", &stripe, &[LEASE]).await;
    let id = server.new_checkout("REFUND-CRASH").await;
    pay(&server, &id, APPROVED_CARD).await;
    assert_eq!(state_of(&server, &id).await, "Successful");

    // The processor works on the refund for 2 s; the server dies after 0.5 s.
    stripe.inject(
        Call::CreateRefund,
        When::Before,
        Fault::Delay(Duration::from_millis(2000)),
    );
    let token = server.token().await;
    let in_flight = {
        let request = server
            .http
            .post(format!("{}/pay/api/payment/{id}/refunds", server.base))
            .bearer_auth(&token)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", "refund-crash-1")
            .body(r#"{"amount": 3.00}"#);
        tokio::spawn(request.send())
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.kill_hard();
    assert!(
        in_flight.await.unwrap().is_err(),
        "no answer from a killed server"
    );
    server.restart().await;

    let list = settled_refunds(&server, &id, Duration::from_secs(20)).await;
    let refunds = list["refunds"].as_array().unwrap();
    assert_eq!(refunds.len(), 1, "{list}");
    assert_eq!(refunds[0]["state"], "Succeeded", "{list}");
    assert_eq!(list["refundedAmount"], 3.0);

    tokio::time::sleep(Duration::from_millis(2100)).await;
    let retry = refund(&server, &id, Some("refund-crash-1"), r#"{"amount": 3.00}"#).await;
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert_eq!(retry.body["refund"]["refundId"], refunds[0]["refundId"]);
    assert_eq!(retry.body["payment"]["refundedAmount"], 3.0);

    assert_eq!(
        refunds_at_processor(&stripe, &id),
        [(300, "succeeded".to_owned())],
        "one refund at the processor"
    );
    assert_eq!(server.status_record(&id).await["refundedAmount"], 3.0);
    let created = stripe.executions(Call::CreateRefund);
    assert_eq!(created, 1, "the refund's work was done once");
}

/// Finding 2: the processor's answer outlives the client's timeout. The merchant gets
/// SVC_009 and the refund is listed Unknown, its amount reserved; the sweep settles it with
/// its own key (a `payment.refunded` event follows), and the retry under the same key then
/// answers it done, refunding nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_refund_answer_resolves_and_the_retry_refunds_nothing_more() {
    let stripe = crate::fake_stripe().await;
    let server = service("money-refund-lost", &stripe, &[LEASE]).await;
    let id = server.new_checkout("REFUND-LOST").await;
    pay(&server, &id, APPROVED_CARD).await;

    // Done at once, answered after 2 s: the client (0.8 s) and every replay of the request
    // path give up (however many sends a loaded machine makes of it: the fault stays until
    // the answer is known lost).
    stripe.inject_always(
        Call::CreateRefund,
        When::After,
        Fault::Delay(Duration::from_millis(2000)),
    );
    let lost = refund(&server, &id, Some("refund-lost-1"), r#"{"amount": 4.00}"#).await;
    stripe.clear_faults();
    assert_eq!(lost.status, 422, "{}", lost.body);
    assert_eq!(lost.body["type"], "SVC_009");
    let list = refund_list(&server, &id).await;
    assert_eq!(list["refunds"][0]["state"], "Unknown", "{list}");
    assert_eq!(
        list["refundedAmount"], 0.0,
        "not counted before the processor confirms"
    );

    // Reserved: 25.00 - 4.00 remain; 21.01 is refused without asking the processor.
    let above = refund(&server, &id, None, r#"{"amount": 21.01}"#).await;
    assert_eq!(above.body["type"], "SVC_011", "{}", above.body);

    let list = settled_refunds(&server, &id, Duration::from_secs(20)).await;
    assert_eq!(list["refunds"][0]["state"], "Succeeded", "{list}");
    assert_eq!(list["refundedAmount"], 4.0);

    tokio::time::sleep(Duration::from_millis(2100)).await;
    let retry = refund(&server, &id, Some("refund-lost-1"), r#"{"amount": 4.00}"#).await;
    assert_eq!(
        retry.status, 200,
        "the refund as it stands now: {}",
        retry.body
    );
    assert_eq!(retry.body["refund"]["state"], "Succeeded");
    assert_eq!(
        refunds_at_processor(&stripe, &id),
        [(400, "succeeded".to_owned())]
    );
    assert_eq!(server.status_record(&id).await["refundedAmount"], 4.0);

    let refunded = events_about(&server, &id, "payment.refunded").await;
    assert_eq!(refunded, 1, "one event for the one refund");
}

/// `POST /pay/api/payment/{id}/{action}` with raw `body` (or none), under `key` when given.
pub(crate) async fn act(
    server: &TestServer,
    id: &str,
    action: &str,
    key: Option<&str>,
    body: &str,
) -> Reply {
    let token = server.token().await;
    let mut request = server
        .http
        .post(format!("{}/pay/api/payment/{id}/{action}", server.base))
        .bearer_auth(&token);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    if !body.is_empty() {
        request = request
            .header("Content-Type", "application/json")
            .body(body.to_owned());
    }
    into_reply(request.send().await.unwrap()).await
}

/// A session of a terminal set to manual capture, paid with 4242: held at the processor.
pub(crate) async fn held(server: &TestServer, stripe: &FakeStripe, label: &str) -> String {
    server
        .set_capture_method(&server.terminal, CaptureMethod::Manual)
        .await;
    let id = server.new_checkout(label).await;
    pay(server, &id, APPROVED_CARD).await;
    assert_eq!(state_of(server, &id).await, "ApprovedTransaction");
    let intent = &intents_of(stripe, &id)[0];
    assert_eq!(intent.status, "requires_capture", "{intent:?}");
    id
}

/// Finding 4: with manual capture the Stripe adapter asks for a held authorisation, and the
/// merchant's partial capture and void go to the processor: 7.00 of 12.34 captured there and
/// in the API; another session voided there and in the API.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn held_authorisations_are_captured_in_part_or_voided_at_the_processor() {
    let stripe = crate::fake_stripe().await;
    let server = service("money-held", &stripe, &[LEASE]).await;
    let captured = held(&server, &stripe, "HELD-CAPTURE").await;
    let reply = act(
        &server,
        &captured,
        "capture",
        Some("cap-7"),
        r#"{"amount": 7.00}"#,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["capturedAmount"], 7.0);
    let intent = &intents_of(&stripe, &captured)[0];
    assert_eq!(
        (intent.status.as_str(), intent.amount_received),
        ("succeeded", 700)
    );
    // A second capture is refused by the service, without asking the processor.
    let again = act(&server, &captured, "capture", None, r#"{"amount": 1.00}"#).await;
    assert_eq!(again.body["type"], "SVC_008", "{}", again.body);
    assert_eq!(stripe.executions(Call::CaptureIntent), 1);
    // Refunds are bounded by the capture.
    let above = refund(&server, &captured, None, r#"{"amount": 7.01}"#).await;
    assert_eq!(above.body["type"], "SVC_011", "{}", above.body);

    let voided = held(&server, &stripe, "HELD-VOID").await;
    let reply = act(&server, &voided, "void", Some("void-1"), "").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["payment"]["state"], "Voided");
    assert_eq!(intents_of(&stripe, &voided)[0].status, "canceled");
    let capture = act(&server, &voided, "capture", None, "").await;
    assert_eq!(capture.body["type"], "SVC_008", "{}", capture.body);
}

/// Finding 3: a capture whose answer is lost (Stripe captured, the answer came after the
/// client gave up, and the read of the intent that follows is lost too) answers SVC_003 and
/// stays pending, never "not captured"; the sweep settles it with the capture's own key, and
/// the merchant's retry under the same key answers 200. The processor captured once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_capture_whose_answer_was_lost_is_settled_and_captures_once() {
    let stripe = crate::fake_stripe().await;
    let server = service("money-capture-lost", &stripe, &[LEASE]).await;
    let id = held(&server, &stripe, "CAPTURE-LOST").await;
    stripe.inject(
        Call::CaptureIntent,
        When::After,
        Fault::Delay(Duration::from_millis(2000)),
    );
    stripe.inject(Call::CaptureIntent, When::Before, Fault::Reset);
    // The adapter reads the intent after an unanswered capture: that read is lost too.
    stripe.inject(Call::RetrieveIntent, When::Before, Fault::Reset);
    let lost = act(
        &server,
        &id,
        "capture",
        Some("cap-lost"),
        r#"{"amount": 10.00}"#,
    )
    .await;
    assert_eq!(lost.status, 422, "{}", lost.body);
    assert_eq!(lost.body["type"], "SVC_003");
    assert_eq!(
        intents_of(&stripe, &id)[0].amount_received,
        1000,
        "captured at the processor"
    );

    let settled =
        crate::wait_while(&server, &id, "ApprovedTransaction", Duration::from_secs(20)).await;
    assert_eq!(settled, "Successful");
    assert_eq!(server.status_record(&id).await["capturedAmount"], 10.0);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let retry = act(
        &server,
        &id,
        "capture",
        Some("cap-lost"),
        r#"{"amount": 10.00}"#,
    )
    .await;
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert_eq!(retry.body["capturedAmount"], 10.0);
    let intent = &intents_of(&stripe, &id)[0];
    assert_eq!(
        (intent.status.as_str(), intent.amount_received),
        ("succeeded", 1000)
    );
    assert_eq!(events_about(&server, &id, "payment.captured").await, 1);
}
