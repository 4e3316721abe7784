//! Terminals (`TerminalDirectory` and operator methods) and OAuth clients (`ClientStore` and
//! operator methods) on PostgreSQL.

use checkout_domain::auth::{OAuthClient, Role};
use checkout_domain::ports::{ClientStore, TerminalDirectory};
use checkout_domain::terminal::Terminal;
use checkout_domain::values::CallbackHosts;
use checkout_postgres::PgStore;
use checkout_test_db::TestDatabase;

use crate::support::*;

const HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaGhhc2g";

fn client(id: &str, terminal_number: &str) -> OAuthClient {
    OAuthClient {
        client_id: id.to_owned(),
        secret_hash: HASH.to_owned(),
        terminal: terminal(terminal_number),
        roles: vec![Role::SvcTerminal],
        active: true,
    }
}

#[tokio::test]
async fn terminals_round_trip_and_are_managed() {
    let db = TestDatabase::create().await.unwrap();
    let store = db.store();
    assert!(store.list_terminals().await.unwrap().is_empty());
    let b = Terminal {
        number: terminal("T-B"),
        display_name: "Café Bérénice".to_owned(),
        active: true,
        callback_hosts: None,
        max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
        capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
    };
    let a = Terminal {
        number: terminal("T-A"),
        display_name: "Shop A".to_owned(),
        active: false,
        callback_hosts: Some(CallbackHosts::parse(["shop-a.example", "127.0.0.1"]).unwrap()),
        max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
        capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
    };
    store.create_terminal(&b).await.unwrap();
    store.create_terminal(&a).await.unwrap();
    assert_eq!(
        store.get_terminal(&b.number).await.unwrap(),
        Some(b.clone())
    );
    assert_eq!(
        store.get_terminal(&a.number).await.unwrap(),
        Some(a.clone())
    );
    assert_eq!(store.get_terminal(&terminal("T-C")).await.unwrap(), None);

    let err = store.create_terminal(&b).await.unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err:#}");

    let hosts = CallbackHosts::parse(["pay.example"]).unwrap();
    assert!(store
        .set_callback_hosts(&b.number, Some(&hosts))
        .await
        .unwrap());
    let read = store.get_terminal(&b.number).await.unwrap().unwrap();
    assert_eq!(read.callback_hosts, Some(hosts));
    assert!(store.set_callback_hosts(&b.number, None).await.unwrap());
    let read = store.get_terminal(&b.number).await.unwrap().unwrap();
    assert_eq!(read.callback_hosts, None);
    assert!(!store
        .set_callback_hosts(&terminal("T-C"), None)
        .await
        .unwrap());

    assert!(store.set_terminal_active(&b.number, false).await.unwrap());
    assert!(!store.get_terminal(&b.number).await.unwrap().unwrap().active);
    assert!(store.set_terminal_active(&a.number, true).await.unwrap());
    assert!(!store
        .set_terminal_active(&terminal("T-C"), true)
        .await
        .unwrap());

    let listed = store.list_terminals().await.unwrap();
    let numbers: Vec<&str> = listed.iter().map(|t| t.number.as_str()).collect();
    assert_eq!(numbers, ["T-A", "T-B"]);
    assert_eq!((listed[0].active, listed[1].active), (true, false));
}

/// Concurrent terminal reads are combined into shared statements (read combining): each gets
/// its own terminal, active or not, an unknown number gets none, and a deactivation committed
/// before a read is seen by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_concurrent_terminal_reads_each_gets_its_own_terminal() {
    let (_db, store) = database().await;
    let terminals: Vec<Terminal> = (0..12)
        .map(|i| Terminal {
            number: terminal(&format!("T-R{i}")),
            display_name: format!("Shop {i}"),
            active: i % 3 != 0,
            callback_hosts: None,
            max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
            capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
        })
        .collect();
    for t in &terminals {
        store.create_terminal(t).await.unwrap();
    }
    let reads = |store: PgStore| {
        let mut tasks = tokio::task::JoinSet::new();
        let numbers = terminals.iter().map(|t| t.number.clone()).cycle().take(240);
        for number in numbers.chain([terminal("T-NONE")]) {
            let store = store.clone();
            tasks.spawn(async move { (number.clone(), store.get_terminal(&number).await) });
        }
        tasks
    };
    let check = |mut tasks: tokio::task::JoinSet<_>, expected: Vec<Terminal>| async move {
        let mut answered = 0;
        while let Some(joined) = tasks.join_next().await {
            let (number, read): (checkout_domain::values::TerminalNumber, anyhow::Result<_>) =
                joined.unwrap();
            let want = expected.iter().find(|t| t.number == number).cloned();
            assert_eq!(read.unwrap(), want, "the read of {number}");
            answered += 1;
        }
        assert_eq!(answered, 241);
    };
    check(reads(store.clone()), terminals.clone()).await;

    let mut changed = terminals.clone();
    for t in changed.iter_mut().filter(|t| t.active) {
        assert!(store.set_terminal_active(&t.number, false).await.unwrap());
        t.active = false;
    }
    check(reads(store.clone()), changed).await;
}

#[tokio::test]
async fn clients_round_trip_and_are_managed() {
    let (_db, store) = database().await;
    let mut z = client("z-client", "T-1");
    z.roles = Vec::new();
    z.active = false;
    let a = client("a-client", "T-2");
    store.create_client(&z).await.unwrap();
    store.create_client(&a).await.unwrap();
    assert_eq!(store.get_client("z-client").await.unwrap(), Some(z.clone()));
    assert_eq!(store.get_client("a-client").await.unwrap(), Some(a.clone()));
    assert_eq!(store.get_client("nobody").await.unwrap(), None);

    let err = store.create_client(&a).await.unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err:#}");
    let err = store
        .create_client(&client("orphan", "T-9"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("T-9 does not exist"), "{err:#}");
    assert_eq!(store.get_client("orphan").await.unwrap(), None);

    assert!(store.set_client_active("z-client", true).await.unwrap());
    assert!(store.get_client("z-client").await.unwrap().unwrap().active);
    assert!(!store.set_client_active("nobody", true).await.unwrap());

    let ids: Vec<String> = store
        .list_clients()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.client_id)
        .collect();
    assert_eq!(ids, ["a-client", "z-client"]);
}

#[tokio::test]
async fn upsert_client_creates_then_replaces() {
    let (_db, store) = database().await;
    let mut c = client("sandbox", "T-1");
    store.upsert_client(&c).await.unwrap();
    assert_eq!(store.get_client("sandbox").await.unwrap(), Some(c.clone()));

    c.secret_hash = format!("{HASH}x");
    c.terminal = terminal("T-2");
    c.active = false;
    store.upsert_client(&c).await.unwrap();
    assert_eq!(store.get_client("sandbox").await.unwrap(), Some(c));
    assert_eq!(store.list_clients().await.unwrap().len(), 1);

    let err = store.upsert_client(&client("x", "T-9")).await.unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err:#}");
}

#[tokio::test]
async fn only_argon2id_hashes_are_stored_as_secrets() {
    let (_db, store) = database().await;
    let mut plain = client("leaky", "T-1");
    plain.secret_hash = "hunter2".to_owned();
    assert!(store.create_client(&plain).await.is_err());
    assert_eq!(store.get_client("leaky").await.unwrap(), None);
}
