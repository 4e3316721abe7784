//! A noisy neighbour: one terminal with 16 endpoints that hang (they read the request and never
//! answer) and 100 events queued for each, next to a victim terminal whose one endpoint
//! answers at once. The server runs the production time-outs and pace (15 s to answer, one
//! look a second when idle); the victim's deliveries must still arrive within 2 s of their
//! event.
//!
//! Prints its figures (for docs/reliability.md) on stderr.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use checkout_domain::auth::Role;
use serde_json::{json, Value};

use crate::support::{Mode, TestServer};
use crate::{body_of, receiver, register};

/// The noisy neighbour's terminal.
const NOISY: &str = "NOISY-001";
/// How many endpoints it registers (the most a terminal may have).
const NOISY_ENDPOINTS: usize = 16;
/// How many events it has queued for each of them.
const NOISY_EVENTS: usize = 100;
/// How many victim events are measured.
const VICTIM_EVENTS: usize = 10;
/// The bound the issue sets on a victim's delivery.
const VICTIM_BOUND: f64 = 2.0;

/// Seconds since the epoch, as the receiver writes `received_at`.
fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A terminal with a client of its own; returns the client's token.
pub async fn other_merchant(server: &TestServer, number: &str) -> String {
    server.add_terminal(number, true).await;
    let (id, secret) = server.add_client(number, vec![Role::SvcTerminal]).await;
    server.token_for(&id, &secret).await
}

/// Registers `url` for the terminal of `token`; returns the answer.
pub async fn register_as(
    server: &TestServer,
    token: &str,
    url: &str,
) -> crate::support::server::Reply {
    server
        .post(
            "/pay/api/webhook-endpoints",
            Some(token),
            &json!({ "url": url }),
        )
        .await
}

/// Creates a checkout on `token`'s terminal and cancels it (one `payment.cancelled` event);
/// returns the session id once the cancel has answered (the event is committed by then).
pub async fn cancelled_session(server: &TestServer, token: &str, reference: &str) -> String {
    let body = json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "totalTransactionAmount": 1.5,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference,
    });
    let created = server
        .post("/pay/api/start-payment", Some(token), &body)
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.str("checkoutSessionId").to_owned();
    let cancelled = server
        .post(
            &format!("/pay/api/payment/{id}/cancel"),
            Some(token),
            &json!({}),
        )
        .await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
    id
}

/// The most requests that were open at once, from the receiver's request and answer lines.
pub fn most_at_once(requests: &[Value], answers: &[Value]) -> usize {
    let mut edges: Vec<(f64, i32)> = Vec::new();
    for r in requests {
        let start = r["received_at"].as_f64().unwrap_or_default();
        let end = answers
            .iter()
            .find(|a| a["received_at"].as_f64() == Some(start))
            .and_then(|a| a["answered_at"].as_f64())
            .unwrap_or(f64::MAX);
        edges.push((start, 1));
        edges.push((end, -1));
    }
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut open, mut most) = (0i32, 0i32);
    for (_, step) in edges {
        open += step;
        most = most.max(open);
    }
    usize::try_from(most).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_hanging_endpoints_of_one_terminal_never_delay_another_terminals_deliveries() {
    let Some(noisy_receiver) = receiver("fair-noisy") else {
        return;
    };
    let Some(victim_receiver) = receiver("fair-victim") else {
        return;
    };
    // The production pace: default time-outs, workers, poll interval and schedule.
    let server = TestServer::start("webhooks-fair", Mode::Sandbox, &[]).await;
    let noisy = other_merchant(&server, NOISY).await;
    for n in 0..NOISY_ENDPOINTS {
        let url = noisy_receiver.url(&format!("/hang/{n}"));
        let reply = register_as(&server, &noisy, url.as_str()).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let (_, secret) = register(&server, victim_receiver.url("/hooks").as_str(), None).await;
    victim_receiver.set_secrets(&[secret]);
    let victim = server.token().await;

    // 100 events of the noisy terminal: 1,600 deliveries, all due, each hanging for the
    // answer time-out.
    let started = Instant::now();
    let makers: Vec<_> = (0..4)
        .map(|maker| {
            let (server_base, token) = (server.base.clone(), noisy.clone());
            let http = server.http.clone();
            tokio::spawn(async move {
                for n in (maker..NOISY_EVENTS).step_by(4) {
                    let reference =
                        format!("NOISE-{n}-{}", &crate::support::server::uuid_like()[..8]);
                    let created: Value = http
                        .post(format!("{server_base}/pay/api/start-payment"))
                        .bearer_auth(&token)
                        .json(&json!({
                            "callbackSuccessUrl": "https://merchant.example/ok",
                            "callbackFailUrl": "https://merchant.example/fail",
                            "totalTransactionAmount": 1.5,
                            "currencyCode": "USD",
                            "transactionReferenceNumber": reference,
                        }))
                        .send()
                        .await
                        .expect("start-payment")
                        .json()
                        .await
                        .expect("a session");
                    let id = created["checkoutSessionId"].as_str().expect("an id");
                    let cancelled = http
                        .post(format!("{server_base}/pay/api/payment/{id}/cancel"))
                        .bearer_auth(&token)
                        .send()
                        .await
                        .expect("cancel");
                    assert_eq!(cancelled.status(), 200);
                }
            })
        })
        .collect();
    for maker in makers {
        maker.await.expect("the noisy events");
    }
    eprintln!(
        "noisy neighbour: {NOISY_EVENTS} events × {NOISY_ENDPOINTS} hanging endpoints queued in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // The noisy deliveries are taken and hang before the first victim event.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let mut latencies = Vec::new();
    let mut missing = 0;
    for n in 0..VICTIM_EVENTS {
        let id = cancelled_session(
            &server,
            &victim,
            &format!("VICTIM-{n}-{}", &crate::support::server::uuid_like()[..8]),
        )
        .await;
        let committed = unix_now();
        let deadline = Instant::now() + Duration::from_secs(20);
        let arrived = loop {
            let found = victim_receiver
                .requests()
                .into_iter()
                .find(|r| body_of(r)["data"]["checkoutSessionId"] == id.as_str());
            if let Some(request) = found {
                break request["received_at"].as_f64();
            }
            if Instant::now() > deadline {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        match arrived {
            Some(at) => latencies.push(at - committed),
            None => missing += 1,
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let noisy_requests = noisy_receiver.requests();
    let at_once = most_at_once(&noisy_requests, &noisy_receiver.answers());
    let worst = latencies.iter().cloned().fold(0.0, f64::max);
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    eprintln!(
        "noisy neighbour: victim deliveries {} of {VICTIM_EVENTS} within 20 s, latency after the \
         event's commit: median {median:.3} s, worst {worst:.3} s, all {latencies:.3?}; the noisy \
         receiver got {} requests, at most {at_once} at once",
        latencies.len(),
        noisy_requests.len()
    );
    assert_eq!(missing, 0, "every victim delivery arrives");
    assert!(
        worst < VICTIM_BOUND,
        "every victim delivery within {VICTIM_BOUND} s of its event: {latencies:?}"
    );
}
