//! A network partition between the service and its database, through the real binary: the
//! proxy in front of the test cluster stops forwarding bytes without closing any socket
//! (`DbProxy::blackhole`). Requests answer a 503 ProblemDetails within the bound instead of
//! hanging, readiness turns 503, a WARN line says what stalled; after the heal the service
//! serves again within seconds, and every session it acknowledged is there.
//!
//! The test prints its figures (time to the first 503, slowest answer during the cut,
//! recovery after the heal) on stderr for `docs/decisions/0018-shutdown-and-database-timeouts.md`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use checkout_test_db::TestDatabase;
use serde_json::json;

use crate::db_proxy::DbProxy;
use crate::support::server::Reply;
use crate::support::{Mode, TestServer};

/// What a request may take during a partition: the answer bound (7 s by default) and a
/// checkout (5 s) with slack for a busy machine, well under a proxy's usual 30 s.
const BOUND: Duration = Duration::from_secs(15);

fn create_body(reference: &str) -> serde_json::Value {
    json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "totalTransactionAmount": 12.34,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference,
    })
}

/// A create or a status read, timed.
async fn timed(server: &TestServer, token: &str, n: usize, read: &str) -> (Duration, Reply) {
    let started = Instant::now();
    let reply = if n % 2 == 0 {
        let reference = format!("CUT-{n}-{}", &crate::support::server::uuid_like()[..8]);
        server
            .post(
                "/pay/api/start-payment",
                Some(token),
                &create_body(&reference),
            )
            .await
    } else {
        server
            .get(&format!("/pay/api/payment/{read}"), Some(token))
            .await
    };
    (started.elapsed(), reply)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blackholed_database_costs_seconds_and_loses_no_acknowledged_session() {
    let db = Arc::new(TestDatabase::create().await.expect("a test database"));
    let proxy = DbProxy::start(db.url()).await;
    let url = proxy.url();
    let server =
        TestServer::start_on(db, "partition", Mode::Sandbox, &[("DATABASE_URL", &url)]).await;
    let token = server.token().await;
    let mut acknowledged = Vec::new();
    for _ in 0..4 {
        acknowledged.push(server.new_checkout("BEFORE").await);
    }
    assert_eq!(server.get("/health/ready", None).await.status, 200);

    proxy.blackhole();
    let cut = Instant::now();

    // Creates and status reads on every pooled connection, all at once.
    let read = acknowledged[0].clone();
    let wave = |first: usize| {
        let (server, token, read) = (&server, &token, &read);
        futures_wave(first, move |n| timed(server, token, n, read))
    };
    let readiness = async {
        loop {
            if server.get("/health/ready", None).await.status == 503 {
                return cut.elapsed();
            }
            assert!(cut.elapsed() < BOUND, "readiness still 200 during the cut");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let (answers, ready_503) = tokio::join!(wave(0), readiness);
    let mut slowest = Duration::ZERO;
    let mut first_503 = None;
    for (took, reply) in &answers {
        crate::assert_problem(reply, 503);
        assert_eq!(reply.headers["retry-after"], "1");
        assert!(*took < BOUND, "a request took {took:?} during the cut");
        slowest = slowest.max(*took);
        first_503 = Some(first_503.map_or(*took, |f: Duration| f.min(*took)));
    }
    // Requests after the first stall take new connections, which hang too: still bounded.
    let second = wave(10).await;
    for (took, reply) in &second {
        crate::assert_problem(reply, 503);
        assert!(*took < BOUND, "a request took {took:?} later in the cut");
        slowest = slowest.max(*took);
    }
    let warned = server
        .log()
        .lines()
        .any(|line| line.contains("WARN") && line.contains("database connection stalled"));
    assert!(warned, "a stall is logged at WARN: {}", server.log());

    proxy.heal();
    let healed = Instant::now();
    let recovered = loop {
        let reference = format!("AFTER-{}", &crate::support::server::uuid_like()[..8]);
        let reply = server
            .post(
                "/pay/api/start-payment",
                Some(&token),
                &create_body(&reference),
            )
            .await;
        if reply.status == 200 {
            acknowledged.push(reply.str("checkoutSessionId").to_owned());
            break healed.elapsed();
        }
        assert!(
            healed.elapsed() < Duration::from_secs(20),
            "no create served 20 s after the heal: {}",
            reply.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let ready_again = loop {
        if server.get("/health/ready", None).await.status == 200 {
            break healed.elapsed();
        }
        assert!(
            healed.elapsed() < Duration::from_secs(20),
            "not ready 20 s after the heal"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for id in &acknowledged {
        assert_eq!(server.status_record(id).await["state"], "Pending", "{id}");
    }
    assert!(
        !server.log().contains("\"level\":\"ERROR\""),
        "a partition is not a bug: {}",
        server.log()
    );
    eprintln!(
        "partition: readiness 503 after {ready_503:?}; first request 503 after {:?}, slowest \
         {slowest:?} ({} requests); after the heal a create served in {recovered:?}, ready \
         again in {ready_again:?}",
        first_503.unwrap_or_default(),
        answers.len() + second.len()
    );
}

/// Six requests at once (numbered from `first`), their answers in order.
async fn futures_wave<F, Fut>(first: usize, request: F) -> Vec<(Duration, Reply)>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = (Duration, Reply)>,
{
    join_all((first..first + 6).map(request).collect()).await
}

/// Awaits every future of `futures` concurrently; their outputs in order.
async fn join_all<Fut: std::future::Future>(futures: Vec<Fut>) -> Vec<Fut::Output> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<Fut::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
