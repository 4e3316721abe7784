//! The MUST lines of [`CardGuard`], one check each. Every check takes a fresh, empty store
//! that is also the session store and the event log (the alert's events name a session).

// Test code: a value that does not parse, or a broken promise, is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use time::Duration;
use tokio::task::JoinSet;

use crate::events::EventType;
use crate::guard::{AddressKey, CardFingerprint, GuardSubject, GuardWindows, TerminalCaps};
use crate::ports::{CardGuard, EventLog, SessionRepository};
use crate::session::PaymentSession;
use crate::testing::builders::{at, session};
use crate::values::TerminalNumber;

/// A store of sessions that is also their event log and the guard's counts.
pub trait GuardStore: SessionRepository + EventLog + CardGuard {}
impl<T> GuardStore for T where T: SessionRepository + EventLog + CardGuard {}

/// A store shared by racing tasks.
pub type Store = Arc<dyn GuardStore>;

const WINDOWS: GuardWindows = GuardWindows {
    address: Duration::hours(1),
    card: Duration::hours(24),
    terminal: Duration::minutes(15),
};

const CAPS: TerminalCaps = TerminalCaps {
    declines: 200,
    rate_percent: 50,
};

/// Seconds, as the checks' clock.
fn sec(s: i64) -> time::OffsetDateTime {
    at(s * 1_000_000)
}

fn hash(c: char) -> String {
    std::iter::repeat_n(c, 64).collect()
}

/// A stored session of `terminal`.
async fn stored(store: &Store, terminal: &str, name: &str) -> PaymentSession {
    let s = session(terminal, name);
    store.insert(&s).await.unwrap();
    s
}

/// The subject of a post of `s` from address `a` with card `c` (hash digits).
fn subject(s: &PaymentSession, a: Option<char>, c: Option<char>) -> GuardSubject {
    GuardSubject {
        terminal: s.terminal().clone(),
        session: s.id(),
        address: a.map(|a| AddressKey::parse(&hash(a)).unwrap()),
        card: c.map(|c| CardFingerprint::parse(&hash(c)).unwrap()),
    }
}

/// Declines count per session, per address within an hour, per terminal within 15 minutes;
/// approvals count only as the terminal's answers; an address-less subject has no address
/// count.
pub async fn declines_are_counted_per_key_over_sliding_windows(store: Store) {
    let a = stored(&store, "T-1", "A").await;
    let b = stored(&store, "T-1", "B").await;
    for i in 0..3 {
        store
            .record_outcome(&subject(&a, Some('1'), Some('c')), true, sec(i))
            .await
            .unwrap();
    }
    store
        .record_outcome(&subject(&b, Some('1'), Some('d')), false, sec(5))
        .await
        .unwrap();
    // Another address, 30 minutes later.
    store
        .record_outcome(&subject(&b, Some('2'), Some('e')), true, sec(1800))
        .await
        .unwrap();
    let now = sec(1801);
    let c = store
        .counts(&subject(&a, Some('1'), None), &WINDOWS, &CAPS, now)
        .await
        .unwrap();
    assert_eq!(c.session_declines, 3);
    assert_eq!(c.address_declines, 3);
    assert_eq!(
        c.terminal_posts, 1,
        "only the last answer is within 15 minutes"
    );
    assert_eq!(c.terminal_declines, 1);
    assert_eq!(c.card_sessions, 0, "no card, no card count");
    assert!(!c.terminal_alerted);
    let none = store
        .counts(&subject(&a, None, None), &WINDOWS, &CAPS, now)
        .await
        .unwrap();
    assert_eq!(none.address_declines, 0);
    // An hour after the first three, they leave the address window; the session keeps them.
    let later = store
        .counts(&subject(&a, Some('1'), None), &WINDOWS, &CAPS, sec(3603))
        .await
        .unwrap();
    assert_eq!(later.address_declines, 0);
    assert_eq!(later.session_declines, 3);
    let b_now = store
        .counts(&subject(&b, Some('2'), None), &WINDOWS, &CAPS, now)
        .await
        .unwrap();
    assert_eq!(b_now.session_declines, 1, "an approval is not a decline");
    assert_eq!(b_now.address_declines, 1);
}

