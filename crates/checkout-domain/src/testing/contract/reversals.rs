//! The MUST lines of [`ReversalLedger`], one check each. Every check takes a fresh, empty
//! store that is also the session store (sessions are inserted through it) and panics on a
//! broken promise.

// Test code: a value that does not parse, or a broken promise, is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::sync::Arc;

use tokio::task::JoinSet;

use crate::ports::{ActionBegun, Reservation, ReversalLedger, SessionMove, SessionRepository};
use crate::session::{HoldAction, HoldActionKind, LedgerState, PaymentSession, SessionState};
use crate::testing::builders::{at, decimal, random_bytes, refund, session};
use crate::values::{ActionId, IdempotencyKey};

/// A store of sessions that is also their reversal ledger, as every adapter is.
pub trait LedgerStore: SessionRepository + ReversalLedger {}
impl<T: SessionRepository + ReversalLedger> LedgerStore for T {}

/// A store shared by racing tasks.
pub type Store = Arc<dyn LedgerStore>;

/// A session of `T-1` named `name` in `state`, stored (25.00 USD).
async fn stored(store: &Store, name: &str, state: SessionState) -> PaymentSession {
    let mut s = session("T-1", name);
    s = crate::testing::builders::edit(s, |r| r.state = state);
    store.insert(&s).await.unwrap();
    s
}

fn key(k: &str) -> IdempotencyKey {
    IdempotencyKey::parse(k).unwrap()
}

/// A new `kind` of `value` on `s`, Sent at `when`.
fn action(s: &PaymentSession, kind: HoldActionKind, value: &str, when: i64) -> HoldAction {
    HoldAction {
        id: ActionId::from_uuid(uuid::Uuid::from_bytes(random_bytes())),
        session_id: s.id(),
        kind,
        amount: decimal(value),
        state: LedgerState::Sent,
        captured: None,
        svc_code: None,
        key: None,
        next_check_at: Some(at(when + 30)),
        created_at: at(when),
        updated_at: at(when),
    }
}

/// `begin_action`: of racing captures and voids of one authorisation exactly one is
/// recorded, the others are told which holds it; a session not held is refused.
pub async fn of_racing_captures_and_voids_exactly_one_holds_the_authorisation(store: Store) {
    let pending = stored(&store, "NOT-HELD", SessionState::Pending).await;
    let refused = store
        .begin_action(&action(&pending, HoldActionKind::Capture, "1.00", 1))
        .await
        .unwrap();
    assert_eq!(refused, ActionBegun::NotHeld(SessionState::Pending));

    let s = stored(&store, "HELD", SessionState::ApprovedTransaction).await;
    let mut tasks = JoinSet::new();
    for i in 0..20i64 {
        let store = store.clone();
        let kind = if i % 3 == 0 {
            HoldActionKind::Void
        } else {
            HoldActionKind::Capture
        };
        let a = action(&s, kind, &format!("{}.00", 1 + i), 10 + i);
        tasks.spawn(async move { (a.id, store.begin_action(&a).await.unwrap()) });
    }
    let mut begun = Vec::new();
    let mut holders = HashSet::new();
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            (id, ActionBegun::Begun) => begun.push(id),
            (_, ActionBegun::Held(holder)) => {
                holders.insert(holder.id);
            }
            (_, other) => panic!("{other:?}"),
        }
    }
    assert_eq!(begun.len(), 1, "exactly one action holds the authorisation");
    assert!(holders.iter().all(|h| *h == begun[0]), "{holders:?}");
    assert_eq!(store.actions(s.id()).await.unwrap().len(), 1);
}

/// `settle_action`: a succeeded capture moves the session and sets its captured amount, once;
/// a failed one frees the authorisation for another action.
pub async fn a_settled_capture_moves_the_session_once(store: Store) {
    let s = stored(&store, "CAPTURED", SessionState::ApprovedTransaction).await;
    let mut failed = action(&s, HoldActionKind::Capture, "10.00", 1);
    assert_eq!(
        store.begin_action(&failed).await.unwrap(),
        ActionBegun::Begun
    );
    failed.state = LedgerState::Failed;
    assert!(store.settle_action(&failed, None).await.unwrap());

    let mut capture = action(&s, HoldActionKind::Capture, "10.00", 5);
    assert_eq!(
        store.begin_action(&capture).await.unwrap(),
        ActionBegun::Begun
    );
    capture.state = LedgerState::Succeeded;
    capture.captured = Some(decimal("10.00"));
    capture.updated_at = at(9);
    let session_move = Some(SessionMove {
        from: SessionState::ApprovedTransaction,
        to: SessionState::Successful,
    });
    assert!(store.settle_action(&capture, session_move).await.unwrap());
    assert!(
        !store.settle_action(&capture, session_move).await.unwrap(),
        "a settled action never changes"
    );
    let read = store.get(s.id()).await.unwrap().unwrap();
    assert_eq!(read.state(), SessionState::Successful);
    assert_eq!(
        read.money().captured().map(|c| c.value()),
        Some(decimal("10.00"))
    );
    assert_eq!(read.updated_at(), at(9));

    let void = action(&s, HoldActionKind::Void, "25.00", 20);
    assert!(matches!(
        store.begin_action(&void).await.unwrap(),
        ActionBegun::Held(holder) if holder.id == capture.id
    ));
}

