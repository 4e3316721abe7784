//! `SessionRepository` on PostgreSQL: what the contract suite (`contract.rs`) does not
//! cover, the adapter's own concerns (every column round-trips, scales, indexes, errors).

use checkout_domain::ports::{AttemptLedger, Sweeps};
use std::collections::BTreeMap;

use checkout_domain::card::CardBrand;
use checkout_domain::ports::{
    AttemptChange, InsertError, Recorded, SessionRepository, TerminalDirectory,
};
use checkout_domain::session::{
    AttemptState, Callbacks, PaymentAttempt, PaymentSession, SessionKind, SessionState,
};
use checkout_domain::values::{CallbackHosts, SessionId};
use checkout_domain::SvcCode;
use checkout_postgres::PgStore;
use tokio::task::JoinSet;

use crate::support::*;

#[tokio::test]
async fn a_session_with_every_field_reads_back_unchanged() {
    let (_db, store) = database().await;
    let s = full_checkout_session("T-1", "ORDER-7");
    store.insert(&s).await.unwrap();

    let read = store.get(s.id()).await.unwrap().expect("stored");
    assert_eq!(read, s);
    // Rendered at the currency's scale, not the column's (NUMERIC(19,4)).
    assert_eq!(read.amount().value().to_string(), "10.50");
    assert_eq!(read.amount().currency().code(), "USD");
    let items: Vec<String> = read
        .items()
        .iter()
        .map(|i| i.amount.value().to_string())
        .collect();
    assert_eq!(items, ["2.50", "0.00", "1.99"]);
    let codes: Vec<Option<&str>> = read
        .items()
        .iter()
        .map(|i| i.code.as_ref().map(|c| c.as_str()))
        .collect();
    assert_eq!(codes, [Some("SKU-9"), None, Some("A-1")]);
    let charges: Vec<String> = read
        .charges()
        .iter()
        .map(|c| c.amount.value().to_string())
        .collect();
    assert_eq!(charges, ["1.25", "0.01", "0.24"]);
    assert_eq!(read.created_at(), at(1));
    assert_eq!(read.updated_at(), at(2));
    assert_eq!(read.expires_at().microsecond(), 999_999);
    assert!(read.created_at().offset().is_utc());
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
        s = checkout_domain::testing::builders::edit(s, |r| {
            r.amount = amount(value, currency);
            r.money = checkout_domain::session::SessionMoney::nothing(r.amount.currency());
        });
        s = checkout_domain::testing::builders::edit(s, |r| {
            r.items = vec![checkout_domain::session::Item {
                code: None,
                quantity: 2,
                description: None,
                amount: line(value, currency),
            }]
        });
        store.insert(&s).await.unwrap();
        let read = store.get(s.id()).await.unwrap().expect("stored");
        assert_eq!(read, s, "{currency}");
        assert_eq!(read.amount().value().to_string(), shown, "{currency}");
        assert_eq!(
            read.items()[0].amount.value().to_string(),
            shown,
            "{currency}"
        );
    }
}

#[tokio::test]
async fn optional_fields_may_be_absent() {
    let (_db, store) = database().await;
    let mut checkout = full_checkout_session("T-1", "NO-BACK");
    checkout = checkout_domain::testing::builders::edit(checkout, |r| {
        r.kind = SessionKind::IntegratedCheckout(Box::new(Callbacks {
            success: url("https://shop.example/ok"),
            fail: url("https://shop.example/fail"),
            back: None,
        }))
    });
    checkout = checkout_domain::testing::builders::edit(checkout, |r| r.description = None);
    checkout = checkout_domain::testing::builders::edit(checkout, |r| r.email = None);
    checkout = checkout_domain::testing::builders::edit(checkout, |r| r.culture = None);
    checkout = checkout_domain::testing::builders::edit(checkout, |r| r.items.clear());
    checkout = checkout_domain::testing::builders::edit(checkout, |r| r.charges.clear());
    let link = session("T-1", "LINK");
    for s in [&checkout, &link] {
        store.insert(s).await.unwrap();
        assert_eq!(store.get(s.id()).await.unwrap().as_ref(), Some(s));
    }
    let read = store.get(checkout.id()).await.unwrap().unwrap();
    let SessionKind::IntegratedCheckout(callbacks) = read.kind() else {
        panic!("kind changed");
    };
    assert_eq!(callbacks.back, None);
    assert_eq!(
        *store.get(link.id()).await.unwrap().unwrap().kind(),
        SessionKind::PaymentLink
    );
}

