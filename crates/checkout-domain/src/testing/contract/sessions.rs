//! The MUST lines of [`SessionRepository`], one check each. Every check takes a fresh, empty
//! store (no terminal needs to exist) and panics on a broken promise.

// Test code: a value that does not parse, or a broken promise, is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::sync::Arc;

use tokio::task::JoinSet;

use crate::ports::{
    AttemptChange, AttemptLedger, InsertError, Recorded, SessionRepository, Sweeps,
};
use crate::session::{AttemptState, PaymentAttempt, PaymentSession, SessionState};
use crate::terminal::Terminal;
use crate::testing::builders::{
    at, attempt, full_checkout_session, random_bytes, reference, session, terminal,
};
use crate::values::MaxCardAttempts;

/// A store shared by racing tasks.
pub type Store = Arc<dyn SessionStore>;

/// A store of sessions that is also their attempt ledger and answers the sweeps, as every
/// adapter is.
pub trait SessionStore: SessionRepository + AttemptLedger + Sweeps {}
impl<T: SessionRepository + AttemptLedger + Sweeps> SessionStore for T {}

async fn insert(store: &Store, s: &PaymentSession) {
    store.insert(s).await.unwrap();
}

/// Begins `a` on its Pending session, moving it to Processing.
async fn begin(store: &Store, a: &PaymentAttempt) {
    let begun = store
        .begin_attempt(a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap();
    assert!(begun, "the session of {} was Pending", a.id);
}

async fn record(
    store: &Store,
    attempt: &PaymentAttempt,
    expected: &[AttemptState],
    session_move: Option<(SessionState, SessionState)>,
) -> Recorded {
    let change = AttemptChange {
        attempt,
        expected,
        session_move,
    };
    store.record_attempt(&change).await.unwrap()
}

/// `insert_for_terminal`: a session whose terminal is not, at the insert, as the caller read
/// it (here a terminal the store does not have) is refused and nothing of it is stored.
pub async fn a_guarded_insert_for_a_terminal_not_as_read_writes_nothing(store: Store) {
    let s = full_checkout_session("T-NOT-HERE", "GUARDED-1");
    let read = Terminal {
        number: terminal("T-NOT-HERE"),
        display_name: "Seen once".to_owned(),
        active: true,
        callback_hosts: None,
        max_card_attempts: MaxCardAttempts::SPEC,
        capture_method: crate::terminal::CaptureMethod::Automatic,
    };
    assert!(matches!(
        store.insert_for_terminal(&s, &read).await,
        Err(InsertError::TerminalChanged)
    ));
    assert_eq!(store.get(s.id()).await.unwrap(), None);
    let holder = store
        .find_holding_reference(s.terminal(), s.reference())
        .await
        .unwrap();
    assert!(holder.is_none(), "the refused session holds no reference");
}

/// `insert`: a held reference is a duplicate on the same terminal only, and nothing of the
/// loser is stored.
pub async fn a_held_reference_is_a_duplicate_on_the_same_terminal_only(store: Store) {
    let first = full_checkout_session("T-1", "REF-1");
    insert(&store, &first).await;
    let again = full_checkout_session("T-1", "REF-1");
    let err = store.insert(&again).await.unwrap_err();
    assert!(matches!(err, InsertError::DuplicateReference), "{err:?}");
    assert_eq!(
        store.get(again.id()).await.unwrap(),
        None,
        "the loser is stored"
    );
    assert_eq!(store.get(first.id()).await.unwrap(), Some(first));

    let other_terminal = session("T-2", "REF-1");
    insert(&store, &other_terminal).await;
    assert_eq!(
        store.get(other_terminal.id()).await.unwrap(),
        Some(other_terminal)
    );
}

/// `insert`: every state that holds a reference holds it; an Expired session frees it.
pub async fn every_holding_state_holds_the_reference_and_expired_frees_it(store: Store) {
    for (i, state) in SessionState::ALL.into_iter().enumerate() {
        let name = format!("HELD-{i}");
        let mut s = session("T-1", &name);
        s = crate::testing::builders::edit(s, |r| r.state = state);
        insert(&store, &s).await;
        let outcome = store.insert(&session("T-1", &name)).await;
        if state.holds_reference() {
            assert!(
                matches!(outcome, Err(InsertError::DuplicateReference)),
                "{state}: {outcome:?}"
            );
        } else {
            assert!(outcome.is_ok(), "{state}: {outcome:?}");
        }
    }
}

/// `insert` with `transition`: expiring the holder frees its reference for a new session,
/// which then holds it with its items and charges.
pub async fn an_expired_session_frees_its_reference(store: Store) {
    let old = session("T-1", "AGAIN");
    insert(&store, &old).await;
    assert!(store
        .transition(
            old.id(),
            SessionState::Pending,
            SessionState::Expired,
            at(10)
        )
        .await
        .unwrap());
    let holder = store
        .find_holding_reference(&terminal("T-1"), &reference("AGAIN"))
        .await
        .unwrap();
    assert_eq!(holder, None);

    let new = full_checkout_session("T-1", "AGAIN");
    insert(&store, &new).await;
    let holder = store
        .find_holding_reference(&terminal("T-1"), &reference("AGAIN"))
        .await
        .unwrap();
    assert_eq!(holder, Some(new));
    let old_state = store.get(old.id()).await.unwrap().unwrap().state();
    assert_eq!(old_state, SessionState::Expired);
}

/// `insert`: of a hundred racing inserts with one reference exactly one succeeds, the
/// others are duplicates, and the winner is the holder.
pub async fn of_a_hundred_racing_inserts_with_one_reference_exactly_one_wins(store: Store) {
    let mut tasks = JoinSet::new();
    for _ in 0..100 {
        let store = store.clone();
        let s = full_checkout_session("T-1", "RACE");
        tasks.spawn(async move { (s.id(), store.insert(&s).await) });
    }
    let (mut won, mut lost, mut other) = (Vec::new(), Vec::new(), Vec::new());
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            (id, Ok(())) => won.push(id),
            (id, Err(InsertError::DuplicateReference)) => lost.push(id),
            (_, Err(e)) => other.push(format!("{e:#}")),
        }
    }
    assert!(other.is_empty(), "unexpected errors: {other:?}");
    assert_eq!((won.len(), lost.len()), (1, 99));
    let holder = store
        .find_holding_reference(&terminal("T-1"), &reference("RACE"))
        .await
        .unwrap()
        .expect("a holder");
    assert_eq!(holder.id(), won[0]);
    assert_eq!(holder.items().len(), 3);
    for id in lost {
        assert_eq!(store.get(id).await.unwrap(), None, "a loser was stored");
    }
}

