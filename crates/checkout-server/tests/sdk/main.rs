//! The merchant SDK (`checkout-client`) against the real `checkout` binary on a real port over
//! a real PostgreSQL: tokens and their renewal, a retry after a lost answer under the same
//! `Idempotency-Key`, each SVC code the sandbox produces as a typed error, the merchant's
//! calls end to end, a real webhook delivery verified from its raw bytes, and the events
//! feed resumed from a saved cursor.

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

#[path = "../support/mod.rs"]
mod support;

mod calls;
mod events;
mod retries;
mod tokens;
mod webhooks;
mod wire;

use std::time::Duration;

use checkout_client::{Client, Currency, Money, RetryPolicy, StartPaymentRequest};
use rust_decimal::Decimal;

use support::payer::CardForm;
use support::TestServer;

/// Approved and captured.
pub const APPROVED: &str = "4242424242424242";
/// Approved and held (ApprovedTransaction).
pub const AUTHORIZED: &str = "4000000000000077";
/// Declined.
pub const DECLINED: &str = "4000000000000002";
/// Approved and captured; every refund of it is refused by the processor.
pub const REFUNDS_REFUSED: &str = "4000000000005126";

/// Settings that look for due webhook deliveries every 50 ms.
pub const FAST_WEBHOOKS: &[(&str, &str)] = &[
    ("CHECKOUT__WEBHOOKS__POLL_MS", "50"),
    ("CHECKOUT__WEBHOOKS__TIME_SCALE", "0.01"),
    ("CHECKOUT__WEBHOOKS__TIMEOUT_MS", "2000"),
];

/// Short waits between attempts, so that the tests do not sleep long.
pub fn quick_retries() -> RetryPolicy {
    RetryPolicy::default()
        .initial_backoff(Duration::from_millis(20))
        .max_backoff(Duration::from_millis(200))
}

/// An SDK client of the sandbox client of `server`, at `base` (the server or a proxy).
pub fn sdk(server: &TestServer, base: &str) -> Client {
    Client::builder(base, &server.client_id, &server.client_secret)
        .retry_policy(quick_retries())
        .build()
        .expect("a client")
}

/// A unique merchant reference starting with `label`.
pub fn reference(label: &str) -> String {
    format!("{label}-{}", &support::server::uuid_like()[..10])
}

/// `text` as a decimal.
pub fn dec(text: &str) -> Decimal {
    text.parse().expect("a decimal")
}

/// An integrated checkout of `amount` USD under `reference`.
pub fn checkout(reference: &str, amount: &str) -> StartPaymentRequest {
    StartPaymentRequest::new(
        reference,
        Money::new(dec(amount), Currency::USD).expect("an amount"),
        "https://merchant.example/ok",
        "https://merchant.example/fail",
    )
    .callback_back_url("https://merchant.example/cart")
    .description(format!("Order {reference}"))
}

/// Creates a checkout of 12.34 USD through the SDK and pays it with `card` on its card form;
/// returns its id.
pub async fn paid(server: &TestServer, client: &Client, label: &str, card: &str) -> String {
    let created = client
        .start_payment(&checkout(&reference(label), "12.34"))
        .await
        .expect("a session");
    pay(server, &created.checkout_session_id, card).await;
    created.checkout_session_id
}

/// Pays session `id` with `card` through its card form, as the payer's browser does.
pub async fn pay(server: &TestServer, id: &str, card: &str) {
    let form = CardForm::open(&server.http, &server.base, id).await;
    let answer = form.submit(&server.http, card).await;
    assert!(
        answer.status() == 303 || answer.status() == 200,
        "paying {id}: {}",
        answer.status()
    );
}
