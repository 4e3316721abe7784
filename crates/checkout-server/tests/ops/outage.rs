//! A database outage: every open connection cut and new ones refused. API calls answer 503
//! ProblemDetails within the pool's checkout timeout, pages an error page, readiness 503; when
//! the database is back the same process serves again (the broken connections were dropped
//! from the pool, not reused).

use std::sync::Arc;
use std::time::{Duration, Instant};

use checkout_test_db::TestDatabase;

use crate::db_proxy::DbProxy;
use crate::support::{Mode, TestServer};

/// The pool's checkout timeout (`PoolSettings::new`), plus slack for a busy machine.
const WITHIN: Duration = Duration::from_secs(7);

#[tokio::test]
async fn an_outage_is_a_clean_503_and_the_service_recovers_by_itself() {
    let db = Arc::new(TestDatabase::create().await.expect("a test database"));
    let proxy = DbProxy::start(db.url()).await;
    let url = proxy.url();
    let server = TestServer::start_on(
        db,
        "outage",
        Mode::Sandbox,
        &[
            ("DATABASE_URL", &url),
            ("CHECKOUT__METRICS__ADDRESS", "127.0.0.1:0"),
        ],
    )
    .await;
    let token = server.token().await;
    let before = server.new_checkout("OUTAGE").await;
    assert_eq!(server.get("/health/ready", None).await.status, 200);

    proxy.down();

    let started = Instant::now();
    let ready = server.get("/health/ready", None).await;
    crate::assert_problem(&ready, 503);
    let body = crate::support::server::uuid_like();
    let create = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &serde_json::json!({
                "callbackSuccessUrl": "https://merchant.example/ok",
                "callbackFailUrl": "https://merchant.example/fail",
                "totalTransactionAmount": 12.34,
                "currencyCode": "USD",
                "transactionReferenceNumber": format!("OUTAGE-{}", &body[..8]),
            }),
        )
        .await;
    crate::assert_problem(&create, 503);
    assert_eq!(create.headers["retry-after"], "1");
    let status = server
        .get(&format!("/pay/api/payment/{before}"), Some(&token))
        .await;
    crate::assert_problem(&status, 503);
    let page = server
        .http
        .get(format!("{}/pay/checkout-payment/{before}", server.base))
        .send()
        .await
        .expect("the page answers");
    assert_eq!(page.status(), 503);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(
        started.elapsed() < WITHIN * 4,
        "four calls during the outage took {:?}",
        started.elapsed()
    );
    assert_eq!(server.get("/health/live", None).await.status, 200);

    proxy.up().await;

    let back = Instant::now();
    loop {
        if server.get("/health/ready", None).await.status == 200 {
            break;
        }
        assert!(back.elapsed() < Duration::from_secs(20), "not ready again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The pool held connections that the outage broke: none of them is handed out again.
    for _ in 0..8 {
        let record = server.status_record(&before).await;
        assert_eq!(record["state"], "Pending");
    }
    server.new_checkout("AFTER").await;
    // The on-call engineer sees the outage in the database's error counter.
    let families = crate::metrics::parse(&crate::metrics::scrape(&server).await);
    assert!(
        crate::metrics::total(&families, "checkout_db_errors_total") >= 1.0,
        "the outage's failed connections and statements are counted"
    );
    assert!(
        !server.log().contains("\"level\":\"ERROR\""),
        "an outage is not a bug: {}",
        server.log()
    );
}

/// The card-testing guard fails closed: a card post while the database is down is a 503
/// page, and nothing reaches the processor.
#[tokio::test]
async fn a_card_post_during_an_outage_is_a_503_page_and_never_sent() {
    let db = Arc::new(TestDatabase::create().await.expect("a test database"));
    let proxy = DbProxy::start(db.url()).await;
    let url = proxy.url();
    let server =
        TestServer::start_on(db, "outage-card", Mode::Sandbox, &[("DATABASE_URL", &url)]).await;
    let id = server.new_checkout("OUTAGE-CARD").await;
    let form = crate::support::payer::CardForm::open(&server.http, &server.base, &id).await;

    proxy.down();
    let answer = form.submit(&server.http, "4242424242424242").await;
    assert_eq!(answer.status(), 503);
    assert!(answer.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    proxy.up().await;

    let back = Instant::now();
    while server.get("/health/ready", None).await.status != 200 {
        assert!(back.elapsed() < Duration::from_secs(20), "not ready again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(crate::support::payer::attempts(&server, &id).await, 0);
    assert_eq!(server.status_record(&id).await["state"], "Pending");
}
