//! Finding 4, the sweep's half: an authorisation held uncaptured longer than
//! `RECONCILE_HOLD_CHECK_AFTER_SECONDS` is read at the processor by the reconciliation sweep,
//! with no processor event delivered at all. One the processor released (it expired there) is
//! recorded Expired and announced once with `payment.authorization_expired`, as the event path
//! does; one the processor still holds is left as it is and can still be captured.

use std::time::Duration;

use checkout_processor::testing::fake_stripe::{Call, FakeStripe, FakeStripeConfig};

use crate::reversals::{act, events_about, held, LEASE};
use crate::support::TestServer;
use crate::{intents_of, service, state_of, wait_while};

/// The hold check after one second, so that the sweep (every second) reads every
/// authorisation these tests hold; again after the longer of the tests'
/// `RECONCILE_MAX_BACKOFF` (2 s) and the sweep's claim lease (the 0.8 s processor timeout for
/// each of a batch of 2, plus one: 2.4 s).
const HOLD_CHECK: (&str, &str) = (
    "CHECKOUT__CHECKOUT__RECONCILE_HOLD_CHECK_AFTER_SECONDS",
    "1",
);
/// A batch of 2, so that the claim lease is 2.4 s.
const BATCH: (&str, &str) = ("CHECKOUT__CHECKOUT__RECONCILE_BATCH", "2");

/// How many times the processor was asked to read the payment of session `id`.
fn reads_of(stripe: &FakeStripe, id: &str) -> usize {
    let intent = intents_of(stripe, id)[0].id.clone();
    stripe
        .requests()
        .iter()
        .filter(|r| r.call == Some(Call::RetrieveIntent) && r.path.ends_with(&intent))
        .count()
}

/// The stand-in expires an authorisation 3 s after it was made, and delivers no events: the
/// sweep alone notices it, the session ends Expired with one event, and a capture afterwards
/// is SVC_008 with nothing charged.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sweep_notices_an_authorisation_that_expired_at_the_processor() {
    let stripe = FakeStripe::start(FakeStripeConfig {
        list_delay: Duration::from_secs(5),
        authorization_lifetime: Some(Duration::from_secs(3)),
        ..FakeStripeConfig::default()
    })
    .await;
    let server: TestServer =
        service("money-hold-sweep", &stripe, &[LEASE, HOLD_CHECK, BATCH]).await;
    let id = held(&server, &stripe, "HOLD-SWEEP-EXPIRES").await;

    let state = wait_while(&server, &id, "ApprovedTransaction", Duration::from_secs(20)).await;
    assert_eq!(state, "Expired");
    let intent = &intents_of(&stripe, &id)[0];
    assert_eq!(intent.status, "canceled", "{intent:?}");
    assert_eq!(intent.cancellation_reason.as_deref(), Some("automatic"));
    assert_eq!(intent.amount_received, 0);
    assert!(
        stripe.deliveries().is_empty(),
        "no processor event was delivered"
    );
    assert_eq!(
        events_about(&server, &id, "payment.authorization_expired").await,
        1
    );

    let capture = act(&server, &id, "capture", Some("after-expiry"), "").await;
    assert_eq!(capture.status, 422, "{}", capture.body);
    assert_eq!(capture.body["type"], "SVC_008", "{}", capture.body);
    assert_eq!(intents_of(&stripe, &id)[0].amount_received, 0);
    // A few sweeps later: still one event, nothing else asked of the processor's money.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(state_of(&server, &id).await, "Expired");
    assert_eq!(
        events_about(&server, &id, "payment.authorization_expired").await,
        1
    );
    assert_eq!(stripe.executions(Call::CaptureIntent), 0);
}

/// An authorisation the processor still holds is read by the sweep (about once per
/// `RECONCILE_MAX_BACKOFF`, never once per sweep), stays ApprovedTransaction, and is captured
/// afterwards in full, at the processor and in the API.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_authorisation_still_held_is_read_and_left_capturable() {
    let stripe = crate::fake_stripe().await;
    let server = service("money-hold-held", &stripe, &[LEASE, HOLD_CHECK, BATCH]).await;
    let id = held(&server, &stripe, "HOLD-SWEEP-HELD").await;
    let before = reads_of(&stripe, &id);

    tokio::time::sleep(Duration::from_secs(7)).await;
    let reads = reads_of(&stripe, &id) - before;
    // Sweeps run every second; the hold is read again only once its 2.4 s claim ended.
    assert!((1..=5).contains(&reads), "{reads} reads in 7 s");
    assert_eq!(state_of(&server, &id).await, "ApprovedTransaction");
    assert_eq!(
        events_about(&server, &id, "payment.authorization_expired").await,
        0
    );

    let capture = act(&server, &id, "capture", Some("capture-held"), "").await;
    assert_eq!(capture.status, 200, "{}", capture.body);
    assert_eq!(capture.body["capturedAmount"], 12.34, "{}", capture.body);
    let intent = &intents_of(&stripe, &id)[0];
    assert_eq!(intent.status, "succeeded", "{intent:?}");
    assert_eq!(intent.amount_received, 1234);
}
