//! A failing endpoint backs off as a whole: its circuit opens after failures in a row, one
//! probe goes when it has waited, it is disabled after failing for the configured span
//! (shown on the endpoint and in its deliveries log, its pending deliveries cancelled, no new
//! event queued for it), and its merchant enables it again.
//!
//! The server runs the schedule at a hundredth of its pace; the circuit opens after 3 failures
//! for 1 s, then 2 s, then 4 s at most, and the endpoint is disabled after 6 s of failures.
//! Prints its figures (for docs/reliability.md) on stderr.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::fairness::cancelled_session;
use crate::support::{Mode, TestServer};
use crate::{call, receiver, register, wait_for, FAST};

/// The endpoint `id` as the terminal lists it.
async fn endpoint(server: &TestServer, id: &str) -> Value {
    let list = call(server, Method::GET, "/pay/api/webhook-endpoints").await;
    assert_eq!(list.status, 200, "{}", list.body);
    list.body
        .as_array()
        .and_then(|all| all.iter().find(|e| e["id"] == id).cloned())
        .expect("the endpoint is listed")
}

/// Waits (up to 30 s) until the endpoint satisfies `done`; returns it.
async fn endpoint_once(
    server: &TestServer,
    id: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let started = Instant::now();
    loop {
        let e = endpoint(server, id).await;
        if done(&e) {
            return e;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "waited for {what}: {e:#}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_endpoints_circuit_opens_then_it_is_disabled_and_enabled_again() {
    let Some(receiver) = receiver("webhooks-circuit") else {
        return;
    };
    let mut settings = FAST.to_vec();
    settings.extend_from_slice(&[
        ("CHECKOUT__WEBHOOKS__CIRCUIT_FAILURES", "3"),
        ("CHECKOUT__WEBHOOKS__CIRCUIT_OPEN_SECONDS", "100"),
        ("CHECKOUT__WEBHOOKS__CIRCUIT_MAX_OPEN_SECONDS", "400"),
        ("CHECKOUT__WEBHOOKS__DISABLE_AFTER_SECONDS", "6"),
    ]);
    let server = TestServer::start("webhooks-circuit", Mode::Sandbox, &settings).await;
    let (id, secret) = register(&server, receiver.url("/hooks").as_str(), None).await;
    receiver.set_secrets(&[secret]);
    receiver.set_mode("fail");
    let token = server.token().await;
    let started = Instant::now();
    for n in 0..3 {
        cancelled_session(&server, &token, &format!("CIRCUIT-{n}")).await;
    }

    // Three failures in a row open the circuit.
    let open = endpoint_once(&server, &id, "an open circuit", |e| e["circuit"] == "open").await;
    assert_eq!(open["enabled"], true);
    assert!(
        open["consecutiveFailures"].as_u64().unwrap() >= 3,
        "{open:#}"
    );
    assert!(open["circuitOpenUntilDateTime"].is_string(), "{open:#}");
    assert!(open["failingSinceDateTime"].is_string(), "{open:#}");
    let opened_after = started.elapsed().as_secs_f64();

    // Probes fail; after 6 s of failures the endpoint is disabled, with a reason.
    let disabled = endpoint_once(&server, &id, "the endpoint disabled", |e| {
        e["enabled"] == false
    })
    .await;
    let disabled_after = started.elapsed().as_secs_f64();
    assert_eq!(disabled["circuit"], "disabled");
    assert!(disabled["disabledDateTime"].is_string(), "{disabled:#}");
    let reason = disabled["disabledReason"].as_str().unwrap();
    assert!(
        reason.contains("HTTP 500") && reason.contains("failed in a row"),
        "{reason}"
    );
    assert!(disabled_after >= 6.0, "{disabled_after}");

    // The attempts came one at a time, with the circuit's waits between them: no attempt
    // while it was open.
    let requests = receiver.requests();
    let times: Vec<f64> = requests
        .iter()
        .map(|r| r["received_at"].as_f64().unwrap())
        .collect();
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let long_gaps = gaps.iter().filter(|g| **g >= 0.9).count();
    assert!(long_gaps >= 2, "the circuit's waits: {gaps:.2?}");
    // Before its first failure the endpoint is healthy and may take its share at once (the
    // three events can be claimed together); from the first failed answer on, one at a time.
    let answers = receiver.answers();
    let first_failure = answers
        .iter()
        .filter_map(|a| a["answered_at"].as_f64())
        .fold(f64::MAX, f64::min);
    let failing: Vec<Value> = requests
        .iter()
        .filter(|r| r["received_at"].as_f64().is_some_and(|t| t > first_failure))
        .cloned()
        .collect();
    assert!(
        failing.len() >= 2,
        "attempts after the first failure: {failing:?}"
    );
    let at_once = crate::fairness::most_at_once(&failing, &answers);
    assert_eq!(at_once, 1, "a failing endpoint gets one attempt at a time");
    assert!(crate::fairness::most_at_once(&requests, &answers) <= 4);
    eprintln!(
        "circuit: 3 deliveries to a receiver answering 500; open after {opened_after:.1} s, \
         disabled after {disabled_after:.1} s, {} attempts in all, gaps {gaps:.2?}",
        requests.len()
    );

    // The deliveries log shows it too, and the pending deliveries were cancelled.
    let log = call(
        &server,
        Method::GET,
        &format!("/pay/api/webhook-endpoints/{id}/deliveries"),
    )
    .await;
    assert_eq!(log.body["endpoint"]["enabled"], false, "{}", log.body);
    assert_eq!(log.body["endpoint"]["disabledReason"], reason);
    let deliveries = log.body["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 3);
    assert!(
        deliveries.iter().all(|d| d["state"] == "cancelled"),
        "{deliveries:#?}"
    );

    // While disabled: no event is queued for it, and a redelivery queues nothing.
    let seen = receiver.requests().len();
    cancelled_session(&server, &token, "CIRCUIT-DISABLED").await;
    let event = deliveries[0]["eventId"].as_str().unwrap();
    let again = call(
        &server,
        Method::POST,
        &format!("/pay/api/events/{event}/redeliver"),
    )
    .await;
    assert_eq!(again.status, 202, "{}", again.body);
    assert_eq!(again.body["deliveries"], json!([]));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        receiver.requests().len(),
        seen,
        "nothing sent while disabled"
    );
    let log = call(
        &server,
        Method::GET,
        &format!("/pay/api/webhook-endpoints/{id}/deliveries"),
    )
    .await;
    assert_eq!(log.body["deliveries"].as_array().map(Vec::len), Some(3));

    // The merchant fixes its endpoint and enables it: the next event is delivered.
    receiver.set_mode("ok");
    let enabled = call(
        &server,
        Method::POST,
        &format!("/pay/api/webhook-endpoints/{id}/enable"),
    )
    .await;
    assert_eq!(enabled.status, 200, "{}", enabled.body);
    assert_eq!(enabled.body["enabled"], true);
    assert_eq!(enabled.body["circuit"], "closed");
    assert_eq!(enabled.body["consecutiveFailures"], 0);
    assert!(
        enabled.body.get("disabledReason").is_none(),
        "{}",
        enabled.body
    );
    let session = cancelled_session(&server, &token, "CIRCUIT-BACK").await;
    let delivered = wait_for(
        &receiver,
        Duration::from_secs(15),
        "the delivery after enabling",
        |r| {
            r.iter().any(|q| {
                q["mode"] == "ok"
                    && crate::body_of(q)["data"]["checkoutSessionId"] == session.as_str()
            })
        },
    )
    .await;
    assert!(delivered
        .iter()
        .filter(|q| q["mode"] == "ok")
        .all(|q| q["verified"] == json!([true])));
    let back = endpoint_once(&server, &id, "a closed circuit", |e| {
        e["circuit"] == "closed"
    })
    .await;
    assert_eq!(back["enabled"], true);
    assert!(server
        .log()
        .contains("webhook endpoint disabled after failing for days"));
}
