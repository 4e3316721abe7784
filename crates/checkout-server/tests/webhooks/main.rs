//! Merchant webhooks through the real binary over Postgres, delivered to a real receiver on
//! loopback (`scripts/webhook_receiver.py`) that verifies every request with the third-party
//! `standardwebhooks` library from PyPI, never with this project's signing code.
//!
//! The servers here run the retry schedule at a hundredth of its real pace
//! (`CHECKOUT__WEBHOOKS__TIME_SCALE`) and look for due deliveries every 50 ms.

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

#[path = "../support/mod.rs"]
mod support;

mod circuit;
mod crashes;
mod delivery;
mod endpoints;
mod fairness;
mod limits;
mod listen;
mod metadata;
mod operator_log;
mod outbox;

use std::time::{Duration, Instant};

use checkout_webhooks::testing::Receiver;
use reqwest::Method;
use serde_json::{json, Value};

use support::payer::CardForm;
use support::server::artifacts_dir;
use support::{Mode, TestServer};

/// Approved and captured.
pub const APPROVED: &str = "4242424242424242";
/// Approved, not captured.
pub const AUTHORIZED: &str = "4000000000000077";
/// Declined.
pub const DECLINED: &str = "4000000000000002";
/// The processor's answer is lost; reconciliation settles it (approved).
pub const LOST_ANSWER: &str = "4000000000000184";

/// Settings that run the webhook schedule, the expiry sweep and reconciliation in seconds.
pub const FAST: &[(&str, &str)] = &[
    ("CHECKOUT__WEBHOOKS__POLL_MS", "50"),
    ("CHECKOUT__WEBHOOKS__TIME_SCALE", "0.01"),
    ("CHECKOUT__WEBHOOKS__TIMEOUT_MS", "1000"),
    ("CHECKOUT__CHECKOUT__EXPIRY_SWEEP_SECONDS", "1"),
    ("CHECKOUT__CHECKOUT__RECONCILE_SWEEP_SECONDS", "1"),
    ("CHECKOUT__CHECKOUT__RECONCILE_AFTER_SECONDS", "1"),
];

/// A sandbox server with [`FAST`] settings.
pub async fn fast_server(label: &str) -> TestServer {
    TestServer::start(label, Mode::Sandbox, FAST).await
}

/// A receiver that verifies with no secret yet; `None` when it cannot be installed (the
/// tests then return, after a loud message from the installer).
pub fn receiver(label: &str) -> Option<Receiver> {
    Receiver::start(&artifacts_dir(label).join("receiver"), &[])
}

/// Registers an endpoint at `url` for `events` (every type when `None`); returns its id and
/// secret.
pub async fn register(server: &TestServer, url: &str, events: Option<&[&str]>) -> (String, String) {
    let token = server.token().await;
    let mut body = json!({ "url": url });
    if let Some(events) = events {
        body["events"] = json!(events);
    }
    let reply = server
        .post("/pay/api/webhook-endpoints", Some(&token), &body)
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    (reply.str("id").to_owned(), reply.str("secret").to_owned())
}

/// `method path` with the sandbox terminal's token.
pub async fn call(server: &TestServer, method: Method, path: &str) -> support::server::Reply {
    let token = server.token().await;
    server.send(method, path, Some(&token), None).await
}

/// Pays session `id` with `card` through its card form.
pub async fn pay(server: &TestServer, id: &str, card: &str) {
    let form = CardForm::open(&server.http, &server.base, id).await;
    let answer = form.submit(&server.http, card).await;
    assert!(
        answer.status() == 303 || answer.status() == 200,
        "{}",
        answer.status()
    );
}

/// The requests whose `webhook-id` is `id`.
pub fn requests_for(receiver: &Receiver, id: &str) -> Vec<Value> {
    receiver
        .requests()
        .into_iter()
        .filter(|r| r["headers"]["webhook-id"] == id)
        .collect()
}

/// Waits (up to `within`) until `done` holds for the receiver's requests; returns them.
pub async fn wait_for(
    receiver: &Receiver,
    within: Duration,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let requests = receiver.requests();
        if done(&requests) {
            return requests;
        }
        assert!(
            started.elapsed() < within,
            "waited {within:?} for {what}; the receiver has: {requests:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The event body of a request.
pub fn body_of(request: &Value) -> Value {
    serde_json::from_str(request["body"].as_str().expect("a body")).expect("a JSON body")
}

/// The receiver's requests half a second after `seen`: to check that nothing more arrives.
pub async fn after_a_moment(receiver: &Receiver, seen: Vec<Value>) -> Vec<Value> {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let now = receiver.requests();
    if now.len() > seen.len() {
        now
    } else {
        seen
    }
}
