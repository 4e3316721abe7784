//! The MUST lines of [`NoticeStore`] and [`DisputeLedger`], and the refund move only the
//! processor makes (a refund failed after it succeeded), one check each. Every check takes a
//! fresh, empty store that is also the session store, the reversal ledger and the event log,
//! as every adapter is.

// Test code: a value that does not parse, or a broken promise, is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use tokio::task::JoinSet;

use crate::events::{EventSubject, EventType};
use crate::ports::{
    AttemptLedger, DisputeLedger, DisputeRecorded, EventLog, NoticeStore, Reservation,
    ReversalLedger, SessionRepository,
};
use crate::session::{
    AttemptState, Dispute, DisputeStatus, LedgerState, PaymentSession, SessionState,
};
use crate::testing::builders::{at, attempt, decimal, refund, session};
use crate::values::TerminalNumber;

/// A store of sessions that is also their reversal ledger, event log, notice store and
/// dispute ledger.
pub trait NoticeLedgerStore:
    SessionRepository + AttemptLedger + ReversalLedger + EventLog + NoticeStore + DisputeLedger
{
}
impl<T> NoticeLedgerStore for T where
    T: SessionRepository + AttemptLedger + ReversalLedger + EventLog + NoticeStore + DisputeLedger
{
}

/// A store shared by racing tasks.
pub type Store = Arc<dyn NoticeLedgerStore>;

/// A session of `T-1` named `name` in `state`, stored (25.00 USD).
async fn stored(store: &Store, name: &str, state: SessionState) -> PaymentSession {
    let mut s = session("T-1", name);
    s = crate::testing::builders::edit(s, |r| r.state = state);
    store.insert(&s).await.unwrap();
    s
}

