//! `SessionRepository::find_by_reference` on PostgreSQL.

use checkout_domain::ports::SessionRepository;
use checkout_domain::session::SessionState;
use checkout_domain::values::SessionId;

use crate::support::*;

#[tokio::test]
async fn sessions_with_a_reference_come_newest_first_in_every_state_and_per_terminal() {
    let (_db, store) = database().await;
    // Two expired sessions and their live successor, out of order; items and charges too.
    let mut oldest = full_checkout_session("T-1", "REF-A");
    oldest = checkout_domain::testing::builders::edit(oldest, |r| r.state = SessionState::Expired);
    oldest = checkout_domain::testing::builders::edit(oldest, |r| r.created_at = at(10));
    let mut older = session("T-1", "REF-A");
    older = checkout_domain::testing::builders::edit(older, |r| r.state = SessionState::Expired);
    older = checkout_domain::testing::builders::edit(older, |r| r.created_at = at(20));
    let mut live = full_checkout_session("T-1", "REF-A");
    live = checkout_domain::testing::builders::edit(live, |r| r.created_at = at(30));
    for s in [&older, &live, &oldest] {
        store.insert(s).await.unwrap();
    }
    // Another reference, and another terminal's session with the same reference.
    store.insert(&session("T-1", "REF-B")).await.unwrap();
    store.insert(&session("T-2", "REF-A")).await.unwrap();

    let found = store
        .find_by_reference(&terminal("T-1"), &reference("REF-A"), 100)
        .await
        .unwrap();
    let ids: Vec<SessionId> = found.iter().map(|s| s.id()).collect();
    assert_eq!(ids, [live.id(), older.id(), oldest.id()]);
    assert!(found.iter().all(|s| *s.terminal() == terminal("T-1")));
    assert!(
        found
            .iter()
            .all(|s| s.items().is_empty() && s.charges().is_empty()),
        "the status records need no lines"
    );
    assert_eq!(found[0].state(), SessionState::Pending);
    assert_eq!(found[0].amount(), live.amount());
    assert_eq!(found[0].created_at(), live.created_at());

    let limited = store
        .find_by_reference(&terminal("T-1"), &reference("REF-A"), 2)
        .await
        .unwrap();
    assert_eq!(limited.len(), 2);
    assert_eq!(limited[0].id(), live.id());

    let theirs = store
        .find_by_reference(&terminal("T-2"), &reference("REF-A"), 100)
        .await
        .unwrap();
    assert_eq!(theirs.len(), 1);
    assert!(store
        .find_by_reference(&terminal("T-2"), &reference("REF-B"), 100)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn the_lookup_uses_the_reference_index() {
    let (db, _store) = database().await;
    let plan = plan(
        &db,
        "SELECT id FROM payment_sessions WHERE terminal_number = 'T-1' \
         AND merchant_reference = 'REF' ORDER BY created_at DESC, id DESC LIMIT 100",
    )
    .await;
    assert!(
        plan.iter()
            .any(|l| l.contains("payment_sessions_reference ")
                || l.ends_with("payment_sessions_reference")),
        "{plan:#?}"
    );
    assert!(!plan.iter().any(|l| l.contains("Sort")), "{plan:#?}");
}