#[tokio::test]
async fn get_without_lines_reads_the_session_without_its_items_and_charges() {
    let (_db, store) = database().await;
    let s = full_checkout_session("T-1", "ORDER-8");
    assert!(!s.items().is_empty() && !s.charges().is_empty());
    store.insert(&s).await.unwrap();

    let read = store
        .get_without_lines(s.id())
        .await
        .unwrap()
        .expect("stored");
    assert!(read.items().is_empty());
    assert!(read.charges().is_empty());
    let mut expected = s.clone();
    expected = checkout_domain::testing::builders::edit(expected, |r| r.items.clear());
    expected = checkout_domain::testing::builders::edit(expected, |r| r.charges.clear());
    assert_eq!(read, expected);
    assert_eq!(
        store
            .get_without_lines(SessionId::from_random_bytes(random_bytes()))
            .await
            .unwrap(),
        None
    );
}

/// A session read with its terminal (the pages and the card post) is the session as `get` or
/// `get_without_lines` reads it and the terminal as `get_terminal` does, for sessions of
/// several terminals read at once, and a terminal deactivated before the read is seen so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_read_with_its_terminal_is_as_the_two_reads_alone() {
    let (_db, store) = database().await;
    let sessions: Vec<PaymentSession> = (0..40)
        .map(|i| full_checkout_session(if i % 2 == 0 { "T-1" } else { "T-2" }, &format!("W-{i}")))
        .collect();
    for s in &sessions {
        store.insert(s).await.unwrap();
    }
    assert!(store
        .set_terminal_active(&terminal("T-2"), false)
        .await
        .unwrap());
    let mut expected = BTreeMap::new();
    for s in &sessions {
        let seen = store.get_terminal(s.terminal()).await.unwrap();
        let whole = store.get(s.id()).await.unwrap().expect("stored");
        let bare = store
            .get_without_lines(s.id())
            .await
            .unwrap()
            .expect("stored");
        expected.insert((s.id(), true), (whole, seen.clone()));
        expected.insert((s.id(), false), (bare, seen));
    }

    // Each read three times with and three times without lines, all at once, among reads
    // that do not ask for the terminal (the status reads).
    let mut tasks = JoinSet::new();
    let mut plain = JoinSet::new();
    for _ in 0..3 {
        for key in expected.keys().copied() {
            let store = store.clone();
            tasks.spawn(async move {
                let read = if key.1 {
                    store.get_for_page(key.0).await
                } else {
                    store.get_for_card_post(key.0).await
                };
                (key, read)
            });
        }
        for s in &sessions {
            let (store, id) = (store.clone(), s.id());
            plain.spawn(async move { (id, store.get_without_lines(id).await) });
        }
    }
    let mut reads = 0;
    while let Some(joined) = tasks.join_next().await {
        let (key, read) = joined.unwrap();
        let read = read.unwrap().expect("stored");
        assert_eq!(Some(&read), expected.get(&key), "{key:?}");
        let seen = read.1.expect("provisioned");
        assert_eq!(&seen.number, read.0.terminal());
        assert_eq!(seen.active, seen.number == terminal("T-1"));
        reads += 1;
    }
    assert_eq!(reads, 3 * expected.len());
    while let Some(joined) = plain.join_next().await {
        let (id, read) = joined.unwrap();
        let bare = &expected[&(id, false)].0;
        assert_eq!(read.unwrap().as_ref(), Some(bare));
    }
    let unknown = SessionId::from_random_bytes(random_bytes());
    assert!(store.get_for_page(unknown).await.unwrap().is_none());
    assert!(store.get_for_card_post(unknown).await.unwrap().is_none());
}

