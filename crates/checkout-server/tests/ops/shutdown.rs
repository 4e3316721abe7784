//! Graceful shutdown through the real binary (`docs/decisions/0018-shutdown-and-database-timeouts.md`):
//! after SIGTERM readiness answers 503 at once while the listener still accepts and serves
//! through the grace period, keep-alive clients are told to close, a card payment in flight
//! finishes after the listener closed, the process exits 0, and a webhook delivery it had
//! claimed is given back so that another instance delivers it at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::json;

use crate::support::payer::CardForm;
use crate::support::{Mode, TestServer};

/// Approved and captured by the sandbox processor.
const APPROVED: &str = "4242424242424242";

/// A client of its own: every request here opens a new connection.
fn fresh_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_turns_readiness_first_serves_through_the_grace_period_and_finishes_in_flight_work()
{
    // Each processor call waits 2 s: a card post (tokenize, authorize) outlasts the grace.
    let mut server = TestServer::start(
        "shutdown-drain",
        Mode::Sandbox,
        &[
            ("CHECKOUT__PROCESSOR__SANDBOX_DELAY_MS", "2000"),
            ("CHECKOUT__SERVER__SHUTDOWN_GRACE_MS", "2500"),
        ],
    )
    .await;
    let id = server.new_checkout("SHUTDOWN").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    // A keep-alive client with one open connection.
    let keep_alive = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let first = keep_alive
        .get(format!("{}/health/live", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    assert!(first
        .headers()
        .get("connection")
        .is_none_or(|c| c != "close"));

    let http = server.http.clone();
    let payment = tokio::spawn(async move { form.submit(&http, APPROVED).await });
    tokio::time::sleep(Duration::from_millis(300)).await;

    server.send_sigterm();
    let signalled = Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let ready = fresh_client()
        .get(format!("{}/health/ready", server.base))
        .send()
        .await
        .expect("readiness answers during the grace period");
    assert_eq!(ready.status(), 503, "readiness turns 503 at once");
    let live = fresh_client()
        .get(format!("{}/health/live", server.base))
        .send()
        .await
        .expect("a new connection is served during the grace period");
    assert_eq!(live.status(), 200);
    let again = keep_alive
        .get(format!("{}/health/live", server.base))
        .send()
        .await
        .expect("the keep-alive connection is served");
    assert_eq!(again.status(), 200);
    assert_eq!(
        again.headers()["connection"],
        "close",
        "a keep-alive client is asked to close its connection"
    );
    let checked = signalled.elapsed();
    assert!(
        checked < Duration::from_millis(2500),
        "the checks ran within the grace period ({checked:?})"
    );

    let paid = payment.await.unwrap();
    assert_eq!(paid.status(), 303, "the card post in flight is answered");
    let answered = signalled.elapsed();
    let status = tokio::task::block_in_place(|| server.wait_for_exit(Duration::from_secs(30)))
        .expect("the server exits after SIGTERM");
    assert!(status.success(), "exit status {status}");
    let exited = signalled.elapsed();
    eprintln!(
        "shutdown: payment answered {answered:?} after SIGTERM, process exited after {exited:?}"
    );
    let log = server.log();
    assert!(log.contains("stop signal"), "{log}");
    assert!(log.contains("service stopped"), "{log}");

    server.restart().await;
    let state = server.status_record(&id).await["state"].clone();
    assert_eq!(state, "Successful", "the payment in flight completed");
}

/// A receiver that accepts connections and never answers: an attempt to it stays in flight.
struct SilentReceiver {
    url: String,
    connections: Arc<AtomicUsize>,
}

impl SilentReceiver {
    async fn start() -> SilentReceiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                held.push(socket);
            }
        });
        SilentReceiver { url, connections }
    }

    async fn wait_for(&self, n: usize, within: Duration) -> Duration {
        let started = Instant::now();
        while self.connections.load(Ordering::SeqCst) < n {
            assert!(
                started.elapsed() < within,
                "waited {within:?} for connection {n} to the receiver"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        started.elapsed()
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn count(url: &str, sql: &str) -> i64 {
    use diesel_async::RunQueryDsl;
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    diesel::sql_query(sql)
        .get_result::<Count>(&mut conn)
        .await
        .unwrap()
        .n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_delivery_claimed_at_shutdown_is_given_back_and_claimed_at_once_elsewhere() {
    let receiver = SilentReceiver::start().await;
    let settings = [
        ("CHECKOUT__WEBHOOKS__POLL_MS", "50"),
        // The attempt would wait 30 s for an answer; its lease is longer still.
        ("CHECKOUT__WEBHOOKS__TIMEOUT_MS", "30000"),
        ("CHECKOUT__SERVER__SHUTDOWN_GRACE_MS", "0"),
    ];
    let mut server = TestServer::start("shutdown-webhooks", Mode::Sandbox, &settings).await;
    let token = server.token().await;
    let reply = server
        .post(
            "/pay/api/webhook-endpoints",
            Some(&token),
            &json!({ "url": receiver.url }),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    server.paid_checkout("SHUTDOWN-HOOK", APPROVED).await;
    receiver.wait_for(1, Duration::from_secs(15)).await;
    let url = server.database_url().to_owned();
    assert!(
        count(
            &url,
            "SELECT count(*) AS n FROM webhook_deliveries WHERE claim IS NOT NULL"
        )
        .await
            >= 1,
        "a delivery is claimed and in flight"
    );

    server.send_sigterm();
    let signalled = Instant::now();
    let status = tokio::task::block_in_place(|| server.wait_for_exit(Duration::from_secs(20)))
        .expect("the server exits after SIGTERM");
    assert!(status.success(), "exit status {status}");
    let exited = signalled.elapsed();
    assert!(
        exited < Duration::from_secs(10),
        "the attempt in flight did not hold the exit until its 30 s time-out ({exited:?})"
    );
    assert_eq!(
        count(
            &url,
            "SELECT count(*) AS n FROM webhook_deliveries WHERE claim IS NOT NULL"
        )
        .await,
        0,
        "every claim was given back"
    );
    assert!(
        count(
            &url,
            "SELECT count(*) AS n FROM webhook_deliveries \
             WHERE state = 'pending' AND attempts = 0 AND next_attempt_at <= now()"
        )
        .await
            >= 1,
        "the delivery is due as it was, no attempt counted"
    );

    // Another instance (this one, started again) claims it at once, not after the lease.
    let before = receiver.connections.load(Ordering::SeqCst);
    server.restart().await;
    let waited = receiver.wait_for(before + 1, Duration::from_secs(5)).await;
    eprintln!("shutdown: exited {exited:?} after SIGTERM; the given-back delivery was attempted again {waited:?} after the restart");
}
