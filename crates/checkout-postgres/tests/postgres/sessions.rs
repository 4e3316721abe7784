//! `SessionRepository` on PostgreSQL.

use checkout_domain::card::CardBrand;
use checkout_domain::ports::{InsertError, SessionRepository};
use checkout_domain::session::{AttemptOutcome, Callbacks, SessionKind, SessionState};
use checkout_domain::values::SessionId;
use checkout_domain::SvcCode;
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

#[tokio::test]
async fn finish_attempt_saves_the_outcome_and_moves_the_session() {
    let (_db, store) = database().await;
    let s = session("T-1", "3DS");
    store.insert(&s).await.unwrap();
    let mut a = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());

    a.outcome = AttemptOutcome::ChallengeRequired;
    a.processor_reference = Some("pi_123".to_owned());
    a.challenge_url = Some("https://acs.example/challenge/1".to_owned());
    a.updated_at = at(200);
    assert!(store
        .finish_attempt(
            &a,
            SessionState::Processing,
            SessionState::ChallengeRequired
        )
        .await
        .unwrap());
    assert_eq!(store.latest_attempt(s.id).await.unwrap(), Some(a.clone()));
    let read = store.get(s.id).await.unwrap().unwrap();
    assert_eq!(
        (read.state, read.updated_at),
        (SessionState::ChallengeRequired, at(200))
    );

    // from == to only updates the attempt, still guarded by the state.
    a.updated_at = at(250);
    a.challenge_url = None;
    assert!(store
        .finish_attempt(
            &a,
            SessionState::ChallengeRequired,
            SessionState::ChallengeRequired
        )
        .await
        .unwrap());
    assert_eq!(store.latest_attempt(s.id).await.unwrap(), Some(a.clone()));

    assert!(store
        .transition(
            s.id,
            SessionState::ChallengeRequired,
            SessionState::Processing,
            at(300)
        )
        .await
        .unwrap());
    a.outcome = AttemptOutcome::Declined;
    a.svc_code = Some(SvcCode::Svc006);
    a.updated_at = at(400);
    assert!(store
        .finish_attempt(&a, SessionState::Processing, SessionState::Failed)
        .await
        .unwrap());
    assert_eq!(store.latest_attempt(s.id).await.unwrap(), Some(a));
    assert_eq!(
        store.get(s.id).await.unwrap().unwrap().state,
        SessionState::Failed
    );
}

#[tokio::test]
async fn finish_attempt_from_the_wrong_state_saves_nothing() {
    let (_db, store) = database().await;
    let s = session("T-1", "GUARD");
    store.insert(&s).await.unwrap();
    let begun = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&begun, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());

    let mut finished = begun.clone();
    finished.outcome = AttemptOutcome::Approved;
    finished.processor_reference = Some("pi_9".to_owned());
    finished.updated_at = at(200);
    assert!(!store
        .finish_attempt(
            &finished,
            SessionState::ChallengeRequired,
            SessionState::Successful
        )
        .await
        .unwrap());
    assert_eq!(
        store.latest_attempt(s.id).await.unwrap(),
        Some(begun.clone())
    );
    let read = store.get(s.id).await.unwrap().unwrap();
    assert_eq!(
        (read.state, read.updated_at),
        (SessionState::Processing, at(100))
    );

    // The winner of a race finishes; a second finish from the same state then fails.
    assert!(store
        .finish_attempt(
            &finished,
            SessionState::Processing,
            SessionState::Successful
        )
        .await
        .unwrap());
    let mut late = finished.clone();
    late.outcome = AttemptOutcome::Declined;
    assert!(!store
        .finish_attempt(&late, SessionState::Processing, SessionState::Failed)
        .await
        .unwrap());
    assert_eq!(store.latest_attempt(s.id).await.unwrap(), Some(finished));
    assert_eq!(
        store.get(s.id).await.unwrap().unwrap().state,
        SessionState::Successful
    );
}

#[tokio::test]
async fn finishing_an_attempt_never_begun_fails_and_rolls_back() {
    let (_db, store) = database().await;
    let mut s = session("T-1", "GHOST");
    s.state = SessionState::Processing;
    store.insert(&s).await.unwrap();
    let ghost = attempt(&s, at(100));
    assert!(store
        .finish_attempt(&ghost, SessionState::Processing, SessionState::Successful)
        .await
        .is_err());
    assert_eq!(
        store.get(s.id).await.unwrap().unwrap().state,
        SessionState::Processing
    );
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
    first.outcome = AttemptOutcome::Rejected;
    first.svc_code = Some(SvcCode::Svc004);
    assert!(store
        .finish_attempt(&first, SessionState::Processing, SessionState::Pending)
        .await
        .unwrap());

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
async fn stale_processing_lists_only_old_processing_sessions_oldest_first() {
    let (_db, store) = database().await;
    let make = |name: &str, state: SessionState, updated_at| {
        let mut s = session("T-1", name);
        s.state = state;
        s.updated_at = updated_at;
        s
    };
    let oldest = make("OLDEST", SessionState::Processing, at(100));
    let old = make("OLD", SessionState::Processing, at(200));
    let at_the_limit = make("LIMIT", SessionState::Processing, at(300));
    let fresh = make("FRESH", SessionState::Processing, at(301));
    let pending = make("PENDING", SessionState::Pending, at(0));
    let challenged = make("3DS", SessionState::ChallengeRequired, at(0));
    for s in [&fresh, &old, &pending, &at_the_limit, &oldest, &challenged] {
        store.insert(s).await.unwrap();
    }

    assert_eq!(
        store.stale_processing(at(300), 10).await.unwrap(),
        vec![oldest.id, old.id, at_the_limit.id]
    );
    assert_eq!(
        store.stale_processing(at(300), 2).await.unwrap(),
        vec![oldest.id, old.id],
        "the limit keeps the oldest"
    );
    assert!(store.stale_processing(at(99), 10).await.unwrap().is_empty());
}
