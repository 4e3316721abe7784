//! Deliveries survive kill -9, and two instances never attempt one delivery at once.
//!
//! Both tests print their figures (for docs/reliability.md) on stderr.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use diesel::sql_types::Uuid as SqlUuid;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use crate::support::payer::CardForm;
use crate::support::{Mode, TestServer};
use crate::{fast_server, receiver, register, wait_for, APPROVED, FAST};

/// How many kill -9 rounds (`WEBHOOK_KILL_ROUNDS`, 20 by default).
fn kill_rounds() -> usize {
    std::env::var("WEBHOOK_KILL_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20)
}

#[derive(QueryableByName)]
struct EventId {
    #[diesel(sql_type = SqlUuid)]
    id: uuid::Uuid,
}

/// Every event committed so far.
async fn committed_events(url: &str) -> BTreeSet<String> {
    let mut conn = AsyncPgConnection::establish(url).await.expect("connect");
    let rows: Vec<EventId> = diesel::sql_query("SELECT id FROM events")
        .load(&mut conn)
        .await
        .expect("events");
    rows.into_iter().map(|r| r.id.to_string()).collect()
}

/// The requests per `webhook-id`, verified ones only.
fn verified_by_id(requests: &[Value]) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for r in requests {
        if r["verified"]
            .as_array()
            .is_some_and(|v| v.iter().any(|x| x == true))
        {
            let id = r["headers"]["webhook-id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            *seen.entry(id).or_default() += 1;
        }
    }
    seen
}

/// Pays a new session with the approved card; the answer may be lost to a kill.
async fn pay_once(http: reqwest::Client, base: String, token: String, n: usize) {
    let body = serde_json::json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "totalTransactionAmount": 3.5,
        "currencyCode": "USD",
        "transactionReferenceNumber": format!("KILL-{n}-{}", &crate::support::server::uuid_like()[..8]),
    });
    let Ok(created) = http
        .post(format!("{base}/pay/api/start-payment"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
    else {
        return;
    };
    let Ok(created) = created.json::<Value>().await else {
        return;
    };
    let Some(id) = created["checkoutSessionId"].as_str() else {
        return;
    };
    let Some(form) = CardForm::try_open(&http, &base, id).await else {
        return;
    };
    let _ = form.submit(&http, APPROVED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_while_payments_complete_and_deliveries_are_in_flight_loses_no_event() {
    let Some(receiver) = receiver("webhooks-kill") else {
        return;
    };
    let mut server = fast_server("webhooks-kill").await;
    let (_, secret) = register(&server, receiver.url("/hooks").as_str(), None).await;
    receiver.set_secrets(&[secret]);
    // Each answer takes 300 ms: deliveries are in flight when the kill comes.
    receiver.set_mode("slow");
    let token = server.token().await;
    let started = Instant::now();
    let mut paid = 0;
    for round in 0..kill_rounds() {
        let payers: Vec<_> = (0..4)
            .map(|n| {
                paid += 1;
                tokio::spawn(pay_once(
                    server.http.clone(),
                    server.base.clone(),
                    token.clone(),
                    round * 10 + n,
                ))
            })
            .collect();
        // Kill somewhere between the payments and their deliveries.
        tokio::time::sleep(Duration::from_millis(150 + 60 * (round as u64 % 6))).await;
        server.kill_hard();
        for payer in payers {
            let _ = payer.await;
        }
        server.restart().await;
    }
    let rounds_took = started.elapsed();
    // After the last restart, everything committed is delivered.
    let events = committed_events(server.database_url()).await;
    assert!(
        events.len() >= kill_rounds(),
        "payments completed: {}",
        events.len()
    );
    let settle = Instant::now();
    let requests = wait_for(&receiver, Duration::from_secs(120), "every event", |r| {
        let seen = verified_by_id(r);
        events.iter().all(|id| seen.contains_key(id))
    })
    .await;
    let seen = verified_by_id(&requests);
    let duplicates: usize = seen.values().map(|n| n - 1).sum();
    let unsigned = requests.len() - seen.values().sum::<usize>();
    assert_eq!(unsigned, 0, "every request verified");
    eprintln!(
        "webhooks kill -9: {} rounds in {:.1} s, {} payments started, {} events committed, \
         {} delivered at least once (0 lost), {} delivered twice or more (attempts cut by a \
         kill), all delivered {:.1} s after the last restart",
        kill_rounds(),
        rounds_took.as_secs_f64(),
        paid,
        events.len(),
        events.iter().filter(|id| seen.contains_key(*id)).count(),
        duplicates,
        settle.elapsed().as_secs_f64(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_never_attempt_one_delivery_at_once() {
    let Some(receiver) = receiver("webhooks-two") else {
        return;
    };
    let a = fast_server("webhooks-two-a").await;
    let key = a.dir.join("data/keys/sandbox.pk8");
    let key = key.to_str().expect("a UTF-8 path");
    let mut settings = FAST.to_vec();
    settings.extend_from_slice(&[
        ("CHECKOUT__IDENTITY__KEY_FILE", key),
        ("CHECKOUT__SANDBOX__CLIENT_SECRET", a.client_secret.as_str()),
    ]);
    let b = TestServer::start_on(a.database(), "webhooks-two-b", Mode::Sandbox, &settings).await;
    let (_, secret) = register(&a, receiver.url("/hooks").as_str(), None).await;
    receiver.set_secrets(&[secret]);
    receiver.set_mode("slow");
    let token = a.token().await;
    let payers: Vec<_> = (0..30)
        .map(|n| {
            let base = if n % 2 == 0 {
                a.base.clone()
            } else {
                b.base.clone()
            };
            tokio::spawn(pay_once(a.http.clone(), base, token.clone(), n))
        })
        .collect();
    for payer in payers {
        payer.await.expect("join");
    }
    let events = committed_events(a.database_url()).await;
    assert_eq!(events.len(), 30);
    let requests = wait_for(&receiver, Duration::from_secs(60), "every event", |r| {
        let seen = verified_by_id(r);
        events.iter().all(|id| seen.contains_key(id))
    })
    .await;
    let requests = crate::after_a_moment(&receiver, requests).await;
    // Eight workers in two processes claimed the 30 deliveries: each was attempted once.
    let seen = verified_by_id(&requests);
    assert_eq!(requests.len(), 30, "{requests:#?}");
    assert!(seen.values().all(|n| *n == 1), "{seen:?}");
    // And no two attempts of one message overlapped in time.
    let mut spans: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for answer in receiver.answers() {
        spans
            .entry(answer["answered"].as_str().unwrap_or_default().to_owned())
            .or_default()
            .push((
                answer["received_at"].as_f64().unwrap(),
                answer["answered_at"].as_f64().unwrap(),
            ));
    }
    for (id, mut spans) in spans {
        spans.sort_by(|x, y| x.0.total_cmp(&y.0));
        assert!(
            spans.windows(2).all(|w| w[1].0 >= w[0].1),
            "{id}: {spans:?}"
        );
    }
    eprintln!(
        "webhooks two instances: 30 payments over two instances, 30 events, 30 attempts, \
         each event attempted once, no overlap"
    );
}
