//! The columns the partial indexes read follow the session's state, so that a state change
//! which keeps a session in the same index sets writes no index entry (a heap-only update).

use checkout_domain::ports::SessionRepository;
use checkout_domain::session::SessionState;
use checkout_test_db::TestDatabase;
use diesel::sql_types::{BigInt, Nullable, SmallInt, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;

use crate::support::*;

#[derive(diesel::QueryableByName)]
struct Generated {
    #[diesel(sql_type = Nullable<Text>)]
    held_reference: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pending_until: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    challenge_until: Option<OffsetDateTime>,
}

#[tokio::test]
async fn the_generated_columns_follow_the_session_state() {
    let (db, store) = database().await;
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    for state in SessionState::ALL {
        let mut s = session("T-1", &format!("REF-{}", state.code()));
        s = checkout_domain::testing::builders::edit(s, |r| r.state = state);
        s = checkout_domain::testing::builders::edit(s, |r| {
            r.expires_at = at(1_000_000 + i64::from(state.code()))
        });
        store.insert(&s).await.unwrap();
        let read: Generated = diesel::sql_query(
            "SELECT held_reference, pending_until, challenge_until \
             FROM payment_sessions WHERE id = $1",
        )
        .bind::<SqlUuid, _>(s.id().as_uuid())
        .get_result(&mut conn)
        .await
        .unwrap();
        let reference = s.reference().as_str().to_owned();
        assert_eq!(
            read.held_reference,
            state.holds_reference().then_some(reference),
            "{state}"
        );
        assert_eq!(
            read.pending_until,
            (state == SessionState::Pending).then_some(s.expires_at()),
            "{state}"
        );
        assert_eq!(
            read.challenge_until,
            (state == SessionState::ChallengeRequired).then_some(s.expires_at()),
            "{state}"
        );
    }
}

/// Moves session `id` from `from` to `to` in a transaction of its own, as the store's
/// compare-and-set does, and answers how many of the transaction's updates were heap-only.
async fn heap_only_updates(
    db: &TestDatabase,
    id: uuid::Uuid,
    from: SessionState,
    to: SessionState,
) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    diesel::sql_query("BEGIN").execute(&mut conn).await.unwrap();
    let moved = diesel::sql_query(
        "UPDATE payment_sessions SET state = $2, updated_at = now() WHERE id = $1 AND state = $3",
    )
    .bind::<SqlUuid, _>(id)
    .bind::<SmallInt, _>(to.code())
    .bind::<SmallInt, _>(from.code())
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(moved, 1, "{from} -> {to}");
    // The transaction's own counts, before its statistics are sent.
    let hot: Count = diesel::sql_query(
        "SELECT pg_stat_get_xact_tuples_hot_updated('payment_sessions'::regclass) AS n",
    )
    .get_result(&mut conn)
    .await
    .unwrap();
    diesel::sql_query("COMMIT")
        .execute(&mut conn)
        .await
        .unwrap();
    hot.n
}

#[tokio::test]
async fn a_payments_answer_and_a_capture_write_no_index_entry() {
    let (db, store) = database().await;
    let moves = [
        (SessionState::Processing, SessionState::Successful),
        (SessionState::Processing, SessionState::Failed),
        (SessionState::Processing, SessionState::ApprovedTransaction),
        (SessionState::ApprovedTransaction, SessionState::Successful),
    ];
    for (n, (from, to)) in moves.into_iter().enumerate() {
        let mut s = session("T-1", &format!("HOT-{n}"));
        s = checkout_domain::testing::builders::edit(s, |r| r.state = from);
        store.insert(&s).await.unwrap();
        assert_eq!(
            heap_only_updates(&db, s.id().as_uuid(), from, to).await,
            1,
            "{from} -> {to}"
        );
    }
    // Leaving an index's set does write one: the expiry sweep must stop seeing the session.
    let s = session("T-1", "HOT-START");
    store.insert(&s).await.unwrap();
    assert_eq!(
        heap_only_updates(
            &db,
            s.id().as_uuid(),
            SessionState::Pending,
            SessionState::Processing
        )
        .await,
        0
    );
}
