//! The outbox: an event row for every change into a reported state, and none without one,
//! whichever path made the change (a payer, the processor's lost answer replayed, the expiry
//! sweep, reconciliation).
//!
//! The test installs its own witness trigger on the test database, which records every state
//! change of every session, and compares the events with it.

use std::time::{Duration, Instant};

use diesel::sql_types::{Array, BigInt, SmallInt, Text, Uuid as SqlUuid};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use checkout_processor::testing::fake_stripe::{Call, FakeStripe, FakeStripeConfig, Fault, When};

use crate::support::payer::CardForm;
use serde_json::json;

use crate::support::{Mode, TestServer};
use crate::{fast_server, pay, APPROVED, AUTHORIZED, DECLINED, FAST, LOST_ANSWER};

/// Needs a 3-D Secure challenge (the sandbox hosts it).
const CHALLENGE: &str = "4000002760003184";

#[derive(QueryableByName, Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
struct Change {
    #[diesel(sql_type = SqlUuid)]
    session_id: uuid::Uuid,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = SmallInt)]
    state: i16,
    #[diesel(sql_type = BigInt)]
    times: i64,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Kind {
    #[diesel(sql_type = Text)]
    kind: String,
}

/// Installs the witness trigger on the server's database; returns a connection to it.
async fn witness(server: &TestServer) -> AsyncPgConnection {
    let mut conn = AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    for statement in [
        "CREATE TABLE witness (session_id uuid, old_state smallint, new_state smallint, \
         old_refunded numeric, new_refunded numeric, kind text)",
        "CREATE FUNCTION witness_change() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN INSERT INTO witness VALUES (NEW.id, OLD.state, NEW.state, \
         OLD.refunded_amount, NEW.refunded_amount, NULL); RETURN NULL; END $$",
        "CREATE TRIGGER witness AFTER UPDATE ON payment_sessions FOR EACH ROW \
         WHEN (OLD.state IS DISTINCT FROM NEW.state \
               OR OLD.refunded_amount IS DISTINCT FROM NEW.refunded_amount) \
         EXECUTE FUNCTION witness_change()",
        // Every declined card attempt, with its session's state once the statement is done.
        "CREATE FUNCTION witness_decline() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN INSERT INTO witness SELECT NEW.session_id, NULL, s.state, NULL, NULL, \
         'payment.attempt_failed' FROM payment_sessions s WHERE s.id = NEW.session_id; \
         RETURN NULL; END $$",
        "CREATE TRIGGER witness_decline AFTER UPDATE ON payment_attempts FOR EACH ROW \
         WHEN (NEW.state = 'declined' AND OLD.state IS DISTINCT FROM 'declined') \
         EXECUTE FUNCTION witness_decline()",
    ] {
        diesel::sql_query(statement)
            .execute(&mut conn)
            .await
            .expect(statement);
    }
    conn
}