/// `get`: a session is read with its attempts, oldest first.
pub async fn a_session_is_read_with_its_attempts_oldest_first(store: Store) {
    let s = session("T-1", "ATTEMPTS");
    insert(&store, &s).await;
    let mut first = attempt(&s, at(100));
    begin(&store, &first).await;
    first.state = AttemptState::Declined;
    first.updated_at = at(150);
    let moved = record(
        &store,
        &first,
        &[AttemptState::Sent],
        Some((SessionState::Processing, SessionState::Pending)),
    )
    .await;
    assert_eq!(moved, Recorded::Moved);
    let second = attempt(&s, at(200));
    begin(&store, &second).await;

    let read = store.get(s.id()).await.unwrap().unwrap();
    let seen: Vec<_> = read.attempts().iter().map(|a| (a.at, a.state)).collect();
    assert_eq!(
        seen,
        [
            (at(100), AttemptState::Declined),
            (at(200), AttemptState::Sent)
        ]
    );
    let listed = store.attempts(s.id()).await.unwrap();
    assert_eq!(listed, vec![first, second.clone()]);
    assert_eq!(store.latest_attempt(s.id()).await.unwrap(), Some(second));
}

/// `find_by_reference`: only the terminal's own sessions, newest first, every state.
pub async fn a_lookup_by_reference_sees_only_the_terminals_own_sessions(store: Store) {
    let mut old = session("T-1", "LOOKUP");
    old = crate::testing::builders::edit(old, |r| r.state = SessionState::Expired);
    insert(&store, &old).await;
    let mut new = session("T-1", "LOOKUP");
    new = crate::testing::builders::edit(new, |r| r.created_at = at(5));
    insert(&store, &new).await;
    insert(&store, &session("T-2", "LOOKUP")).await;

    let found = store
        .find_by_reference(&terminal("T-1"), &reference("LOOKUP"), 10)
        .await
        .unwrap();
    let ids: Vec<_> = found.iter().map(|s| s.id()).collect();
    assert_eq!(ids, [new.id(), old.id()]);
    let limited = store
        .find_by_reference(&terminal("T-1"), &reference("LOOKUP"), 1)
        .await
        .unwrap();
    assert_eq!(limited.len(), 1);
}