/// One card declined in three sessions of two terminals counts three sessions and two
/// terminals; an approval of it counts nothing; after a day it is forgotten.
pub async fn a_card_is_counted_by_distinct_sessions_and_terminals(store: Store) {
    let s1 = stored(&store, "T-1", "C1").await;
    let s2 = stored(&store, "T-1", "C2").await;
    let s3 = stored(&store, "T-2", "C3").await;
    for (s, t) in [(&s1, 0), (&s1, 1), (&s2, 2), (&s3, 3)] {
        store
            .record_outcome(&subject(s, Some('1'), Some('f')), true, sec(t))
            .await
            .unwrap();
    }
    store
        .record_outcome(&subject(&s2, Some('1'), Some('f')), false, sec(4))
        .await
        .unwrap();
    let c = store
        .counts(&subject(&s1, None, Some('f')), &WINDOWS, &CAPS, sec(10))
        .await
        .unwrap();
    assert_eq!((c.card_sessions, c.card_terminals), (3, 2));
    let other = store
        .counts(&subject(&s1, None, Some('0')), &WINDOWS, &CAPS, sec(10))
        .await
        .unwrap();
    assert_eq!((other.card_sessions, other.card_terminals), (0, 0));
    let next_day = store
        .counts(
            &subject(&s1, None, Some('f')),
            &WINDOWS,
            &CAPS,
            sec(86_400 + 3),
        )
        .await
        .unwrap();
    assert_eq!((next_day.card_sessions, next_day.card_terminals), (0, 0));
}

/// A busy terminal's answers may be counted only as far as its declines make relevant: the
/// spike's decision reads the same as from exact counts.
pub async fn a_busy_terminals_capped_counts_decide_as_exact_ones(store: Store) {
    let s = stored(&store, "T-1", "BUSY").await;
    for i in 0..3 {
        store
            .record_outcome(&subject(&s, Some('1'), None), true, sec(i))
            .await
            .unwrap();
    }
    for i in 0..40 {
        store
            .record_outcome(&subject(&s, Some('2'), None), false, sec(10 + i))
            .await
            .unwrap();
    }
    let c = store
        .counts(&subject(&s, None, None), &WINDOWS, &CAPS, sec(60))
        .await
        .unwrap();
    assert_eq!(c.terminal_declines, 3);
    assert!(
        (7..=43).contains(&c.terminal_posts),
        "past 3 * 100 / 50 + 1 = 7 the answers may stop: {}",
        c.terminal_posts
    );
    let tight = TerminalCaps {
        declines: 2,
        rate_percent: 50,
    };
    let c = store
        .counts(&subject(&s, None, None), &WINDOWS, &tight, sec(60))
        .await
        .unwrap();
    assert!((2..=3).contains(&c.terminal_declines));
    assert!(u64::from(c.terminal_posts) * 50 > u64::from(c.terminal_declines) * 100);
}

/// Of twenty racing spends of one proof exactly one wins; a later spend loses; another id
/// wins.
pub async fn a_proof_is_spent_once_even_under_racing_spends(store: Store) {
    let mut racers = JoinSet::new();
    for _ in 0..20 {
        let store = store.clone();
        racers.spawn(async move {
            store
                .spend_proof("proof-1", sec(600), sec(0))
                .await
                .unwrap()
        });
    }
    let mut wins = 0;
    while let Some(won) = racers.join_next().await {
        wins += usize::from(won.unwrap());
    }
    assert_eq!(wins, 1);
    assert!(!store
        .spend_proof("proof-1", sec(600), sec(1))
        .await
        .unwrap());
    assert!(store
        .spend_proof("proof-2", sec(600), sec(1))
        .await
        .unwrap());
}

/// Raising an alert twice announces it once; lowering it announces its end once; the flag
/// reads back in the counts.
pub async fn an_alert_is_announced_once_when_raised_and_once_when_lowered(store: Store) {
    let s = stored(&store, "T-1", "ALERT").await;
    let terminal = s.terminal().clone();
    let id = s.id();
    let mut racers = JoinSet::new();
    for _ in 0..10 {
        let (store, terminal) = (store.clone(), terminal.clone());
        racers.spawn(async move { store.set_alert(&terminal, true, id, sec(1)).await.unwrap() });
    }
    let mut changed = 0;
    while let Some(c) = racers.join_next().await {
        changed += usize::from(c.unwrap());
    }
    assert_eq!(changed, 1);
    let counts = store
        .counts(&subject(&s, None, None), &WINDOWS, &CAPS, sec(2))
        .await
        .unwrap();
    assert!(counts.terminal_alerted);
    assert!(store
        .set_alert(&terminal, false, s.id(), sec(3))
        .await
        .unwrap());
    assert!(!store
        .set_alert(&terminal, false, s.id(), sec(4))
        .await
        .unwrap());
    let kinds = events(&store, &terminal, 2).await;
    assert_eq!(
        kinds,
        vec![
            EventType::TerminalCardTestingSuspected,
            EventType::TerminalCardTestingEnded
        ]
    );
}