/// The events of `T-1`, as (type, subject), in feed order, once there are `count` (or after
/// 15 s): a feed may hold events back while an older transaction of its database runs (the
/// PostgreSQL one, on a cluster shared by every test).
async fn events(store: &Store, count: usize) -> Vec<(EventType, Option<EventSubject>)> {
    let terminal = TerminalNumber::parse("T-1").unwrap();
    let started = std::time::Instant::now();
    loop {
        let page = store.events_after(&terminal, None, 100).await.unwrap();
        if page.len() >= count || started.elapsed() > std::time::Duration::from_secs(15) {
            return page.into_iter().map(|e| (e.kind, e.about)).collect();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

fn dispute(s: &PaymentSession, reference: &str, status: DisputeStatus, when: i64) -> Dispute {
    Dispute {
        reference: reference.to_owned(),
        session_id: s.id(),
        amount: decimal("25.00"),
        reason: "fraudulent".to_owned(),
        status,
        opened_at: at(when),
        updated_at: at(when),
    }
}

fn about(reference: &str, status: DisputeStatus) -> Option<EventSubject> {
    Some(EventSubject::Dispute {
        reference: reference.to_owned(),
        status,
    })
}

/// `notice_seen` / `record_notice`: an id is seen once recorded, and recording it again
/// succeeds and changes nothing.
pub async fn a_notice_is_seen_once_recorded_and_a_second_record_is_harmless(store: Store) {
    assert!(!store.notice_seen("evt_1").await.unwrap());
    store.record_notice("evt_1", at(1)).await.unwrap();
    store.record_notice("evt_1", at(2)).await.unwrap();
    assert!(store.notice_seen("evt_1").await.unwrap());
    assert!(!store.notice_seen("evt_2").await.unwrap());
}

/// `forget_notices_before`: notices absorbed before the instant are forgotten, the others
/// kept, and a forgotten id may be recorded again.
pub async fn notices_before_an_instant_are_forgotten_and_later_ones_kept(store: Store) {
    store.record_notice("evt_old", at(1)).await.unwrap();
    store.record_notice("evt_edge", at(5)).await.unwrap();
    store.record_notice("evt_new", at(9)).await.unwrap();
    assert_eq!(store.forget_notices_before(at(5)).await.unwrap(), 1);
    assert!(!store.notice_seen("evt_old").await.unwrap());
    assert!(store.notice_seen("evt_edge").await.unwrap());
    assert!(store.notice_seen("evt_new").await.unwrap());
    assert_eq!(store.forget_notices_before(at(5)).await.unwrap(), 0);
    store.record_notice("evt_old", at(10)).await.unwrap();
    assert!(store.notice_seen("evt_old").await.unwrap());
}

/// `attempt_by_reference` / `find_refund`: the rows an event names are found by the
/// processor's reference, a refund by its id first; unknown references find nothing.
pub async fn rows_are_found_by_the_references_events_carry(store: Store) {
    let s = stored(&store, "FOUND", SessionState::Pending).await;
    let mut a = attempt(&s, at(10));
    assert!(store
        .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    let sent = a.clone();
    a.processor_reference = Some("pi_found".to_owned());
    a.state = AttemptState::Succeeded;
    a.next_check_at = None;
    a.updated_at = at(11);
    let change = crate::ports::AttemptChange {
        attempt: &a,
        expected: &[sent.state],
        session_move: None,
    };
    store.record_attempt(&change).await.unwrap();
    let found = store.attempt_by_reference("pi_found").await.unwrap();
    assert_eq!(found.map(|f| f.id), Some(a.id));
    assert_eq!(store.attempt_by_reference("pi_other").await.unwrap(), None);

    let paid = stored(&store, "FOUND-REFUND", SessionState::Successful).await;
    let mut r = refund(&paid, "5.00", at(20));
    assert_eq!(
        store.reserve_refund(&r).await.unwrap(),
        Reservation::Reserved
    );
    let by_id = store.find_refund(Some(r.id), "re_unknown").await.unwrap();
    assert_eq!(
        by_id.map(|f| f.id),
        Some(r.id),
        "found by id, no reference yet"
    );
    r.state = LedgerState::Succeeded;
    r.processor_reference = Some("re_found".to_owned());
    r.next_check_at = None;
    assert!(store.settle_refund(&r).await.unwrap());
    let by_reference = store.find_refund(None, "re_found").await.unwrap();
    assert_eq!(by_reference.map(|f| f.id), Some(r.id));
    assert_eq!(store.find_refund(None, "re_other").await.unwrap(), None);
}

/// `record_dispute`: new → Opened (announced); the same status → Unchanged; an open status
/// → Moved; closed → Moved and announced; after it nothing changes it. A dispute first seen
/// closed is announced opened, then closed.
pub async fn a_dispute_moves_only_forward_and_each_change_is_announced_once(store: Store) {
    use DisputeStatus as D;
    let s = stored(&store, "DISPUTED", SessionState::Successful).await;
    let steps = [
        (D::NeedsResponse, DisputeRecorded::Opened),
        (D::NeedsResponse, DisputeRecorded::Unchanged),
        (D::UnderReview, DisputeRecorded::Moved),
        (D::Lost, DisputeRecorded::Moved),
        (D::UnderReview, DisputeRecorded::Unchanged),
        (D::Won, DisputeRecorded::Unchanged),
    ];
    for (i, (status, expected)) in steps.into_iter().enumerate() {
        let d = dispute(&s, "dp_1", status, 10 + i as i64);
        assert_eq!(
            store.record_dispute(&d).await.unwrap(),
            expected,
            "{status:?}"
        );
    }
    let late = dispute(&s, "dp_2", D::Won, 30);
    assert_eq!(
        store.record_dispute(&late).await.unwrap(),
        DisputeRecorded::Opened
    );
    let stored = store.disputes(s.id()).await.unwrap();
    let summary: Vec<_> = stored
        .iter()
        .map(|d| (d.reference.as_str(), d.status, d.opened_at))
        .collect();
    assert_eq!(
        summary,
        [("dp_1", D::Lost, at(10)), ("dp_2", D::Won, at(30))],
        "oldest first, opened when first recorded"
    );
    assert_eq!(stored[0].amount, decimal("25.00"));
    assert_eq!(
        events(&store, 4).await,
        [
            (
                EventType::PaymentDisputeOpened,
                about("dp_1", D::NeedsResponse)
            ),
            (EventType::PaymentDisputeClosed, about("dp_1", D::Lost)),
            (EventType::PaymentDisputeOpened, about("dp_2", D::Won)),
            (EventType::PaymentDisputeClosed, about("dp_2", D::Won)),
        ]
    );
}

/// `record_dispute`: racing records of one new dispute open it once, and close it once.
pub async fn racing_records_of_one_dispute_announce_it_once(store: Store) {
    let s = stored(&store, "RACED", SessionState::Successful).await;
    let mut tasks = JoinSet::new();
    for i in 0..10i64 {
        let store = store.clone();
        let status = if i % 2 == 0 {
            DisputeStatus::NeedsResponse
        } else {
            DisputeStatus::Lost
        };
        let d = dispute(&s, "dp_race", status, i);
        tasks.spawn(async move { store.record_dispute(&d).await.unwrap() });
    }
    let mut opened = 0;
    while let Some(joined) = tasks.join_next().await {
        opened += usize::from(joined.unwrap() == DisputeRecorded::Opened);
    }
    assert_eq!(opened, 1);
    let kinds: Vec<_> = events(&store, 2)
        .await
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let count = |kind| kinds.iter().filter(|k| **k == kind).count();
    assert_eq!(count(EventType::PaymentDisputeOpened), 1);
    // Half the records say Lost: whichever came first, it closed once.
    assert_eq!(count(EventType::PaymentDisputeClosed), 1, "{kinds:?}");
    assert_eq!(store.disputes(s.id()).await.unwrap().len(), 1);
}

/// `settle_refund`: a refund the processor fails after confirming it (Succeeded → Failed)
/// takes its amount out of the refunded amount and is announced, once; a refund that fails
/// before succeeding is announced too, and changes no amount.
pub async fn a_refund_failed_after_it_succeeded_gives_its_amount_back_once(store: Store) {
    let s = stored(&store, "FAILED-LATER", SessionState::Successful).await;
    let mut r = refund(&s, "20.00", at(10));
    store.reserve_refund(&r).await.unwrap();
    r.state = LedgerState::Succeeded;
    r.processor_reference = Some("re_late".to_owned());
    r.next_check_at = None;
    assert!(store.settle_refund(&r).await.unwrap());
    r.state = LedgerState::Failed;
    r.updated_at = at(50);
    assert!(store.settle_refund(&r).await.unwrap());
    assert!(!store.settle_refund(&r).await.unwrap(), "failed is final");
    r.state = LedgerState::Succeeded;
    assert!(!store.settle_refund(&r).await.unwrap(), "never back");
    let read = store.get(s.id()).await.unwrap().unwrap();
    assert_eq!(
        (read.money().refunded().value(), read.updated_at()),
        (decimal("0"), at(50))
    );

    let mut refused = refund(&s, "3.00", at(60));
    store.reserve_refund(&refused).await.unwrap();
    refused.state = LedgerState::Failed;
    assert!(store.settle_refund(&refused).await.unwrap());
    assert_eq!(
        store
            .get(s.id())
            .await
            .unwrap()
            .unwrap()
            .money()
            .refunded()
            .value(),
        decimal("0")
    );
    assert_eq!(
        events(&store, 3).await,
        [
            (EventType::PaymentRefunded, None),
            (
                EventType::PaymentRefundFailed,
                Some(EventSubject::Refund(r.id))
            ),
            (
                EventType::PaymentRefundFailed,
                Some(EventSubject::Refund(refused.id))
            ),
        ]
    );
}