/// `transition`: of twenty racing calls from one state exactly one moves the session.
pub async fn of_twenty_racing_transitions_from_one_state_exactly_one_wins(store: Store) {
    let s = session("T-1", "CAS");
    insert(&store, &s).await;
    let id = s.id();
    let mut tasks = JoinSet::new();
    for i in 0..20 {
        let store = store.clone();
        tasks.spawn(async move {
            let when = at(1_000 + i);
            let moved = store
                .transition(id, SessionState::Pending, SessionState::Processing, when)
                .await
                .unwrap();
            (moved, when)
        });
    }
    let mut winners = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (moved, when) = joined.unwrap();
        if moved {
            winners.push(when);
        }
    }
    assert_eq!(winners.len(), 1);
    let read = store.get(s.id()).await.unwrap().unwrap();
    assert_eq!(
        (read.state(), read.updated_at()),
        (SessionState::Processing, winners[0])
    );
}

/// `transition`: from a state the session is not in, or of a session that does not exist,
/// nothing changes; from its state, it moves.
pub async fn a_transition_from_another_state_changes_nothing(store: Store) {
    let s = session("T-1", "STAY");
    insert(&store, &s).await;
    let moved = store
        .transition(
            s.id(),
            SessionState::Processing,
            SessionState::Successful,
            at(50),
        )
        .await
        .unwrap();
    assert!(!moved);
    assert_eq!(store.get(s.id()).await.unwrap(), Some(s.clone()));
    let unknown = crate::values::SessionId::from_random_bytes(random_bytes());
    let moved = store
        .transition(
            unknown,
            SessionState::Pending,
            SessionState::Processing,
            at(50),
        )
        .await
        .unwrap();
    assert!(!moved);
    let moved = store
        .transition(
            s.id(),
            SessionState::Pending,
            SessionState::Cancelled,
            at(60),
        )
        .await
        .unwrap();
    assert!(moved);
    let read = store.get(s.id()).await.unwrap().unwrap();
    assert_eq!(
        (read.state(), read.updated_at()),
        (SessionState::Cancelled, at(60))
    );
}