/// Waits until every session of `sessions` is in a final state.
async fn settled(server: &TestServer, sessions: &[String]) {
    let started = Instant::now();
    for id in sessions {
        loop {
            let state = server.status_record(id).await["stateCode"]
                .as_i64()
                .unwrap();
            if [1, 2, 3, 6, 7].contains(&state) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{id} stays in {state}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Asserts that the events are the witnessed changes merchants are told about, one for one
/// (same session, type and state), and that there are `changes` of them.
async fn assert_one_event_per_change(conn: &mut AsyncPgConnection, changes: usize) {
    let witnessed: Vec<Change> = diesel::sql_query(
        "SELECT session_id, kind, state, count(*) AS times FROM ( \
             SELECT session_id, new_state AS state, coalesce(kind, session_change_event_type( \
                 old_state, new_state, old_refunded, new_refunded)) AS kind FROM witness \
         ) w WHERE kind IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )
    .load(conn)
    .await
    .expect("witness");
    let events: Vec<Change> = diesel::sql_query(
        "SELECT session_id, type AS kind, state, count(*) AS times FROM events \
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )
    .load(conn)
    .await
    .expect("events");
    assert_eq!(events, witnessed, "events and changes, one for one");
    let total: i64 = witnessed.iter().map(|c| c.times).sum();
    assert_eq!(total, changes as i64, "{witnessed:?}");
}

/// `POST path` with `body` as the sandbox terminal; asserts 200.
async fn post_ok(server: &TestServer, path: &str, body: serde_json::Value) {
    let token = server.token().await;
    let reply = server.post(path, Some(&token), &body).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.body);
}

/// How many witnessed changes went from `from` to `to`.
async fn changes(conn: &mut AsyncPgConnection, from: &[i16], to: i16) -> i64 {
    let count: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM witness WHERE old_state = ANY($1) AND new_state = $2",
    )
    .bind::<Array<SmallInt>, _>(from)
    .bind::<SmallInt, _>(to)
    .get_result(conn)
    .await
    .expect("count");
    count.n
}

#[tokio::test]
async fn every_state_change_has_one_event_and_no_event_lacks_a_change() {
    let server = fast_server("webhooks-outbox").await;
    let mut conn = witness(&server).await;

    // A payer pays, is declined, authorises, cancels; the sweep expires a Pending session and
    // one waiting for a challenge; reconciliation settles a lost answer.
    let mut sessions = Vec::new();
    for (label, card) in [
        ("paid", APPROVED),
        ("declined", DECLINED),
        ("authorized", AUTHORIZED),
        ("lost", LOST_ANSWER),
        ("challenge", CHALLENGE),
    ] {
        let id = server.new_checkout(label).await;
        pay(&server, &id, card).await;
        sessions.push(id);
    }
    let cancelled = server.new_checkout("cancelled").await;
    let form = CardForm::open(&server.http, &server.base, &cancelled).await;
    assert_eq!(form.cancel(&server.http).await.status(), 303);
    sessions.push(cancelled);
    let expired = server.new_checkout("expired").await;
    server.expire_session(&expired).await;
    sessions.push(expired);
    server.expire_session(&sessions[4]).await;
    settled(&server, &sessions).await;

    // The merchant captures one authorisation, voids another, refunds a payment twice.
    post_ok(
        &server,
        &format!("/pay/api/payment/{}/capture", sessions[2]),
        json!({}),
    )
    .await;
    let voided = server.new_checkout("voided").await;
    pay(&server, &voided, AUTHORIZED).await;
    post_ok(
        &server,
        &format!("/pay/api/payment/{voided}/void"),
        json!({}),
    )
    .await;
    sessions.push(voided);
    for amount in ["2.00", "3.00"] {
        post_ok(
            &server,
            &format!("/pay/api/payment/{}/refunds", sessions[0]),
            json!({ "amount": amount.parse::<f64>().unwrap() }),
        )
        .await;
    }
    // One change into a final state per session, the voided one's authorisation before its
    // void, a capture, two refunds, the declined card.
    assert_one_event_per_change(&mut conn, sessions.len() + 5).await;
    // The paths that made the changes include the expiry sweep.
    let kinds: Vec<Kind> = diesel::sql_query("SELECT DISTINCT type AS kind FROM events ORDER BY 1")
        .load(&mut conn)
        .await
        .expect("kinds");
    let kinds: Vec<String> = kinds.into_iter().map(|k| k.kind).collect();
    assert_eq!(
        kinds,
        [
            "payment.attempt_failed",
            "payment.authorized",
            "payment.cancelled",
            "payment.captured",
            "payment.expired",
            "payment.failed",
            "payment.refunded",
            "payment.succeeded",
            "payment.voided"
        ]
    );
    assert_eq!(
        changes(&mut conn, &[0, 5], 6).await,
        2,
        "the sweep expired a Pending and a challenged session"
    );
}

/// Reconciliation's changes have their events too: the stand-in processor leaves both the
/// authorisation and its replay unanswered, and the sweep learns the outcome later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_by_reconciliation_has_its_event() {
    let stripe = FakeStripe::start(FakeStripeConfig::default()).await;
    let base = stripe.base_url.to_string();
    let mut settings = FAST.to_vec();
    settings.extend_from_slice(&[
        ("CHECKOUT__PROCESSOR__KIND", "stripe"),
        ("CHECKOUT__PROCESSOR__STRIPE_BASE_URL", base.as_str()),
        ("CHECKOUT__PROCESSOR__STRIPE_API_KEY", "sk_test_outbox"),
        ("CHECKOUT__PROCESSOR__TIMEOUT_MS", "800"),
        // Later than FAST's second: the test reads Processing before the first check.
        ("CHECKOUT__CHECKOUT__RECONCILE_AFTER_SECONDS", "4"),
    ]);
    let server = TestServer::start("webhooks-outbox-reconcile", Mode::Sandbox, &settings).await;
    let mut conn = witness(&server).await;
    stripe.inject(Call::CreateIntent, When::Before, Fault::Hang);
    stripe.inject(Call::CreateIntent, When::Before, Fault::Hang);
    let id = server.new_checkout("reconciled").await;
    pay(&server, &id, APPROVED).await;
    // Neither the card post nor its replay learnt the outcome (the first check is 4 s away).
    assert_eq!(server.status_record(&id).await["state"], "Processing");
    let paid = server.new_checkout("paid").await;
    pay(&server, &paid, APPROVED).await;
    let sessions = [id, paid];
    settled(&server, &sessions).await;
    assert_one_event_per_change(&mut conn, sessions.len()).await;
    assert_eq!(
        changes(&mut conn, &[4], 1).await,
        2,
        "one paid at once, one settled by reconciliation"
    );
}