#[tokio::test]
async fn the_largest_session_keeps_every_item_and_charge_in_order() {
    let (_db, store) = database().await;
    let mut s = full_checkout_session("T-1", "ORDER-9");
    let item = s.items()[0].clone();
    let charge = s.charges()[0].clone();
    s = checkout_domain::testing::builders::edit(s, |r| {
        r.items = (0..checkout_domain::session::MAX_ITEMS)
            .map(|i| checkout_domain::session::Item {
                quantity: u32::try_from(i + 1).unwrap(),
                ..item.clone()
            })
            .collect()
    });
    s = checkout_domain::testing::builders::edit(s, |r| {
        r.charges = (0..checkout_domain::session::MAX_CHARGES)
            .map(|i| checkout_domain::session::Charge {
                name: (i % 2 == 0).then(|| charge.name.clone()).flatten(),
                ..charge.clone()
            })
            .collect()
    });
    store.insert(&s).await.unwrap();
    assert_eq!(store.get(s.id()).await.unwrap().expect("stored"), s);
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
async fn other_unique_violations_are_store_errors() {
    let (_db, store) = database().await;
    let s = session("T-1", "A");
    store.insert(&s).await.unwrap();
    let mut same_id = session("T-1", "B");
    same_id = checkout_domain::testing::builders::edit(same_id, |r| r.id = s.id());
    let err = store.insert(&same_id).await.unwrap_err();
    assert!(matches!(err, InsertError::Store(_)), "{err:?}");
    let mut same_internal = session("T-1", "C");
    same_internal = checkout_domain::testing::builders::edit(same_internal, |r| {
        r.internal_reference = s.internal_reference().clone()
    });
    let err = store.insert(&same_internal).await.unwrap_err();
    assert!(matches!(err, InsertError::Store(_)), "{err:?}");
}

#[tokio::test]
async fn find_holding_reference_matches_terminal_and_reference() {
    let (_db, store) = database().await;
    let mut done = session("T-1", "R");
    done = checkout_domain::testing::builders::edit(done, |r| r.state = SessionState::Successful);
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
        tasks.spawn(async move { (s.reference().clone(), store.insert(&s).await) });
    }
    let (mut won, mut duplicates, mut failed) = (BTreeMap::new(), Vec::new(), Vec::new());
    while let Some(joined) = tasks.join_next().await {
        let (reference, outcome) = joined.unwrap();
        match outcome {
            Ok(()) => *won.entry(reference.as_str().to_owned()).or_insert(0) += 1,
            Err(InsertError::DuplicateReference) => duplicates.push(reference),
            Err(InsertError::Store(_)) => failed.push(reference.as_str().to_owned()),
            Err(e @ InsertError::TerminalChanged) => panic!("an unguarded insert: {e}"),
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

/// Concurrent reads are combined into shared statements (read combining): each read gets its
/// own session, as a read alone gets it (with the card attempts of those that have had a
/// card), several reads of one session each get it, and an unknown id gets none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_concurrent_reads_each_gets_its_own_session() {
    let (_db, store) = database().await;
    let sessions: Vec<PaymentSession> = (0..100)
        .map(|i| session("T-1", &format!("READ-{i}")))
        .collect();
    for s in &sessions {
        store.insert(s).await.unwrap();
    }
    // Every tenth session has had a card.
    for s in sessions.iter().step_by(10) {
        let a = attempt(s, at(100));
        assert!(store
            .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
            .await
            .unwrap());
    }
    let mut alone = BTreeMap::new();
    for s in &sessions {
        let read = store
            .get_without_lines(s.id())
            .await
            .unwrap()
            .expect("stored");
        alone.insert(s.id(), read);
    }
    let unknown: Vec<SessionId> = (0..20)
        .map(|_| SessionId::from_random_bytes(random_bytes()))
        .collect();

    // Each session read five times and each unknown id once, all at once.
    let mut tasks = JoinSet::new();
    let ids = sessions.iter().map(|s| s.id()).cycle().take(500);
    for id in ids.chain(unknown.iter().copied()) {
        let store = store.clone();
        tasks.spawn(async move { (id, store.get_without_lines(id).await) });
    }
    let (mut found, mut none) = (BTreeMap::new(), 0);
    while let Some(joined) = tasks.join_next().await {
        let (id, read) = joined.unwrap();
        match read.unwrap() {
            Some(read) => {
                assert_eq!(Some(&read), alone.get(&id), "the read of {id}");
                *found.entry(id).or_insert(0) += 1;
            }
            None => {
                assert!(unknown.contains(&id), "{id} is stored");
                none += 1;
            }
        }
    }
    assert_eq!(none, unknown.len());
    assert_eq!(found.len(), sessions.len());
    assert!(found.values().all(|n| *n == 5), "{found:?}");
    let carded = alone.values().filter(|s| !s.attempts().is_empty()).count();
    assert_eq!(carded, 10);
}

/// A guarded insert (`insert_for_terminal`) writes only while the terminal is as read: a
/// deactivation or a change of callback hosts committed before it refuses it with nothing
/// written; a guarded create combined with others is refused alone; and with the terminal as
/// read, a held reference is still a duplicate.
/// Concurrent whole reads (the pages') are combined too: each gets its own session with its
/// own items, charges and card attempts, in order, as a read alone gets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_concurrent_whole_reads_each_gets_its_own_lines() {
    let (_db, store) = database().await;
    let mut sessions: Vec<PaymentSession> = Vec::new();
    for i in 0..60 {
        let mut s = full_checkout_session("T-1", &format!("WHOLE-{i}"));
        // Sessions differ in their lines: every third has none, the others a prefix of them.
        let keep = i % 3;
        s = checkout_domain::testing::builders::edit(s, |r| r.items.truncate(keep));
        s = checkout_domain::testing::builders::edit(s, |r| r.charges.truncate(keep));
        store.insert(&s).await.unwrap();
        sessions.push(s);
    }
    // Every fifth session has had a card: its attempt is read with it.
    for s in sessions.iter_mut().step_by(5) {
        let a = attempt(s, at(100));
        assert!(store
            .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
            .await
            .unwrap());
        *s = checkout_domain::testing::builders::edit(s.clone(), |r| {
            r.state = SessionState::Processing;
            r.current_attempt = Some(a.id);
            r.updated_at = at(100);
            r.attempts.push((&a).into());
        });
    }

    // Each session read four times, and twenty unknown ids, all at once.
    let unknown: Vec<SessionId> = (0..20)
        .map(|_| SessionId::from_random_bytes(random_bytes()))
        .collect();
    let mut tasks = JoinSet::new();
    let ids = sessions.iter().map(|s| s.id()).cycle().take(240);
    for id in ids.chain(unknown.iter().copied()) {
        let store = store.clone();
        tasks.spawn(async move { (id, store.get(id).await) });
    }
    let expected: BTreeMap<SessionId, &PaymentSession> =
        sessions.iter().map(|s| (s.id(), s)).collect();
    let (mut found, mut none) = (BTreeMap::new(), 0);
    while let Some(joined) = tasks.join_next().await {
        let (id, read) = joined.unwrap();
        match read.unwrap() {
            Some(read) => {
                assert_eq!(Some(&&read), expected.get(&id), "the read of {id}");
                *found.entry(id).or_insert(0) += 1;
            }
            None => {
                assert!(unknown.contains(&id), "{id} is stored");
                none += 1;
            }
        }
    }
    assert_eq!(none, unknown.len());
    assert_eq!(found.len(), sessions.len());
    assert!(found.values().all(|n| *n == 4), "{found:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guarded_insert_writes_only_while_the_terminal_is_as_read() {
    let (_db, store) = database().await;
    let t1 = store.get_terminal(&terminal("T-1")).await.unwrap().unwrap();
    let t2 = store.get_terminal(&terminal("T-2")).await.unwrap().unwrap();

    let first = session("T-1", "G-1");
    store.insert_for_terminal(&first, &t1).await.unwrap();
    let again = session("T-1", "G-1");
    assert!(matches!(
        store.insert_for_terminal(&again, &t1).await,
        Err(InsertError::DuplicateReference)
    ));

    // T-1 gets callback hosts after it was read; T-2 is deactivated after it was read.
    let hosts = CallbackHosts::parse(["merchant.example"]).unwrap();
    assert!(store
        .set_callback_hosts(&t1.number, Some(&hosts))
        .await
        .unwrap());
    assert!(store.set_terminal_active(&t2.number, false).await.unwrap());
    let t1_now = store.get_terminal(&t1.number).await.unwrap().unwrap();

    // Many guarded creates at once, combined: only those whose terminal is as read are written.
    let mut tasks = JoinSet::new();
    for i in 0..60 {
        let (s, read) = match i % 3 {
            0 => (session("T-1", &format!("OLD-{i}")), t1.clone()),
            1 => (session("T-1", &format!("NOW-{i}")), t1_now.clone()),
            _ => (session("T-2", &format!("OFF-{i}")), t2.clone()),
        };
        let store = store.clone();
        tasks.spawn(async move { (s.clone(), store.insert_for_terminal(&s, &read).await) });
    }
    let (mut written, mut changed) = (0, 0);
    while let Some(joined) = tasks.join_next().await {
        let (s, outcome) = joined.unwrap();
        let stored = store.get(s.id()).await.unwrap();
        match outcome {
            Ok(()) => {
                assert!(
                    s.reference().as_str().starts_with("NOW-"),
                    "{}",
                    s.reference()
                );
                assert_eq!(stored, Some(s));
                written += 1;
            }
            Err(InsertError::TerminalChanged) => {
                assert!(
                    !s.reference().as_str().starts_with("NOW-"),
                    "{}",
                    s.reference()
                );
                assert_eq!(stored, None, "nothing of a refused create is written");
                changed += 1;
            }
            Err(e) => panic!("{}: {e}", s.reference()),
        }
    }
    assert_eq!((written, changed), (20, 40));
    // The unguarded insert does not look at the terminal's flags.
    store.insert(&session("T-2", "PLAIN")).await.unwrap();
}

#[tokio::test]
async fn begin_attempt_moves_the_session_and_records_the_attempt() {
    let (_db, store) = database().await;
    let s = session("T-1", "PAY");
    store.insert(&s).await.unwrap();
    assert_eq!(store.latest_attempt(s.id()).await.unwrap(), None);

    let a = attempt(&s, at(100));
    assert!(store
        .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
        .await
        .unwrap());
    assert_eq!(store.latest_attempt(s.id()).await.unwrap(), Some(a));
    let read = store.get(s.id()).await.unwrap().unwrap();
    assert_eq!(
        (read.state(), read.updated_at()),
        (SessionState::Processing, at(100))
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
        store.get(s.id()).await.unwrap().unwrap().current_attempt(),
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
    let read = store.get(s.id()).await.unwrap().unwrap();
    assert_eq!(
        (read.state(), read.updated_at()),
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
        store.get(s.id()).await.unwrap().unwrap().state(),
        SessionState::ChallengeRequired
    );
}

/// Concurrent attempt writes are combined into shared statements (write combining): of three
/// racing card submissions on each session exactly one begins its attempt, a bad attempt fails
/// alone, and of two racing answers about one attempt both decide as they would one after the
/// other (a later answer that expects the earlier one's state is saved after it, and the
/// session moves once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_concurrent_attempt_writes_each_decides_as_it_would_alone() {
    let (db, store) = database().await;
    let sessions: Vec<PaymentSession> = (0..100)
        .map(|i| session("T-1", &format!("CARD-{i}")))
        .collect();
    for s in &sessions {
        store.insert(s).await.unwrap();
    }

    // Ten more sessions, each to get a bad attempt (its last four digits break the table's
    // check).
    let bad_sessions: Vec<PaymentSession> = (0..10)
        .map(|i| session("T-1", &format!("BAD-{i}")))
        .collect();
    for s in &bad_sessions {
        store.insert(s).await.unwrap();
    }

    // Three submissions on each session and the bad attempts, all at once.
    let mut tasks = JoinSet::new();
    for round in 0..3 {
        for s in &sessions {
            let (store, a) = (store.clone(), attempt(s, at(100 + round)));
            tasks.spawn(async move {
                let begun = store
                    .begin_attempt(&a, SessionState::Pending, SessionState::Processing)
                    .await;
                (a, begun)
            });
        }
    }
    for s in &bad_sessions {
        let mut bad = attempt(s, at(90));
        bad.card_last4 = "42a2".to_owned();
        let store = store.clone();
        tasks.spawn(async move {
            let begun = store
                .begin_attempt(&bad, SessionState::Pending, SessionState::Processing)
                .await;
            (bad, begun)
        });
    }
    let mut winners: BTreeMap<SessionId, PaymentAttempt> = BTreeMap::new();
    let mut failed = 0;
    while let Some(joined) = tasks.join_next().await {
        let (a, begun) = joined.unwrap();
        match begun {
            Ok(true) => assert!(winners.insert(a.session_id, a).is_none(), "a second winner"),
            Ok(false) => {}
            Err(_) => {
                assert_eq!(a.card_last4, "42a2", "a good attempt failed");
                failed += 1;
            }
        }
    }
    // Each bad attempt failed alone, and nothing of it was written.
    assert_eq!(failed, bad_sessions.len());
    for s in &bad_sessions {
        assert_eq!(store.get(s.id()).await.unwrap().as_ref(), Some(s));
        assert_eq!(store.attempts(s.id()).await.unwrap(), []);
    }
    assert_eq!(winners.len(), sessions.len());
    for s in &sessions {
        let winner = &winners[&s.id()];
        assert_eq!(
            store.attempts(s.id()).await.unwrap(),
            std::slice::from_ref(winner)
        );
        let read = store.get_without_lines(s.id()).await.unwrap().unwrap();
        assert_eq!(
            (read.state(), read.current_attempt()),
            (SessionState::Processing, Some(winner.id))
        );
    }

    // Two answers about each winner at once: the processor's answer was lost (Unknown, no
    // move), and then reconciliation learnt it was approved (the session moves).
    let mut tasks = JoinSet::new();
    for winner in winners.values() {
        let mut lost = winner.clone();
        lost.state = AttemptState::Unknown;
        lost.updated_at = at(200);
        let mut approved = winner.clone();
        approved.state = AttemptState::Succeeded;
        approved.processor_reference = Some(format!("pi_{}", winner.session_id));
        approved.next_check_at = None;
        approved.updated_at = at(300);
        for (a, session_move) in [
            (lost, None),
            (
                approved,
                Some((SessionState::Processing, SessionState::Successful)),
            ),
        ] {
            let store = store.clone();
            tasks.spawn(async move {
                let recorded = store
                    .record_attempt(&AttemptChange {
                        attempt: &a,
                        expected: &AttemptState::UNRESOLVED,
                        session_move,
                    })
                    .await
                    .unwrap();
                (a, recorded)
            });
        }
    }
    while let Some(joined) = tasks.join_next().await {
        let (a, recorded) = joined.unwrap();
        if a.state == AttemptState::Succeeded {
            assert_eq!(
                recorded,
                Recorded::Moved,
                "the approval of {}",
                a.session_id
            );
        }
    }
    for s in &sessions {
        let read = store.get(s.id()).await.unwrap().unwrap();
        assert_eq!(read.state(), SessionState::Successful, "{}", s.reference());
        let stored = store.attempt(winners[&s.id()].id).await.unwrap().unwrap();
        assert_eq!(stored.state, AttemptState::Succeeded);
    }
    // Each session's move to Successful has its one event (Processing has none).
    assert_eq!(
        count(
            &db,
            "SELECT count(DISTINCT session_id) AS n FROM events WHERE state = 1"
        )
        .await,
        100
    );
    assert_eq!(count(&db, "SELECT count(*) AS n FROM events").await, 100);
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
    assert_eq!(store.latest_attempt(s.id()).await.unwrap(), Some(second));

    let other = session("T-1", "OTHER");
    store.insert(&other).await.unwrap();
    assert_eq!(store.latest_attempt(other.id()).await.unwrap(), None);
}

#[tokio::test]
async fn expire_due_moves_only_pending_sessions_past_their_expiry() {
    let (_db, store) = database().await;
    let now = at(1_000_000);
    let make = |name: &str, state: SessionState, expires_at| {
        let mut s = session("T-1", name);
        s = checkout_domain::testing::builders::edit(s, |r| r.state = state);
        s = checkout_domain::testing::builders::edit(s, |r| r.expires_at = expires_at);
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
        let read = store.get(s.id()).await.unwrap().unwrap();
        assert_eq!(
            (read.state(), read.updated_at()),
            (SessionState::Expired, now),
            "{}",
            s.reference()
        );
    }
    for s in [&later, &processing, &challenged, &paid] {
        assert_eq!(
            store.get(s.id()).await.unwrap().as_ref(),
            Some(s),
            "{}",
            s.reference()
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
        s = checkout_domain::testing::builders::edit(s, |r| r.state = state);
        s = checkout_domain::testing::builders::edit(s, |r| r.expires_at = expires_at);
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
        vec![first.id(), second.id()]
    );
    assert_eq!(
        store.due_challenges(at(300), 1).await.unwrap(),
        vec![first.id()]
    );
}

/// The reconciliation backlog's count reads only the unresolved attempts, whatever the number
/// of attempts answered.
#[tokio::test]
async fn the_reconciliation_backlog_uses_the_unresolved_index() {
    let (db, _store) = database().await;
    let plan = plan(
        &db,
        "SELECT count(*), min(created_at) FROM payment_attempts \
         WHERE payment_attempts.state IN ('sent', 'unknown')",
    )
    .await;
    assert!(
        plan.iter()
            .any(|l| l.contains("payment_attempts_unresolved")),
        "{plan:#?}"
    );
}
