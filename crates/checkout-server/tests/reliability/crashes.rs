//! Crashes: the server killed with SIGKILL at random moments under a steady load of
//! start-payment requests, and started again over the same database. No acknowledged session
//! may be lost or changed, and no reference may appear twice.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::{json, Value};

use crate::support::{Mode, TestServer};

/// Kills per run: `CRASH_KILLS`, else 20.
fn kills() -> usize {
    std::env::var("CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

/// A random duration in `[from, from + spread)`.
fn random_between(from: Duration, spread: Duration) -> Duration {
    let mut bytes = [0u8; 4];
    getrandom::getrandom(&mut bytes).expect("randomness");
    let fraction = f64::from(u32::from_le_bytes(bytes)) / f64::from(u32::MAX);
    from + spread.mul_f64(fraction)
}

fn body(reference: &str) -> Value {
    json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "totalTransactionAmount": 19.99,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference
    })
}

/// What the load saw: acknowledged sessions by reference (their 200 body), and the
/// references whose request got no answer (the server died under it).
#[derive(Default)]
struct Ledger {
    acknowledged: BTreeMap<String, Value>,
    unanswered: Vec<String>,
}

/// One merchant backend sending start-payments back to back, each with a new reference, to
/// whichever address the server has now.
async fn merchant(
    worker: usize,
    base: Arc<RwLock<String>>,
    token: String,
    stop: Arc<AtomicBool>,
    ledger: Arc<Mutex<Ledger>>,
) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let reference = format!("CRASH-{worker}-{n}");
        let url = format!("{}/pay/api/start-payment", base.read().unwrap());
        let sent = http
            .post(url)
            .bearer_auth(&token)
            .json(&body(&reference))
            .send()
            .await;
        match sent {
            Ok(response) if response.status() == 200 => match response.json::<Value>().await {
                Ok(answer) => {
                    ledger
                        .lock()
                        .unwrap()
                        .acknowledged
                        .insert(reference, answer);
                }
                Err(_) => ledger.lock().unwrap().unanswered.push(reference),
            },
            Ok(response) => panic!("{reference}: unexpected {}", response.status()),
            Err(_) => {
                ledger.lock().unwrap().unanswered.push(reference);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

#[derive(QueryableByName)]
struct Counts {
    #[diesel(sql_type = BigInt)]
    rows: i64,
    #[diesel(sql_type = BigInt)]
    references: i64,
}

/// The number of session rows and of distinct merchant references among them.
async fn session_counts(url: &str) -> Counts {
    use diesel_async::RunQueryDsl;
    let mut conn = AsyncPgConnection::establish(url).await.expect("connect");
    diesel::sql_query(
        "SELECT count(*) AS rows, count(DISTINCT merchant_reference) AS references \
         FROM payment_sessions",
    )
    .get_result(&mut conn)
    .await
    .expect("counts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_under_load_loses_no_acknowledged_session_and_duplicates_none() {
    let mut server = TestServer::start(
        "crashes",
        Mode::Sandbox,
        &[("CHECKOUT__DATABASE__POOL_SIZE", "8")],
    )
    .await;
    let token = server.token().await;
    let base = Arc::new(RwLock::new(server.base.clone()));
    let stop = Arc::new(AtomicBool::new(false));
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let load: Vec<_> = (0..8)
        .map(|worker| {
            tokio::spawn(merchant(
                worker,
                base.clone(),
                token.clone(),
                stop.clone(),
                ledger.clone(),
            ))
        })
        .collect();

    let started = Instant::now();
    let kills = kills();
    for _ in 0..kills {
        tokio::time::sleep(random_between(
            Duration::from_millis(150),
            Duration::from_millis(700),
        ))
        .await;
        server.kill_hard();
        server.restart().await;
        *base.write().unwrap() = server.base.clone();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    for worker in load {
        worker.await.expect("a merchant worker");
    }
    let ledger = std::mem::take(&mut *ledger.lock().unwrap());
    assert!(
        ledger.acknowledged.len() > kills,
        "the load kept going between kills: {} acknowledged",
        ledger.acknowledged.len()
    );

    // Every acknowledged session is there, with the data it was created with.
    for (reference, answer) in &ledger.acknowledged {
        let id = answer["checkoutSessionId"].as_str().expect("an id");
        let reply = server
            .get(&format!("/pay/api/payment/{id}"), Some(&token))
            .await;
        assert_eq!(reply.status, 200, "{reference}: {}", reply.body);
        let record = &reply.body;
        assert_eq!(record["transactionReferenceNumber"], reference.as_str());
        assert_eq!(
            record["internalTransactionReferenceNumber"],
            answer["internalTransactionReferenceNumber"]
        );
        assert_eq!(record["state"], "Pending");
        assert_eq!(record["currencyCode"], "USD");
        assert!(
            reply.text.contains("\"totalTransactionAmount\":19.99"),
            "{}",
            reply.text
        );
    }

    // A merchant retries each request that got no answer: it either never committed (200
    // now) or did (SVC_001: the merchant queries it); either way one session per reference.
    let (mut committed_before, mut retried_ok) = (0, 0);
    for reference in &ledger.unanswered {
        let reply = server
            .post("/pay/api/start-payment", Some(&token), &body(reference))
            .await;
        match (reply.status.as_u16(), reply.body["type"].as_str()) {
            (200, _) => retried_ok += 1,
            (422, Some("SVC_001")) => committed_before += 1,
            other => panic!("{reference}: retry answered {other:?}: {}", reply.body),
        }
    }

    let counts = session_counts(server.database_url()).await;
    assert_eq!(counts.rows, counts.references, "no reference appears twice");
    let expected = ledger.acknowledged.len() + ledger.unanswered.len();
    assert_eq!(counts.rows, i64::try_from(expected).unwrap());
    eprintln!(
        "crashes: {kills} SIGKILLs under 8 concurrent merchants in {:.1} s; {} sessions \
         acknowledged, all present and unchanged; {} requests unanswered at a kill, of which \
         {committed_before} had committed (SVC_001 on retry) and {retried_ok} had not (200 \
         on retry); {} rows, no duplicate reference",
        started.elapsed().as_secs_f64(),
        ledger.acknowledged.len(),
        ledger.unanswered.len(),
        counts.rows
    );
}
