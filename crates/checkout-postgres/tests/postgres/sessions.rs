//! `SessionRepository` on PostgreSQL.

use std::collections::BTreeMap;

use checkout_domain::card::CardBrand;
use checkout_domain::ports::{AttemptChange, InsertError, Recorded, SessionRepository};
use checkout_domain::session::{
    AttemptState, Callbacks, PaymentAttempt, PaymentSession, SessionKind, SessionState,
};
use checkout_domain::values::SessionId;
use checkout_domain::SvcCode;
use checkout_postgres::PgStore;
use tokio::task::JoinSet;

use crate::support::*;

#[tokio::test]
async fn a_session_with_every_field_reads_back_unchanged() {
    let (_db, store) = database().await;
    let s = full_checkout_session("T-1", "ORDER-7");
    store.insert(&s).await.unwrap();

    let read = store.get(s.id).await.unwrap().expect("stored");
    assert_eq!(read, s);
    // Rendered at the currency's scale, not the column's (NUMERIC(19,4)).
    assert_eq!(read.amount.value().to_string(), "10.50");
    assert_eq!(read.amount.currency().code(), "USD");
    let items: Vec<String> = read
        .items
        .iter()
        .map(|i| i.amount.value().to_string())
        .collect();
    assert_eq!(items, ["2.50", "0.00", "1.99"]);
    let codes: Vec<Option<&str>> = read
        .items
        .iter()
        .map(|i| i.code.as_ref().map(|c| c.as_str()))
        .collect();
    assert_eq!(codes, [Some("SKU-9"), None, Some("A-1")]);
    let charges: Vec<String> = read
        .charges
        .iter()
        .map(|c| c.amount.value().to_string())
        .collect();
    assert_eq!(charges, ["1.25", "0.01", "0.24"]);
    assert_eq!(read.created_at, at(1));
    assert_eq!(read.updated_at, at(2));
    assert_eq!(read.expires_at.microsecond(), 999_999);
    assert!(read.created_at.offset().is_utc());
}

