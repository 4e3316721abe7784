//! Money moves exactly once, through the whole service: the real binary over Postgres, the
//! Stripe adapter against a Stripe-like stand-in on loopback that replays idempotent requests,
//! keeps working after the client gave up, lags in its lists, hosts 3DS pages and refuses to
//! cancel what succeeded. Each scenario asserts what the payer and the merchant would check:
//! how many times the card was charged at the processor (at most once), and that the state the
//! merchant reads agrees with the processor once the service has settled it.
//!
//! `model.rs` runs random interleavings of the same operations in process against the same
//! stand-in and checks the invariants after each run (`MODEL_RUNS`, 1,000 by default).

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

#[path = "../support/mod.rs"]
mod support;

mod hold_expiry;
mod lifecycle;
mod model;
mod processor_events;
mod reversal_model;
mod reversals;
mod review;
mod scenarios;

use std::time::{Duration, Instant};

use checkout_processor::testing::fake_stripe::{FakeStripe, FakeStripeConfig, IntentSnapshot};
use reqwest::StatusCode;

use support::payer::CardForm;
use support::{Mode, TestServer};

/// Approved and captured.
pub const APPROVED_CARD: &str = "4242424242424242";
/// Needs a 3DS challenge, hosted by the processor.
pub const CHALLENGE_CARD: &str = "4000002760003184";
/// The processor timeout of these tests, milliseconds.
pub const TIMEOUT_MS: u64 = 800;

/// A fake Stripe whose lists lag by five seconds (longer than any test waits for a list).
pub async fn fake_stripe() -> FakeStripe {
    FakeStripe::start(FakeStripeConfig {
        list_delay: Duration::from_secs(5),
        ..FakeStripeConfig::default()
    })
    .await
}

/// The service over `stripe`, reconciling every second.
pub async fn service(label: &str, stripe: &FakeStripe, extra: &[(&str, &str)]) -> TestServer {
    let base = stripe.base_url.to_string();
    let timeout = TIMEOUT_MS.to_string();
    let mut settings = vec![
        ("CHECKOUT__PROCESSOR__KIND", "stripe"),
        ("CHECKOUT__PROCESSOR__STRIPE_BASE_URL", base.as_str()),
        ("CHECKOUT__PROCESSOR__STRIPE_API_KEY", "sk_test_money"),
        ("CHECKOUT__PROCESSOR__TIMEOUT_MS", timeout.as_str()),
        ("CHECKOUT__CHECKOUT__RECONCILE_SWEEP_SECONDS", "1"),
        ("CHECKOUT__CHECKOUT__RECONCILE_AFTER_SECONDS", "1"),
        ("CHECKOUT__CHECKOUT__RECONCILE_MAX_BACKOFF_SECONDS", "2"),
        ("CHECKOUT__CHECKOUT__EXPIRY_SWEEP_SECONDS", "1"),
    ];
    settings.extend_from_slice(extra);
    TestServer::start(label, Mode::Sandbox, &settings).await
}

/// The state the merchant reads.
pub async fn state_of(server: &TestServer, id: &str) -> String {
    server.status_record(id).await["state"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Polls the merchant's status until it is not `while_in`, at most `within`; returns it.
pub async fn wait_while(server: &TestServer, id: &str, while_in: &str, within: Duration) -> String {
    let started = Instant::now();
    loop {
        let state = state_of(server, id).await;
        if state != while_in || started.elapsed() > within {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// An answer to a page request: status, `Location`, CSP and body.
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// The `Location` header, for a redirect.
    pub location: Option<String>,
    /// The `Content-Security-Policy` header.
    pub csp: String,
    /// The body.
    pub body: String,
}

impl Answer {
    /// Reads a response whole.
    pub async fn of(response: reqwest::Response) -> Answer {
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let location = header("location");
        let csp = header("content-security-policy").unwrap_or_default();
        Answer {
            status: response.status(),
            location,
            csp,
            body: response.text().await.unwrap_or_default(),
        }
    }

    /// Posts `form` with `card` and reads the answer; its body is the page the answer's 303
    /// leads to on the service (the form shown again, an error page), as a browser shows it.
    pub async fn after(form: &CardForm, http: &reqwest::Client, card: &str) -> Answer {
        let response = form.submit(http, card).await;
        let page = form.page_after(http, &response).await;
        let mut answer = Answer::of(response).await;
        if let Some(page) = page {
            answer.body = page;
        }
        answer
    }

    /// The SVC code the page shows (banner or error page), if any.
    pub fn code(&self) -> Option<&str> {
        let (_, rest) = self.body.split_once("data-code=\"")?;
        rest.split('"').next()
    }
}

/// Opens the checkout page of `id` and submits `card`.
pub async fn pay(server: &TestServer, id: &str, card: &str) -> (CardForm, Answer) {
    let form = CardForm::open(&server.http, &server.base, id).await;
    let answer = Answer::after(&form, &server.http, card).await;
    (form, answer)
}

/// How many intents of session `id` hold money at the processor.
pub fn charged(stripe: &FakeStripe, id: &str) -> usize {
    stripe.charged_intents_for("session", id)
}

/// The intents the processor holds for session `id`.
pub fn intents_of(stripe: &FakeStripe, id: &str) -> Vec<IntentSnapshot> {
    stripe
        .intents()
        .into_iter()
        .filter(|i| i.metadata.get("session").map(String::as_str) == Some(id))
        .collect()
}

/// Asserts the merchant's state agrees with the processor: one charge for a paid state,
/// none for any other.
pub async fn assert_agrees(server: &TestServer, stripe: &FakeStripe, id: &str) -> String {
    let state = state_of(server, id).await;
    let charges = charged(stripe, id);
    assert!(charges <= 1, "{id}: charged {charges} times");
    let paid = matches!(state.as_str(), "Successful" | "ApprovedTransaction");
    assert_eq!(
        paid,
        charges == 1,
        "{id}: the merchant reads {state}, the processor holds {charges} charge(s): {:?}",
        intents_of(stripe, id)
    );
    state
}
