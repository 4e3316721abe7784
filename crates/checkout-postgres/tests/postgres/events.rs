//! `EventLog` on PostgreSQL: one event per change into a state merchants are told about,
//! written in the change's transaction whatever wrote it, and a feed that never skips an
//! event committed late.

use checkout_domain::events::EventType;
use checkout_domain::ports::{AttemptChange, EventLog, Recorded, SessionRepository};
use checkout_domain::ports::{AttemptLedger, Sweeps};
use checkout_domain::session::{AttemptState, SessionState};
use diesel::sql_types::{SmallInt, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::support::*;

/// The feed of `terminal_number` after `after`, once it holds `count` events (or after 15 s):
/// the feed holds back events while any older transaction of the cluster runs, and the test
/// cluster is shared by every test.
async fn events_once(
    store: &checkout_postgres::PgStore,
    terminal_number: &str,
    after: Option<checkout_domain::events::EventCursor>,
    count: usize,
) -> Vec<checkout_domain::events::PaymentEvent> {
    let started = std::time::Instant::now();
    loop {
        let events = store
            .events_after(&terminal(terminal_number), after, 100)
            .await
            .unwrap();
        if events.len() >= count || started.elapsed() > std::time::Duration::from_secs(15) {
            return events;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The event types of `terminal`'s feed, with their session's reference, in feed order.
async fn feed(
    store: &checkout_postgres::PgStore,
    terminal_number: &str,
    count: usize,
) -> Vec<(String, EventType)> {
    events_once(store, terminal_number, None, count)
        .await
        .into_iter()
        .map(|e| (e.session.reference().to_string(), e.kind))
        .collect()
}

#[tokio::test]
async fn every_change_into_a_reported_state_writes_one_event_and_no_other_change_does() {
    let (_db, store) = database().await;
    // Cancelled through a guarded move.
    let cancelled = session("T-1", "CANCELLED");
    store.insert(&cancelled).await.unwrap();
    assert!(store
        .transition(
            cancelled.id(),
            SessionState::Pending,
            SessionState::Cancelled,
            at(10)
        )
        .await
        .unwrap());
    // Paid through an attempt: Pending → Processing (no event) → Successful.
    let paid = session("T-1", "PAID");
    store.insert(&paid).await.unwrap();
    let mut a = attempt(&paid, at(20));
    assert!(store
        .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    a.state = AttemptState::Succeeded;
    a.next_check_at = None;
    a.updated_at = at(30);
    let recorded = store
        .record_attempt(&AttemptChange {
            attempt: &a,
            expected: &[AttemptState::Sent],
            session_move: Some((SessionState::Processing, SessionState::Successful)),
        })
        .await
        .unwrap();
    assert_eq!(recorded, Recorded::Moved);
    // Expired by the bulk sweep.
    let mut stale = session("T-1", "STALE");
    stale = checkout_domain::testing::builders::edit(stale, |r| r.expires_at = at(5));
    store.insert(&stale).await.unwrap();
    assert_eq!(store.expire_due(at(40)).await.unwrap(), 1);
    // A failed move writes nothing.
    assert!(!store
        .transition(
            paid.id(),
            SessionState::Pending,
            SessionState::Cancelled,
            at(50)
        )
        .await
        .unwrap());

    assert_eq!(
        feed(&store, "T-1", 3).await,
        vec![
            ("CANCELLED".to_owned(), EventType::PaymentCancelled),
            ("PAID".to_owned(), EventType::PaymentSucceeded),
            ("STALE".to_owned(), EventType::PaymentExpired),
        ]
    );
    let events = events_once(&store, "T-1", None, 3).await;
    let paid_event = &events[1];
    assert_eq!(paid_event.session.id(), paid.id());
    assert_eq!(paid_event.session.state(), SessionState::Successful);
    assert_eq!(paid_event.occurred_at, at(30));
    assert!(
        feed(&store, "T-2", 0).await.is_empty(),
        "no other terminal's event"
    );
}

#[tokio::test]
async fn the_feed_pages_by_cursor_in_commit_order() {
    let (_db, store) = database().await;
    for n in 0..5 {
        let s = session("T-1", &format!("S-{n}"));
        store.insert(&s).await.unwrap();
        store
            .transition(
                s.id(),
                SessionState::Pending,
                SessionState::Cancelled,
                at(n),
            )
            .await
            .unwrap();
    }
    events_once(&store, "T-1", None, 5).await;
    let first = store.events_after(&terminal("T-1"), None, 2).await.unwrap();
    assert_eq!(first.len(), 2);
    let rest = store
        .events_after(&terminal("T-1"), Some(first[1].cursor), 10)
        .await
        .unwrap();
    let refs: Vec<String> = first
        .iter()
        .chain(&rest)
        .map(|e| e.session.reference().to_string())
        .collect();
    assert_eq!(refs, ["S-0", "S-1", "S-2", "S-3", "S-4"]);
    assert!(store
        .events_after(&terminal("T-1"), Some(rest[2].cursor), 10)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn an_event_that_commits_late_is_never_skipped() {
    let (db, store) = database().await;
    let slow = session("T-1", "SLOW");
    let quick = session("T-1", "QUICK");
    store.insert(&slow).await.unwrap();
    store.insert(&quick).await.unwrap();

    // A transaction changes SLOW and stays open...
    let mut open = AsyncPgConnection::establish(db.url()).await.unwrap();
    diesel::sql_query("BEGIN").execute(&mut open).await.unwrap();
    diesel::sql_query("UPDATE payment_sessions SET state = $1 WHERE id = $2")
        .bind::<SmallInt, _>(SessionState::Cancelled.code())
        .bind::<SqlUuid, _>(slow.id().as_uuid())
        .execute(&mut open)
        .await
        .unwrap();
    // ...while another commits a change to QUICK.
    assert!(store
        .transition(
            quick.id(),
            SessionState::Pending,
            SessionState::Cancelled,
            at(1)
        )
        .await
        .unwrap());
    // A reader now must not move past SLOW's event before it exists: QUICK is held back.
    let early = store
        .events_after(&terminal("T-1"), None, 10)
        .await
        .unwrap();
    assert!(
        early.is_empty(),
        "held back while an older transaction runs: {early:?}"
    );

    diesel::sql_query("COMMIT")
        .execute(&mut open)
        .await
        .unwrap();
    let events = events_once(&store, "T-1", None, 2).await;
    let refs: Vec<String> = events
        .iter()
        .map(|e| e.session.reference().to_string())
        .collect();
    assert_eq!(
        refs,
        ["SLOW", "QUICK"],
        "in transaction order, nothing skipped"
    );
}
