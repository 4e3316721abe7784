//! Write combining under load: 1,000 concurrent creates, of which 100 repeat a reference
//! another of them uses, through the real server with its default pool (creates queued
//! behind the statements in flight are written together, several sessions per statement).
//! Each reference has exactly one winner, every loser gets the spec's SVC_001 naming that
//! winner, and the database holds exactly the winners.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use crate::start_body;
use crate::support::{self, TestServer};

/// Distinct references; the first `REPEATED` of them are sent twice.
const REFERENCES: usize = 900;
const REPEATED: usize = 100;

#[derive(diesel::QueryableByName)]
struct Stored {
    #[diesel(sql_type = Text)]
    merchant_reference: String,
    #[diesel(sql_type = Text)]
    id: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_creates_with_a_hundred_repeated_references_have_the_right_winners() {
    let server = TestServer::start(
        "combining",
        support::Mode::Sandbox,
        &[
            ("CHECKOUT__DATABASE__POOL_SIZE", "16"),
            ("CHECKOUT__METRICS__ADDRESS", "127.0.0.1:0"),
        ],
    )
    .await;
    let token = server.token().await;
    let prefix = format!("COMB-{}", &support::server::uuid_like()[..8]);
    let mut references: Vec<String> = (0..REFERENCES).map(|i| format!("{prefix}-{i}")).collect();
    references.extend_from_within(..REPEATED);
    assert_eq!(references.len(), 1000);

    let url = format!("{}/pay/api/start-payment", server.base);
    let barrier = Arc::new(tokio::sync::Barrier::new(references.len()));
    let mut tasks = Vec::new();
    for reference in references {
        let request = server
            .http
            .post(&url)
            .bearer_auth(&token)
            .json(&start_body(&reference));
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let response = request.send().await.expect("an answer");
            let status = response.status().as_u16();
            let body: Value = response.json().await.expect("a JSON body");
            (reference, status, body)
        }));
    }
    let mut winners: HashMap<String, String> = HashMap::new();
    let mut losers: Vec<(String, Value)> = Vec::new();
    let mut statuses = BTreeMap::new();
    for task in tasks {
        let (reference, status, body) = task.await.expect("join");
        *statuses.entry(status).or_insert(0) += 1;
        match status {
            200 => {
                let id = body["checkoutSessionId"]
                    .as_str()
                    .expect("an id")
                    .to_owned();
                let earlier = winners.insert(reference.clone(), id);
                assert!(earlier.is_none(), "two winners for {reference}");
            }
            422 => losers.push((reference, body)),
            other => panic!("{reference}: unexpected {other}: {body}"),
        }
    }
    assert_eq!(
        statuses,
        BTreeMap::from([(200, REFERENCES), (422, REPEATED)]),
        "one winner per reference, one loser per repeat"
    );
    assert_eq!(winners.len(), REFERENCES);

    let mut lost: BTreeSet<String> = BTreeSet::new();
    for (reference, body) in &losers {
        assert_eq!(body["type"], "SVC_001", "{body}");
        assert_eq!(body["status"], 422, "{body}");
        assert_eq!(body["title"], "Payment session already exists", "{body}");
        assert_eq!(
            body["detail"], "The payment session already exists.",
            "{body}"
        );
        assert_eq!(
            body["checkoutSessionId"].as_str(),
            winners.get(reference).map(String::as_str),
            "SVC_001 names the winner of {reference}: {body}"
        );
        assert!(lost.insert(reference.clone()), "{reference} lost twice");
    }
    let repeated: BTreeSet<String> = (0..REPEATED).map(|i| format!("{prefix}-{i}")).collect();
    assert_eq!(
        lost, repeated,
        "exactly the repeated references have a loser"
    );

    let mut conn = AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    let stored: Vec<Stored> = diesel::sql_query(
        "SELECT merchant_reference, id::text AS id FROM payment_sessions \
         WHERE merchant_reference LIKE $1",
    )
    .bind::<Text, _>(format!("{prefix}-%"))
    .load(&mut conn)
    .await
    .expect("read the sessions");
    assert_eq!(stored.len(), REFERENCES, "one stored session per reference");
    let stored: HashMap<String, String> = stored
        .into_iter()
        .map(|s| (s.merchant_reference, s.id))
        .collect();
    assert_eq!(stored, winners, "the database holds exactly the winners");

    // The creates were combined: fewer statements than sessions sent.
    let metrics = server
        .http
        .get(format!(
            "http://127.0.0.1:{}/metrics",
            server.metrics_port.expect("a metrics listener")
        ))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("a body");
    let counter = |name: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in\n{metrics}"))
    };
    let statements = counter("checkout_session_insert_statements_total");
    let rows = counter("checkout_session_insert_rows_total");
    assert!(rows >= 1000.0, "{rows} sessions sent");
    assert!(
        statements < rows,
        "{statements} statements for {rows} sessions: nothing was combined"
    );
    eprintln!(
        "1000 concurrent creates, {REPEATED} references repeated: {REFERENCES} × 200, \
         {REPEATED} × 422 SVC_001, {} sessions stored; {rows} sessions in {statements} \
         statements",
        stored.len()
    );
}
