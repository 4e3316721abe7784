//! Two server instances on two ports sharing one Postgres database, as behind a load balancer:
//! no state lives in one process that the other needs.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use crate::support::payer::{attempts, CardForm};
use crate::support::{Mode, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_on_one_database_share_races_sessions_and_pages() {
    let a = TestServer::start(
        "instance-a",
        Mode::Sandbox,
        &[("CHECKOUT__DATABASE__POOL_SIZE", "8")],
    )
    .await;
    // The same signing key and sandbox credentials, as two instances of one deployment have.
    let key = a.dir.join("data/keys/sandbox.pk8");
    let key = key.to_str().expect("a UTF-8 path");
    let b = TestServer::start_on(
        a.database(),
        "instance-b",
        Mode::Sandbox,
        &[
            ("CHECKOUT__DATABASE__POOL_SIZE", "8"),
            ("CHECKOUT__IDENTITY__KEY_FILE", key),
            ("CHECKOUT__SANDBOX__CLIENT_SECRET", a.client_secret.as_str()),
        ],
    )
    .await;
    assert_ne!(a.port, b.port);
    let token = a.token().await;

    // A token issued by one instance is accepted by the other.
    let reply = b
        .get(
            "/pay/api/payment/00000000-0000-4000-8000-000000000000",
            Some(&token),
        )
        .await;
    assert_eq!(reply.status, 404, "{}", reply.body);

    // The duplicate race across both instances still has exactly one winner.
    let rounds = crate::rounds();
    for round in 0..rounds {
        let reference = format!("TWO-{round}-{}", &crate::support::server::uuid_like()[..8]);
        let body = Arc::new(json!({
            "callbackSuccessUrl": "https://merchant.example/ok",
            "callbackFailUrl": "https://merchant.example/fail",
            "totalTransactionAmount": 7.25,
            "currencyCode": "USD",
            "transactionReferenceNumber": reference
        }));
        let barrier = Arc::new(tokio::sync::Barrier::new(100));
        let requests: Vec<_> = (0..100)
            .map(|n| {
                let base = if n % 2 == 0 { &a.base } else { &b.base };
                let request = a
                    .http
                    .post(format!("{base}/pay/api/start-payment"))
                    .bearer_auth(&token)
                    .json(&*body);
                let barrier = barrier.clone();
                tokio::spawn(async move {
                    barrier.wait().await;
                    let response = request.send().await.expect("an answer");
                    let status = response.status().as_u16();
                    let body: serde_json::Value = response.json().await.unwrap_or_default();
                    (status, body["type"].as_str().unwrap_or_default().to_owned())
                })
            })
            .collect();
        let mut statuses: BTreeMap<(u16, String), usize> = BTreeMap::new();
        for request in requests {
            *statuses.entry(request.await.expect("join")).or_default() += 1;
        }
        let expected = BTreeMap::from([((200, String::new()), 1), ((422, "SVC_001".into()), 99)]);
        assert_eq!(statuses, expected, "round {round}");
    }

    // A session created through one instance is paid through the other's pages: the page
    // opened on A, the card form posted to B with A's cookie and token.
    let reply = a
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &json!({
                "callbackSuccessUrl": "https://merchant.example/ok",
                "callbackFailUrl": "https://merchant.example/fail",
                "totalTransactionAmount": 30,
                "currencyCode": "USD",
                "transactionReferenceNumber": format!("CROSS-{}", &crate::support::server::uuid_like()[..8])
            }),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.str("checkoutSessionId").to_owned();
    let mut form = CardForm::open(&a.http, &a.base, &id).await;
    form.action = format!("{}/pay/process-payment", b.base);
    let paid = form.submit(&b.http, "4242424242424242").await;
    assert_eq!(paid.status(), 303);
    let location = paid.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.contains("state=Successful"), "{location}");
    let record = a.get(&format!("/pay/api/payment/{id}"), Some(&token)).await;
    assert_eq!(record.body["state"], "Successful");
    assert_eq!(attempts(&a, &id).await, 1);
    eprintln!(
        "two instances on one database: {rounds} rounds of 100 requests with one reference \
         split across both: 1 × 200 and 99 × SVC_001 each; a session made on A paid through \
         B's card form with A's page token: Successful"
    );
}