/// A clear forgets the terminal's answers and lowers its flag; another terminal keeps its.
pub async fn a_clear_forgets_the_terminal_only(store: Store) {
    let a = stored(&store, "T-1", "CLR-A").await;
    let b = stored(&store, "T-2", "CLR-B").await;
    for (s, t) in [(&a, 0), (&a, 1), (&b, 2)] {
        store
            .record_outcome(&subject(s, Some('1'), None), true, sec(t))
            .await
            .unwrap();
    }
    store
        .set_alert(a.terminal(), true, a.id(), sec(3))
        .await
        .unwrap();
    let before = store
        .terminal_state(a.terminal(), &WINDOWS, sec(4))
        .await
        .unwrap();
    assert!(before.alerted);
    assert_eq!(
        (before.posts, before.declines, before.declines_kept),
        (2, 2, 2)
    );
    assert_eq!(store.clear_terminal(a.terminal()).await.unwrap(), 2);
    let after = store
        .terminal_state(a.terminal(), &WINDOWS, sec(4))
        .await
        .unwrap();
    assert!(!after.alerted);
    assert_eq!((after.posts, after.declines_kept), (0, 0));
    let other = store
        .terminal_state(b.terminal(), &WINDOWS, sec(4))
        .await
        .unwrap();
    assert_eq!(other.declines, 1);
    let c = store
        .counts(&subject(&b, Some('1'), None), &WINDOWS, &CAPS, sec(4))
        .await
        .unwrap();
    assert_eq!(
        c.address_declines, 1,
        "the address keeps the other terminal's"
    );
}

/// The event types of `terminal`, in feed order, once there are `count` (or after 15 s: a
/// feed may hold events back while an older transaction of its database runs).
async fn events(store: &Store, terminal: &TerminalNumber, count: usize) -> Vec<EventType> {
    let started = std::time::Instant::now();
    loop {
        let page = store.events_after(terminal, None, 100).await.unwrap();
        if page.len() >= count || started.elapsed() > std::time::Duration::from_secs(15) {
            return page.into_iter().map(|e| e.kind).collect();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A late decline turns the session's latest answered (not declined) post into a decline at
/// its own time, once: a second call finds nothing; another session's answers are untouched.
pub async fn a_late_decline_changes_the_sessions_latest_answer_once(store: Store) {
    let a = stored(&store, "T-1", "LATE-A").await;
    let b = stored(&store, "T-1", "LATE-B").await;
    store
        .record_outcome(&subject(&a, Some('1'), Some('c')), false, sec(10))
        .await
        .unwrap();
    store
        .record_outcome(&subject(&b, Some('2'), Some('d')), false, sec(11))
        .await
        .unwrap();
    assert!(store.record_late_decline(a.id(), sec(20)).await.unwrap());
    assert!(!store.record_late_decline(a.id(), sec(21)).await.unwrap());
    let counts = store
        .counts(&subject(&a, Some('1'), Some('c')), &WINDOWS, &CAPS, sec(30))
        .await
        .unwrap();
    assert_eq!(counts.session_declines, 1);
    assert_eq!(counts.address_declines, 1);
    assert_eq!(counts.card_sessions, 1);
    assert_eq!((counts.terminal_posts, counts.terminal_declines), (2, 1));
    // Counted at the decline's time: an hour after it, the address window has let it go.
    let later = store
        .counts(
            &subject(&a, Some('1'), Some('c')),
            &WINDOWS,
            &CAPS,
            sec(20 + 3600),
        )
        .await
        .unwrap();
    assert_eq!(later.address_declines, 0);
    let other = store
        .counts(&subject(&b, Some('2'), Some('d')), &WINDOWS, &CAPS, sec(30))
        .await
        .unwrap();
    assert_eq!(other.session_declines, 0);
}

/// The alerted terminals are listed with the session that raised each; answers before an
/// instant are forgotten and the others still counted.
pub async fn alerts_are_listed_and_old_answers_forgotten(store: Store) {
    let a = stored(&store, "T-1", "LIST-A").await;
    let b = stored(&store, "T-2", "LIST-B").await;
    assert!(store.alerted_terminals().await.unwrap().is_empty());
    assert!(store
        .set_alert(a.terminal(), true, a.id(), sec(1))
        .await
        .unwrap());
    assert_eq!(
        store.alerted_terminals().await.unwrap(),
        vec![(a.terminal().clone(), a.id())]
    );
    for (s, t) in [(&a, 10), (&a, 20), (&b, 30)] {
        store
            .record_outcome(&subject(s, Some('1'), None), true, sec(t))
            .await
            .unwrap();
    }
    assert_eq!(store.forget_answers_before(sec(20)).await.unwrap(), 1);
    assert_eq!(store.forget_answers_before(sec(20)).await.unwrap(), 0);
    let counts = store
        .counts(&subject(&b, Some('1'), None), &WINDOWS, &CAPS, sec(40))
        .await
        .unwrap();
    assert_eq!(counts.address_declines, 2);
}