#[tokio::test]
async fn amounts_keep_each_currency_scale() {
    let (_db, store) = database().await;
    for (i, (value, currency, shown)) in [
        ("1000", "JPY", "1000"),
        ("1.005", "KWD", "1.005"),
        ("0.01", "USD", "0.01"),
        ("9999999999999.99", "CRC", "9999999999999.99"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut s = session("T-1", &format!("SCALE-{i}"));
        s.amount = amount(value, currency);
        s.items = vec![checkout_domain::session::Item {
            code: None,
            quantity: 2,
            description: None,
            amount: line(value, currency),
        }];
        store.insert(&s).await.unwrap();
        let read = store.get(s.id).await.unwrap().expect("stored");
        assert_eq!(read, s, "{currency}");
        assert_eq!(read.amount.value().to_string(), shown, "{currency}");
        assert_eq!(
            read.items[0].amount.value().to_string(),
            shown,
            "{currency}"
        );
    }
}

#[tokio::test]
async fn optional_fields_may_be_absent() {
    let (_db, store) = database().await;
    let mut checkout = full_checkout_session("T-1", "NO-BACK");
    checkout.kind = SessionKind::IntegratedCheckout(Box::new(Callbacks {
        success: url("https://shop.example/ok"),
        fail: url("https://shop.example/fail"),
        back: None,
    }));
    checkout.description = None;
    checkout.email = None;
    checkout.culture = None;
    checkout.items.clear();
    checkout.charges.clear();
    let link = session("T-1", "LINK");
    for s in [&checkout, &link] {
        store.insert(s).await.unwrap();
        assert_eq!(store.get(s.id).await.unwrap().as_ref(), Some(s));
    }
    let SessionKind::IntegratedCheckout(callbacks) =
        store.get(checkout.id).await.unwrap().unwrap().kind
    else {
        panic!("kind changed");
    };
    assert_eq!(callbacks.back, None);
    assert_eq!(
        store.get(link.id).await.unwrap().unwrap().kind,
        SessionKind::PaymentLink
    );
}

#[tokio::test]
async fn get_without_lines_reads_the_session_without_its_items_and_charges() {
    let (_db, store) = database().await;
    let s = full_checkout_session("T-1", "ORDER-8");
    assert!(!s.items.is_empty() && !s.charges.is_empty());
    store.insert(&s).await.unwrap();

    let read = store
        .get_without_lines(s.id)
        .await
        .unwrap()
        .expect("stored");
    assert!(read.items.is_empty());
    assert!(read.charges.is_empty());
    let mut expected = s.clone();
    expected.items.clear();
    expected.charges.clear();
    assert_eq!(read, expected);
    assert_eq!(
        store
            .get_without_lines(SessionId::from_random_bytes(random_bytes()))
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn the_largest_session_keeps_every_item_and_charge_in_order() {
    let (_db, store) = database().await;
    let mut s = full_checkout_session("T-1", "ORDER-9");
    let item = s.items[0].clone();
    let charge = s.charges[0].clone();
    s.items = (0..checkout_domain::session::MAX_ITEMS)
        .map(|i| checkout_domain::session::Item {
            quantity: u32::try_from(i + 1).unwrap(),
            ..item.clone()
        })
        .collect();
    s.charges = (0..checkout_domain::session::MAX_CHARGES)
        .map(|i| checkout_domain::session::Charge {
            name: (i % 2 == 0).then(|| charge.name.clone()).flatten(),
            ..charge.clone()
        })
        .collect();
    store.insert(&s).await.unwrap();
    assert_eq!(store.get(s.id).await.unwrap().expect("stored"), s);
}

#[tokio::test]
async fn an_unknown_session_is_none() {
    let (_db, store) = database().await;
    assert_eq!(
        store
            .get(SessionId::from_random_bytes(random_bytes()))
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn a_held_reference_is_a_duplicate_on_the_same_terminal_only() {
    let (db, store) = database().await;
    let first = full_checkout_session("T-1", "REF-1");
    store.insert(&first).await.unwrap();

    let again = full_checkout_session("T-1", "REF-1");
    let err = store.insert(&again).await.unwrap_err();
    assert!(matches!(err, InsertError::DuplicateReference), "{err:?}");
    assert_eq!(
        store.get(again.id).await.unwrap(),
        None,
        "nothing of the loser is stored"
    );
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM session_items").await,
        3
    );

    let other_terminal = session("T-2", "REF-1");
    store.insert(&other_terminal).await.unwrap();
    assert_eq!(
        store.get(other_terminal.id).await.unwrap(),
        Some(other_terminal)
    );
}

#[tokio::test]
async fn a_completed_session_still_holds_its_reference() {
    let (_db, store) = database().await;
    for (i, state) in SessionState::ALL
        .into_iter()
        .filter(|s| s.holds_reference())
        .enumerate()
    {
        let mut s = session("T-1", &format!("HELD-{i}"));
        s.state = state;
        store.insert(&s).await.unwrap();
        let err = store
            .insert(&session("T-1", &format!("HELD-{i}")))
            .await
            .unwrap_err();
        assert!(
            matches!(err, InsertError::DuplicateReference),
            "{state}: {err:?}"
        );
    }
}

#[tokio::test]
async fn other_unique_violations_are_store_errors() {
    let (_db, store) = database().await;
    let s = session("T-1", "A");
    store.insert(&s).await.unwrap();
    let mut same_id = session("T-1", "B");
    same_id.id = s.id;
    let err = store.insert(&same_id).await.unwrap_err();
    assert!(matches!(err, InsertError::Store(_)), "{err:?}");
    let mut same_internal = session("T-1", "C");
    same_internal.internal_reference = s.internal_reference.clone();
    let err = store.insert(&same_internal).await.unwrap_err();
    assert!(matches!(err, InsertError::Store(_)), "{err:?}");
}

#[tokio::test]
async fn an_expired_session_frees_its_reference() {
    let (_db, store) = database().await;
    let old = session("T-1", "AGAIN");
    store.insert(&old).await.unwrap();
    assert!(store
        .transition(old.id, SessionState::Pending, SessionState::Expired, at(10))
        .await
        .unwrap());
    assert_eq!(
        store
            .find_holding_reference(&terminal("T-1"), &reference("AGAIN"))
            .await
            .unwrap(),
        None
    );

    let new = full_checkout_session("T-1", "AGAIN");
    store.insert(&new).await.unwrap();
    let holder = store
        .find_holding_reference(&terminal("T-1"), &reference("AGAIN"))
        .await
        .unwrap();
    assert_eq!(
        holder,
        Some(new),
        "the holder is read with its items and charges"
    );
    assert_eq!(
        store.get(old.id).await.unwrap().unwrap().state,
        SessionState::Expired
    );
}

#[tokio::test]
async fn find_holding_reference_matches_terminal_and_reference() {
    let (_db, store) = database().await;
    let mut done = session("T-1", "R");
    done.state = SessionState::Successful;
    store.insert(&done).await.unwrap();
    assert_eq!(
        store
            .find_holding_reference(&terminal("T-1"), &reference("R"))
            .await
            .unwrap(),
        Some(done)
    );
    assert_eq!(
        store
            .find_holding_reference(&terminal("T-2"), &reference("R"))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .find_holding_reference(&terminal("T-1"), &reference("r"))
            .await
            .unwrap(),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_a_hundred_racing_inserts_with_one_reference_exactly_one_wins() {
    let (db, store) = database().await;
    let mut tasks = JoinSet::new();
    for _ in 0..100 {
        let store = store.clone();
        let s = full_checkout_session("T-1", "RACE");
        tasks.spawn(async move { (s.id, store.insert(&s).await) });
    }
    let (mut won, mut duplicates, mut other) = (Vec::new(), 0, Vec::new());
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            (id, Ok(())) => won.push(id),
            (_, Err(InsertError::DuplicateReference)) => duplicates += 1,
            (_, Err(e)) => other.push(format!("{e:#}")),
        }
    }
    assert!(other.is_empty(), "unexpected errors: {other:?}");
    assert_eq!(won.len(), 1);
    assert_eq!(duplicates, 99);
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM payment_sessions").await,
        1
    );
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM session_items").await,
        3
    );
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM session_charges").await,
        3
    );
    let holder = store
        .find_holding_reference(&terminal("T-1"), &reference("RACE"))
        .await
        .unwrap();
    assert_eq!(holder.map(|s| s.id), Some(won[0]));
}

/// Concurrent creates are combined into shared statements (write combining): a session that
/// fails (an unknown terminal: a foreign-key violation) fails alone, each repeated reference
/// has exactly one winner, and the rest are written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_concurrent_inserts_a_bad_one_fails_alone_and_each_reference_has_one_winner() {
    let (db, store) = database().await;
    let mut tasks = JoinSet::new();
    let mut sessions: Vec<PaymentSession> = (0..100)
        .map(|i| full_checkout_session("T-1", &format!("MANY-{i}")))
        .collect();
    sessions.extend((0..20).map(|i| session("T-1", &format!("MANY-{i}"))));
    sessions.extend((0..10).map(|i| session("T-404", &format!("BAD-{i}"))));
    for s in sessions {
        let store = store.clone();
        tasks.spawn(async move { (s.reference.clone(), store.insert(&s).await) });
    }
    let (mut won, mut duplicates, mut failed) = (BTreeMap::new(), Vec::new(), Vec::new());
    while let Some(joined) = tasks.join_next().await {
        let (reference, outcome) = joined.unwrap();
        match outcome {
            Ok(()) => *won.entry(reference.as_str().to_owned()).or_insert(0) += 1,
            Err(InsertError::DuplicateReference) => duplicates.push(reference),
            Err(InsertError::Store(_)) => failed.push(reference.as_str().to_owned()),
        }
    }
    assert_eq!(won.len(), 100, "{won:?}");
    assert!(
        won.values().all(|n| *n == 1),
        "one winner per reference: {won:?}"
    );
    assert!(won.keys().all(|r| r.starts_with("MANY-")));
    assert_eq!(duplicates.len(), 20);
    failed.sort();
    let bad: Vec<String> = {
        let mut bad: Vec<String> = (0..10).map(|i| format!("BAD-{i}")).collect();
        bad.sort();
        bad
    };
    assert_eq!(
        failed, bad,
        "only the sessions of the unknown terminal fail"
    );
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM payment_sessions").await,
        100
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_twenty_racing_transitions_from_one_state_exactly_one_wins() {
    let (_db, store) = database().await;
    let s = session("T-1", "CAS");
    store.insert(&s).await.unwrap();
    let mut tasks = JoinSet::new();
    for i in 0..20 {
        let store = store.clone();
        tasks.spawn(async move {
            let when = at(1_000 + i);
            let moved = store
                .transition(s.id, SessionState::Pending, SessionState::Processing, when)
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
    let read = store.get(s.id).await.unwrap().unwrap();
    assert_eq!(read.state, SessionState::Processing);
    assert_eq!(read.updated_at, winners[0]);
}

#[tokio::test]
async fn a_transition_from_another_state_changes_nothing() {
    let (_db, store) = database().await;
    let s = session("T-1", "STAY");
    store.insert(&s).await.unwrap();
    let moved = store
        .transition(
            s.id,
            SessionState::Processing,
            SessionState::Successful,
            at(50),
        )
        .await
        .unwrap();
    assert!(!moved);
    assert_eq!(store.get(s.id).await.unwrap(), Some(s.clone()));
    let unknown = SessionId::from_random_bytes(random_bytes());
    assert!(!store
        .transition(
            unknown,
            SessionState::Pending,
            SessionState::Processing,
            at(50)
        )
        .await
        .unwrap());
    assert!(store
        .transition(s.id, SessionState::Pending, SessionState::Cancelled, at(60))
        .await
        .unwrap());
    let read = store.get(s.id).await.unwrap().unwrap();
    assert_eq!(
        (read.state, read.updated_at),
        (SessionState::Cancelled, at(60))
    );
}

#[tokio::test]
async fn begin_attempt_moves_the_session_and_records_the_attempt() {
    let (_db, store) = database().await;
    let s = session("T-1", "PAY");
    store.insert(&s).await.unwrap();
    assert_eq!(store.latest_attempt(s.id).await.unwrap(), None);

    let a = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    assert_eq!(store.latest_attempt(s.id).await.unwrap(), Some(a));
    let read = store.get(s.id).await.unwrap().unwrap();
    assert_eq!(
        (read.state, read.updated_at),
        (SessionState::Processing, at(100))
    );
}

#[tokio::test]
async fn begin_attempt_from_the_wrong_state_records_nothing() {
    let (db, store) = database().await;
    let mut s = session("T-1", "LATE");
    s.state = SessionState::Failed;
    store.insert(&s).await.unwrap();
    let a = attempt(&s, at(100));
    assert!(!store
        .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    assert_eq!(store.latest_attempt(s.id).await.unwrap(), None);
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM payment_attempts").await,
        0
    );
    assert_eq!(store.get(s.id).await.unwrap(), Some(s));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_racing_attempts_on_one_session_exactly_one_begins() {
    let (db, store) = database().await;
    let s = session("T-1", "DOUBLE-CLICK");
    store.insert(&s).await.unwrap();
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
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM payment_attempts").await,
        1
    );
}

/// Records `attempt` expecting it in `expected`, moving its session as asked.
async fn record(
    store: &PgStore,
    attempt: &PaymentAttempt,
    expected: &[AttemptState],
    session_move: Option<(SessionState, SessionState)>,
) -> Recorded {
    store
        .record_attempt(&AttemptChange {
            attempt,
            expected,
            session_move,
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn record_attempt_saves_the_attempt_and_moves_the_session() {
    let (_db, store) = database().await;
    let s = session("T-1", "3DS");
    store.insert(&s).await.unwrap();
    let mut a = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    assert_eq!(
        store.get(s.id).await.unwrap().unwrap().current_attempt,
        Some(a.id)
    );

    a.state = AttemptState::RequiresAction;
    a.processor_reference = Some("pi_123".to_owned());
    a.challenge_url = Some("https://acs.example/challenge/1".to_owned());
    a.next_check_at = None;
    a.updated_at = at(200);
    let moved = record(
        &store,
        &a,
        &AttemptState::UNRESOLVED,
        Some((SessionState::Processing, SessionState::ChallengeRequired)),
    )
    .await;
    assert_eq!(moved, Recorded::Moved);
    assert_eq!(store.attempt(a.id).await.unwrap(), Some(a.clone()));
    let read = store.get(s.id).await.unwrap().unwrap();
    assert_eq!(
        (read.state, read.updated_at),
        (SessionState::ChallengeRequired, at(200))
    );

    // Without a session move only the attempt changes.
    a.state = AttemptState::Unknown;
    a.checks = 3;
    a.next_check_at = Some(at(900));
    a.updated_at = at(250);
    assert_eq!(
        record(&store, &a, &[AttemptState::RequiresAction], None).await,
        Recorded::Moved
    );
    assert_eq!(store.attempt(a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(
        store.get(s.id).await.unwrap().unwrap().state,
        SessionState::ChallengeRequired
    );
}

#[tokio::test]
async fn record_attempt_in_an_unexpected_state_saves_nothing() {
    let (_db, store) = database().await;
    let s = session("T-1", "GUARD");
    store.insert(&s).await.unwrap();
    let begun = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&begun, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    let mut finished = begun.clone();
    finished.state = AttemptState::Succeeded;
    finished.updated_at = at(200);
    assert_eq!(
        record(
            &store,
            &finished,
            &[AttemptState::RequiresAction],
            Some((SessionState::Processing, SessionState::Successful))
        )
        .await,
        Recorded::Stale
    );
    assert_eq!(store.attempt(begun.id).await.unwrap(), Some(begun.clone()));
    assert_eq!(
        store.get(s.id).await.unwrap().unwrap().state,
        SessionState::Processing
    );
    // An attempt never begun is never recorded.
    let ghost = attempt(&s, at(100));
    assert_eq!(
        record(&store, &ghost, &AttemptState::UNRESOLVED, None).await,
        Recorded::Stale
    );
    assert_eq!(store.attempt(ghost.id).await.unwrap(), None);
}

#[tokio::test]
async fn an_answer_about_an_attempt_that_is_not_current_is_kept_and_never_moves_the_session() {
    let (_db, store) = database().await;
    let s = session("T-1", "STALE");
    store.insert(&s).await.unwrap();
    // Attempt 1 begins and is left unknown; it is then (wrongly) set aside and attempt 2
    // becomes current: the late answer of attempt 1 must not settle attempt 2's session.
    let mut first = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&first, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    assert!(store
        .transition(
            s.id,
            SessionState::Processing,
            SessionState::Pending,
            at(150)
        )
        .await
        .unwrap());
    let second = attempt(&s, at(200));
    assert!(store
        .begin_attempt(&second, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());

    first.state = AttemptState::Succeeded;
    first.processor_reference = Some("pi_late".to_owned());
    first.updated_at = at(300);
    assert_eq!(
        record(
            &store,
            &first,
            &AttemptState::UNRESOLVED,
            Some((SessionState::Processing, SessionState::Successful))
        )
        .await,
        Recorded::AttemptOnly
    );
    assert_eq!(store.attempt(first.id).await.unwrap(), Some(first));
    let read = store.get(s.id).await.unwrap().unwrap();
    assert_eq!(read.state, SessionState::Processing);
    assert_eq!(read.current_attempt, Some(second.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_racing_answers_about_one_attempt_exactly_one_is_recorded() {
    let (_db, store) = database().await;
    let s = session("T-1", "RACE");
    store.insert(&s).await.unwrap();
    let begun = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&begun, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    let mut tasks = JoinSet::new();
    for i in 0..20 {
        let store = store.clone();
        let mut answer = begun.clone();
        answer.state = if i % 2 == 0 {
            AttemptState::Succeeded
        } else {
            AttemptState::Declined
        };
        answer.updated_at = at(200 + i);
        tasks.spawn(async move {
            let to = if i % 2 == 0 {
                SessionState::Successful
            } else {
                SessionState::Failed
            };
            record(
                &store,
                &answer,
                &AttemptState::UNRESOLVED,
                Some((SessionState::Processing, to)),
            )
            .await
        });
    }
    let mut moved = 0;
    while let Some(joined) = tasks.join_next().await {
        moved += usize::from(joined.unwrap() == Recorded::Moved);
    }
    assert_eq!(moved, 1);
    let stored = store.attempt(begun.id).await.unwrap().unwrap();
    let session = store.get(s.id).await.unwrap().unwrap();
    let agrees = matches!(
        (stored.state, session.state),
        (AttemptState::Succeeded, SessionState::Successful)
            | (AttemptState::Declined, SessionState::Failed)
    );
    assert!(agrees, "{stored:?} {session:?}");
}

#[tokio::test]
async fn the_latest_attempt_is_the_most_recent_one() {
    let (_db, store) = database().await;
    let s = session("T-1", "RETRY");
    store.insert(&s).await.unwrap();
    let mut first = attempt(&s, at(100));
    first.card_brand = CardBrand::Mastercard;
    first.card_last4 = "0005".to_owned();
    assert!(store
        .begin_attempt(&first, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    first.state = AttemptState::NothingCharged;
    first.svc_code = Some(SvcCode::Svc004);
    assert_eq!(
        record(
            &store,
            &first,
            &[AttemptState::Sent],
            Some((SessionState::Processing, SessionState::Pending))
        )
        .await,
        Recorded::Moved
    );

    // Same instant as the first: insertion order breaks the tie.
    let second = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&second, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    assert_eq!(store.latest_attempt(s.id).await.unwrap(), Some(second));

    let other = session("T-1", "OTHER");
    store.insert(&other).await.unwrap();
    assert_eq!(store.latest_attempt(other.id).await.unwrap(), None);
}

#[tokio::test]
async fn expire_due_moves_only_pending_sessions_past_their_expiry() {
    let (_db, store) = database().await;
    let now = at(1_000_000);
    let make = |name: &str, state: SessionState, expires_at| {
        let mut s = session("T-1", name);
        s.state = state;
        s.expires_at = expires_at;
        s
    };
    let due = make("DUE", SessionState::Pending, at(999_999));
    let exactly_now = make("NOW", SessionState::Pending, now);
    let later = make("LATER", SessionState::Pending, at(1_000_001));
    let processing = make("BUSY", SessionState::Processing, at(0));
    let challenged = make("3DS", SessionState::ChallengeRequired, at(0));
    let paid = make("PAID", SessionState::Successful, at(0));
    for s in [&due, &exactly_now, &later, &processing, &challenged, &paid] {
        store.insert(s).await.unwrap();
    }

    assert_eq!(store.expire_due(now).await.unwrap(), 2);
    for s in [&due, &exactly_now] {
        let read = store.get(s.id).await.unwrap().unwrap();
        assert_eq!(
            (read.state, read.updated_at),
            (SessionState::Expired, now),
            "{}",
            s.reference
        );
    }
    for s in [&later, &processing, &challenged, &paid] {
        assert_eq!(
            store.get(s.id).await.unwrap().as_ref(),
            Some(s),
            "{}",
            s.reference
        );
    }
    assert_eq!(store.expire_due(now).await.unwrap(), 0);
    // Its reference is free again.
    store.insert(&session("T-1", "DUE")).await.unwrap();
}

#[tokio::test]
async fn due_challenges_lists_only_challenges_past_their_expiry_soonest_first() {
    let (_db, store) = database().await;
    let make = |name: &str, state: SessionState, expires_at| {
        let mut s = session("T-1", name);
        s.state = state;
        s.expires_at = expires_at;
        s
    };
    let first = make("FIRST", SessionState::ChallengeRequired, at(100));
    let second = make("SECOND", SessionState::ChallengeRequired, at(200));
    let later = make("LATER", SessionState::ChallengeRequired, at(301));
    let pending = make("PENDING", SessionState::Pending, at(0));
    for s in [&later, &second, &pending, &first] {
        store.insert(s).await.unwrap();
    }
    assert_eq!(
        store.due_challenges(at(300), 10).await.unwrap(),
        vec![first.id, second.id]
    );
    assert_eq!(
        store.due_challenges(at(300), 1).await.unwrap(),
        vec![first.id]
    );
}

/// A session in Processing with one attempt in `state`, due at `due`.
async fn unresolved(
    store: &PgStore,
    name: &str,
    state: AttemptState,
    due: Option<i64>,
) -> PaymentAttempt {
    let s = session("T-1", name);
    store.insert(&s).await.unwrap();
    let mut a = attempt(&s, at(10));
    assert!(store
        .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    a.state = state;
    a.next_check_at = due.map(at);
    assert_eq!(
        record(store, &a, &[AttemptState::Sent], None).await,
        Recorded::Moved
    );
    a
}

#[tokio::test]
async fn claim_due_attempts_takes_the_due_unresolved_ones_oldest_due_first_and_leases_them() {
    let (_db, store) = database().await;
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
        vec![early.id, middle.id],
        "oldest due first, at most the limit"
    );
    assert_eq!(
        store
            .attempt(early.id)
            .await
            .unwrap()
            .unwrap()
            .next_check_at,
        Some(at(1_000)),
        "leased"
    );
    let next = store
        .claim_due_attempts(at(300), at(1_000), 10)
        .await
        .unwrap();
    assert_eq!(next.iter().map(|a| a.id).collect::<Vec<_>>(), vec![late.id]);
    assert!(store
        .claim_due_attempts(at(300), at(1_000), 10)
        .await
        .unwrap()
        .is_empty());
    for untouched in [&not_due, &given_up, &settled] {
        assert_eq!(
            store.attempt(untouched.id).await.unwrap().as_ref(),
            Some(untouched)
        );
    }
    let (count, oldest) = store.unresolved_attempts().await.unwrap();
    assert_eq!((count, oldest), (5, Some(at(10))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_claims_never_take_the_same_attempt() {
    let (_db, store) = database().await;
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
    let mut seen = std::collections::HashSet::new();
    let mut total = 0;
    while let Some(joined) = tasks.join_next().await {
        for a in joined.unwrap() {
            total += 1;
            assert!(seen.insert(a.id), "{} claimed twice", a.id);
        }
    }
    assert_eq!(total, 40);
}