/// `begin_action` with a key: the key names one action for good, even once settled.
pub async fn an_action_key_names_one_action_for_good(store: Store) {
    let s = stored(&store, "KEYED", SessionState::ApprovedTransaction).await;
    let mut first = action(&s, HoldActionKind::Capture, "5.00", 1);
    first.key = Some(key("capture-1"));
    assert_eq!(
        store.begin_action(&first).await.unwrap(),
        ActionBegun::Begun
    );
    let mut retry = action(&s, HoldActionKind::Capture, "5.00", 2);
    retry.key = Some(key("capture-1"));
    assert_eq!(
        store.begin_action(&retry).await.unwrap(),
        ActionBegun::Existing(first.clone())
    );
    first.state = LedgerState::Unknown;
    first.next_check_at = Some(at(100));
    assert!(store.settle_action(&first, None).await.unwrap());
    assert!(matches!(
        store.begin_action(&retry).await.unwrap(),
        ActionBegun::Existing(a) if a.id == first.id && a.state == LedgerState::Unknown
    ));
    // The same key on another session is another action.
    let other = stored(&store, "KEYED-2", SessionState::ApprovedTransaction).await;
    let mut elsewhere = action(&other, HoldActionKind::Capture, "5.00", 3);
    elsewhere.key = Some(key("capture-1"));
    assert_eq!(
        store.begin_action(&elsewhere).await.unwrap(),
        ActionBegun::Begun
    );
}

/// `reserve_refund`: refunds of a session that captured nothing are refused; racing
/// reservations never reserve more than was captured.
pub async fn racing_refunds_never_reserve_more_than_was_captured(store: Store) {
    let pending = stored(&store, "NOT-PAID", SessionState::Pending).await;
    let outcome = store
        .reserve_refund(&refund(&pending, "1.00", at(1)))
        .await
        .unwrap();
    assert_eq!(outcome, Reservation::NotCaptured(SessionState::Pending));
    assert!(store.refunds(pending.id()).await.unwrap().is_empty());

    let s = stored(&store, "REFUNDS", SessionState::Successful).await;
    let mut tasks = JoinSet::new();
    for i in 0..20 {
        let store = store.clone();
        let r = refund(&s, "4.00", at(10 + i));
        tasks.spawn(async move { store.reserve_refund(&r).await.unwrap() });
    }
    let mut reserved = 0;
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            Reservation::Reserved => reserved += 1,
            Reservation::Exceeds { refundable } => assert!(refundable < decimal("4.00")),
            other => panic!("{other:?}"),
        }
    }
    // 25.00 captured: six refunds of 4.00 fit, a seventh does not.
    assert_eq!(reserved, 6);
    assert_eq!(store.refunds(s.id()).await.unwrap().len(), 6);
}

