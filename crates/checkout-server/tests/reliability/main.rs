//! Reliability over HTTP against the real binary and Postgres: racing duplicate requests,
//! racing card submissions, processor faults, SIGKILL crashes, two instances on one database.
//! Each check prints its figures. Rounds default to a CI-sized count; the full run is
//! `RELIABILITY_ROUNDS=50 cargo nextest run -p checkout-server --test reliability --no-capture`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

#[path = "../support/mod.rs"]
mod support;

mod combining;
mod crashes;
mod instances;
mod payments;

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::{json, Value};
use support::TestServer;

/// Rounds per race: `RELIABILITY_ROUNDS`, else 5.
pub(crate) fn rounds() -> usize {
    std::env::var("RELIABILITY_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

/// Sends `concurrency` copies of the same POST at once; returns status → count, and the
/// `type` of every 422.
async fn race(
    server: &TestServer,
    path: &str,
    token: &str,
    body: &Value,
    concurrency: usize,
) -> (BTreeMap<u16, usize>, Vec<String>) {
    let url = format!("{}{path}", server.base);
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(concurrency));
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let request = server.http.post(&url).bearer_auth(token).json(body);
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let response = request.send().await.expect("an answer");
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            (status, body["type"].as_str().unwrap_or_default().to_owned())
        }));
    }
    let mut statuses = BTreeMap::new();
    let mut types = Vec::new();
    for task in tasks {
        let (status, kind) = task.await.expect("join");
        *statuses.entry(status).or_insert(0) += 1;
        if status == 422 {
            types.push(kind);
        }
    }
    (statuses, types)
}

async fn one_winner_per_round(label: &str, path: &str, body_for: fn(&str) -> Value) {
    let server = TestServer::start(
        label,
        support::Mode::Sandbox,
        &[("CHECKOUT__DATABASE__POOL_SIZE", "16")],
    )
    .await;
    let token = server.token().await;
    let started = Instant::now();
    let rounds = rounds();
    let mut total_5xx = 0;
    for round in 0..rounds {
        let reference = format!("RACE-{round}-{}", &support::server::uuid_like()[..8]);
        let (statuses, types) = race(&server, path, &token, &body_for(&reference), 100).await;
        let ok = statuses.get(&200).copied().unwrap_or(0);
        let duplicates = statuses.get(&422).copied().unwrap_or(0);
        total_5xx += statuses
            .iter()
            .filter(|(s, _)| **s >= 500)
            .map(|(_, n)| n)
            .sum::<usize>();
        assert_eq!(ok, 1, "round {round}: exactly one 200, got {statuses:?}");
        assert_eq!(
            duplicates, 99,
            "round {round}: 99 duplicates, got {statuses:?}"
        );
        assert!(types.iter().all(|t| t == "SVC_001"), "{types:?}");
    }
    assert_eq!(total_5xx, 0);
    eprintln!(
        "{path}: {rounds} rounds of 100 concurrent requests with one reference: \
         {rounds} × (1 × 200, 99 × 422 SVC_001), 0 × 5xx, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

fn start_body(reference: &str) -> Value {
    json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "totalTransactionAmount": 10.00,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference
    })
}

fn link_body(reference: &str) -> Value {
    json!({
        "totalTransactionAmount": 5000,
        "currencyCode": "CRC",
        "transactionReferenceNumber": reference,
        "generalPurchaseDescription": "Race",
        "userEmail": "payer@example.com",
        "culture": "en"
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_start_payments_with_one_reference_have_one_winner() {
    one_winner_per_round("race-start", "/pay/api/start-payment", start_body).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_payment_links_with_one_reference_have_one_winner() {
    one_winner_per_round("race-link", "/pay/api/generate-payment-link", link_body).await;
}