/// `begin_attempt`: from the wrong state nothing is recorded; of racing calls exactly one
/// begins.
pub async fn of_racing_attempts_on_one_session_exactly_one_begins(store: Store) {
    let mut failed = session("T-1", "LATE");
    failed = crate::testing::builders::edit(failed, |r| r.state = SessionState::Failed);
    insert(&store, &failed).await;
    let late = attempt(&failed, at(100));
    let begun = store
        .begin_attempt(&late, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap();
    assert!(!begun);
    assert_eq!(store.attempts(failed.id()).await.unwrap(), Vec::new());
    assert_eq!(store.get(failed.id()).await.unwrap(), Some(failed));

    let s = session("T-1", "DOUBLE-CLICK");
    insert(&store, &s).await;
    let mut tasks = JoinSet::new();
    for i in 0..20 {
        let store = store.clone();
        let a = attempt(&s, at(200 + i));
        tasks.spawn(async move {
            store
                .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
                .await
                .unwrap()
        });
    }
    let mut begun = 0;
    while let Some(joined) = tasks.join_next().await {
        begun += usize::from(joined.unwrap());
    }
    assert_eq!(begun, 1);
    assert_eq!(store.attempts(s.id()).await.unwrap().len(), 1);
    let read = store.get(s.id()).await.unwrap().unwrap();
    let only = store.attempts(s.id()).await.unwrap().remove(0);
    assert_eq!(read.state(), SessionState::Processing);
    assert_eq!(read.current_attempt(), Some(only.id));
}

/// `record_attempt`: an attempt not in an expected state saves nothing, and one never
/// begun is never recorded.
pub async fn recording_an_attempt_in_an_unexpected_state_saves_nothing(store: Store) {
    let s = session("T-1", "GUARD");
    insert(&store, &s).await;
    let begun = attempt(&s, at(100));
    begin(&store, &begun).await;
    let mut finished = begun.clone();
    finished.state = AttemptState::Succeeded;
    finished.updated_at = at(200);
    let outcome = record(
        &store,
        &finished,
        &[AttemptState::RequiresAction],
        Some((SessionState::Processing, SessionState::Successful)),
    )
    .await;
    assert_eq!(outcome, Recorded::Stale);
    assert_eq!(store.attempt(begun.id).await.unwrap(), Some(begun));
    let state = store.get(s.id()).await.unwrap().unwrap().state();
    assert_eq!(state, SessionState::Processing);

    let ghost = attempt(&s, at(100));
    let outcome = record(&store, &ghost, &AttemptState::UNRESOLVED, None).await;
    assert_eq!(outcome, Recorded::Stale);
    assert_eq!(store.attempt(ghost.id).await.unwrap(), None);
}

/// `record_attempt`: an answer about an attempt that is not the session's current one is
/// kept on its attempt and never moves the session.
pub async fn an_answer_about_an_attempt_that_is_not_current_never_moves_the_session(store: Store) {
    let s = session("T-1", "STALE");
    insert(&store, &s).await;
    let mut first = attempt(&s, at(100));
    begin(&store, &first).await;
    let back = store
        .transition(
            s.id(),
            SessionState::Processing,
            SessionState::Pending,
            at(150),
        )
        .await
        .unwrap();
    assert!(back);
    let second = attempt(&s, at(200));
    begin(&store, &second).await;

    first.state = AttemptState::Succeeded;
    first.processor_reference = Some("pi_late".to_owned());
    first.updated_at = at(300);
    let outcome = record(
        &store,
        &first,
        &AttemptState::UNRESOLVED,
        Some((SessionState::Processing, SessionState::Successful)),
    )
    .await;
    assert_eq!(outcome, Recorded::AttemptOnly);
    assert_eq!(store.attempt(first.id).await.unwrap(), Some(first));
    let read = store.get(s.id()).await.unwrap().unwrap();
    assert_eq!(read.state(), SessionState::Processing);
    assert_eq!(read.current_attempt(), Some(second.id));
}

/// `record_attempt`: of racing answers about one attempt exactly one is recorded, and the
/// session agrees with it.
pub async fn of_racing_answers_about_one_attempt_exactly_one_is_recorded(store: Store) {
    let s = session("T-1", "ANSWERS");
    insert(&store, &s).await;
    let begun = attempt(&s, at(100));
    begin(&store, &begun).await;
    let mut tasks = JoinSet::new();
    for i in 0..20 {
        let store = store.clone();
        let mut answer = begun.clone();
        let (state, to) = if i % 2 == 0 {
            (AttemptState::Succeeded, SessionState::Successful)
        } else {
            (AttemptState::Declined, SessionState::Failed)
        };
        answer.state = state;
        answer.updated_at = at(200 + i);
        tasks.spawn(async move {
            let session_move = Some((SessionState::Processing, to));
            record(&store, &answer, &AttemptState::UNRESOLVED, session_move).await
        });
    }
    let mut moved = 0;
    while let Some(joined) = tasks.join_next().await {
        moved += usize::from(joined.unwrap() == Recorded::Moved);
    }
    assert_eq!(moved, 1);
    let stored = store.attempt(begun.id).await.unwrap().unwrap();
    let session = store.get(s.id()).await.unwrap().unwrap();
    let agrees = matches!(
        (stored.state, session.state()),
        (AttemptState::Succeeded, SessionState::Successful)
            | (AttemptState::Declined, SessionState::Failed)
    );
    assert!(agrees, "{stored:?} {session:?}");
}

/// A Processing session of `T-1` with one attempt in `state`, due at `due`.
async fn unresolved(
    store: &Store,
    name: &str,
    state: AttemptState,
    due: Option<i64>,
) -> PaymentAttempt {
    let s = session("T-1", name);
    insert(store, &s).await;
    let mut a = attempt(&s, at(10));
    begin(store, &a).await;
    a.state = state;
    a.next_check_at = due.map(at);
    assert_eq!(
        record(store, &a, &[AttemptState::Sent], None).await,
        Recorded::Moved
    );
    a
}

/// `claim_due_attempts`: due checked attempts, oldest due first, at most the limit, leased
/// in the same step; attempts with no next check are never claimed.
pub async fn claims_take_due_attempts_oldest_first_and_lease_them(store: Store) {
    let late = unresolved(&store, "LATE", AttemptState::Unknown, Some(300)).await;
    let early = unresolved(&store, "EARLY", AttemptState::Sent, Some(100)).await;
    let middle = unresolved(&store, "MIDDLE", AttemptState::Unknown, Some(200)).await;
    let not_due = unresolved(&store, "NOT-DUE", AttemptState::Unknown, Some(301)).await;
    let given_up = unresolved(&store, "GIVEN-UP", AttemptState::Unknown, None).await;
    let settled = unresolved(&store, "SETTLED", AttemptState::Succeeded, Some(0)).await;

    let claimed = store
        .claim_due_attempts(at(300), at(1_000), 2)
        .await
        .unwrap();
    let ids: Vec<_> = claimed.iter().map(|a| a.id).collect();
    assert_eq!(
        ids,
        [early.id, middle.id],
        "oldest due first, at most the limit"
    );
    let leased = store
        .attempt(early.id)
        .await
        .unwrap()
        .unwrap()
        .next_check_at;
    assert_eq!(leased, Some(at(1_000)));
    let next = store
        .claim_due_attempts(at(300), at(1_000), 10)
        .await
        .unwrap();
    assert_eq!(next.iter().map(|a| a.id).collect::<Vec<_>>(), [late.id]);
    let none = store
        .claim_due_attempts(at(300), at(1_000), 10)
        .await
        .unwrap();
    assert!(none.is_empty());
    for untouched in [&not_due, &given_up, &settled] {
        assert_eq!(
            store.attempt(untouched.id).await.unwrap().as_ref(),
            Some(untouched)
        );
    }
}

/// `claim_due_attempts`: racing claims never take the same attempt.
pub async fn racing_claims_never_take_the_same_attempt(store: Store) {
    for n in 0..40 {
        unresolved(
            &store,
            &format!("DUE-{n}"),
            AttemptState::Unknown,
            Some(100 + n),
        )
        .await;
    }
    let mut tasks = JoinSet::new();
    for _ in 0..4 {
        let store = store.clone();
        tasks.spawn(async move {
            store
                .claim_due_attempts(at(500), at(9_000), 15)
                .await
                .unwrap()
        });
    }
    let mut seen = HashSet::new();
    while let Some(joined) = tasks.join_next().await {
        for a in joined.unwrap() {
            assert!(seen.insert(a.id), "{} claimed twice", a.id);
        }
    }
    assert_eq!(seen.len(), 40);
}

/// An ApprovedTransaction session of `T-1`, held since `held_at` (its attempt authorised).
async fn held_since(store: &Store, name: &str, held_at: i64) -> PaymentSession {
    let s = session("T-1", name);
    insert(store, &s).await;
    let mut a = attempt(&s, at(10));
    begin(store, &a).await;
    a.state = AttemptState::Authorized;
    a.next_check_at = None;
    a.updated_at = at(held_at);
    let moved = Some((SessionState::Processing, SessionState::ApprovedTransaction));
    assert_eq!(
        record(store, &a, &[AttemptState::Sent], moved).await,
        Recorded::Moved
    );
    store.get(s.id()).await.unwrap().unwrap()
}

/// `claim_due_holds`: authorisations held since the given instant or earlier, never one held
/// later; racing claims never take the same one; a claimed one is not claimed again before
/// its lease ends, and is after.
pub async fn hold_claims_take_long_held_authorisations_once_until_their_lease_ends(store: Store) {
    let mut old = HashSet::new();
    for n in 0..30 {
        old.insert(held_since(&store, &format!("HELD-{n}"), 100 + n).await.id());
    }
    let young = held_since(&store, "HELD-YOUNG", 5_000).await;
    let paid = session("T-1", "NOT-HELD");
    insert(&store, &paid).await;

    let mut tasks = JoinSet::new();
    for _ in 0..4 {
        let store = store.clone();
        tasks.spawn(async move {
            store
                .claim_due_holds(at(1_000), at(10_000), at(20_000), 10)
                .await
                .unwrap()
        });
    }
    let mut seen = HashSet::new();
    while let Some(joined) = tasks.join_next().await {
        for id in joined.unwrap() {
            assert!(seen.insert(id), "{id} claimed twice");
        }
    }
    assert_eq!(seen, old, "every long-held authorisation, and only those");
    assert!(!seen.contains(&young.id()));
    let leased = store
        .claim_due_holds(at(1_000), at(19_999), at(30_000), 100)
        .await
        .unwrap();
    assert!(
        leased.is_empty(),
        "claimed again before the lease ended: {leased:?}"
    );
    let again = store
        .claim_due_holds(at(1_000), at(20_000), at(30_000), 100)
        .await
        .unwrap();
    assert_eq!(again.into_iter().collect::<HashSet<_>>(), old);
}