/// `settle_refund`: only an unsettled refund is saved; a Succeeded one adds to the
/// session's refunded amount, a Failed one frees its reservation; Unknown may be saved again.
pub async fn settling_a_refund_counts_it_once(store: Store) {
    let s = stored(&store, "SETTLE", SessionState::Successful).await;
    let mut first = refund(&s, "20.00", at(10));
    assert_eq!(
        store.reserve_refund(&first).await.unwrap(),
        Reservation::Reserved
    );
    first.state = LedgerState::Unknown;
    first.next_check_at = Some(at(60));
    assert!(store.settle_refund(&first).await.unwrap());
    first.next_check_at = Some(at(120));
    assert!(store.settle_refund(&first).await.unwrap(), "checked again");
    first.state = LedgerState::Succeeded;
    first.processor_reference = Some("re_1".to_owned());
    first.next_check_at = None;
    first.updated_at = at(20);
    assert!(store.settle_refund(&first).await.unwrap());
    assert!(!store.settle_refund(&first).await.unwrap(), "settled twice");
    let read = store.get(s.id()).await.unwrap().unwrap();
    assert_eq!(
        (read.money().refunded().value(), read.updated_at()),
        (decimal("20.00"), at(20))
    );

    let mut second = refund(&s, "5.00", at(30));
    assert_eq!(
        store.reserve_refund(&second).await.unwrap(),
        Reservation::Reserved
    );
    second.state = LedgerState::Failed;
    assert!(store.settle_refund(&second).await.unwrap());
    let again = refund(&s, "5.00", at(40));
    assert_eq!(
        store.reserve_refund(&again).await.unwrap(),
        Reservation::Reserved
    );
    let refunds = store.refunds(s.id()).await.unwrap();
    let states: Vec<_> = refunds.iter().map(|r| r.state).collect();
    assert_eq!(
        states,
        [
            LedgerState::Succeeded,
            LedgerState::Failed,
            LedgerState::Sent
        ]
    );
    assert_eq!(refunds[0].processor_reference.as_deref(), Some("re_1"));
    assert_eq!(
        store
            .get(s.id())
            .await
            .unwrap()
            .unwrap()
            .money()
            .refunded()
            .value(),
        decimal("20.00")
    );
}

/// `reserve_refund` with a key: racing requests with one key record one refund; a key
/// found again answers the stored refund, whatever its state, and reserves nothing more.
pub async fn a_refund_key_names_one_refund_for_good(store: Store) {
    let s = stored(&store, "REFUND-KEY", SessionState::Successful).await;
    let mut tasks = JoinSet::new();
    for i in 0..10 {
        let store = store.clone();
        let mut r = refund(&s, "3.00", at(10 + i));
        r.key = Some(key("refund-1"));
        tasks.spawn(async move { (r.id, store.reserve_refund(&r).await.unwrap()) });
    }
    let mut reserved = Vec::new();
    let mut existing = HashSet::new();
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            (id, Reservation::Reserved) => reserved.push(id),
            (_, Reservation::Existing(r)) => {
                existing.insert(r.id);
            }
            (_, other) => panic!("{other:?}"),
        }
    }
    assert_eq!(reserved.len(), 1);
    assert!(existing.iter().all(|id| *id == reserved[0]));
    let refunds = store.refunds(s.id()).await.unwrap();
    assert_eq!(refunds.len(), 1);
    assert_eq!(refunds[0].key, Some(key("refund-1")));
}

/// `claim_due_refunds` and `claim_due_actions`: only unsettled rows due by now, oldest due
/// first, each leased so that a second claim skips it.
pub async fn claims_take_due_unsettled_reversals_and_lease_them(store: Store) {
    let s = stored(&store, "CLAIMS", SessionState::Successful).await;
    let mut due_late = refund(&s, "1.00", at(1));
    due_late.next_check_at = Some(at(50));
    let mut due_early = refund(&s, "1.00", at(2));
    due_early.next_check_at = Some(at(40));
    let mut not_due = refund(&s, "1.00", at(3));
    not_due.next_check_at = Some(at(500));
    let mut settled = refund(&s, "1.00", at(4));
    settled.next_check_at = Some(at(10));
    for r in [&due_late, &due_early, &not_due, &settled] {
        assert_eq!(
            store.reserve_refund(r).await.unwrap(),
            Reservation::Reserved
        );
    }
    settled.state = LedgerState::Succeeded;
    assert!(store.settle_refund(&settled).await.unwrap());

    let claimed = store
        .claim_due_refunds(at(100), at(1_000), 10)
        .await
        .unwrap();
    let ids: Vec<_> = claimed.iter().map(|r| r.id).collect();
    assert_eq!(ids, [due_early.id, due_late.id]);
    let again = store
        .claim_due_refunds(at(100), at(1_000), 10)
        .await
        .unwrap();
    assert!(again.is_empty(), "leased: {again:?}");
    let after_lease = store
        .claim_due_refunds(at(1_000), at(2_000), 10)
        .await
        .unwrap();
    assert_eq!(after_lease.len(), 3);

    let held = stored(&store, "CLAIM-ACTION", SessionState::ApprovedTransaction).await;
    let capture = action(&held, HoldActionKind::Capture, "2.00", 1);
    assert_eq!(
        store.begin_action(&capture).await.unwrap(),
        ActionBegun::Begun
    );
    let claimed = store
        .claim_due_actions(at(100), at(1_000), 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].id, capture.id);
    assert!(store
        .claim_due_actions(at(100), at(1_000), 10)
        .await
        .unwrap()
        .is_empty());
}
