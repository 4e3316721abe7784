//! The `SessionRepository` contract (the port's MUST lines, shared with the in-memory store)
//! against PostgreSQL: each check on a database of its own.

use std::sync::Arc;

use checkout_domain::testing::contract::sessions::Store;
use checkout_test_db::TestDatabase;

use crate::support::database;

/// A fresh database (kept alive by the guard) and its store.
async fn fresh() -> (TestDatabase, Store) {
    let (db, store) = database().await;
    (db, Arc::new(store))
}

checkout_domain::session_repository_contract!(fresh().await);

/// The `ReversalLedger` contract against PostgreSQL, each check on a database of its own.
mod reversal_ledger {
    use std::sync::Arc;

    use checkout_domain::testing::contract::reversals::Store;
    use checkout_test_db::TestDatabase;

    use crate::support::database;

    /// A fresh database (kept alive by the guard) and its store.
    async fn fresh() -> (TestDatabase, Store) {
        let (db, store) = database().await;
        (db, Arc::new(store))
    }

    checkout_domain::reversal_ledger_contract!(fresh().await);
}

/// The `NoticeStore` and `DisputeLedger` contract against PostgreSQL, each check on a
/// database of its own.
mod notice_store {
    use std::sync::Arc;

    use checkout_domain::testing::contract::notices::Store;
    use checkout_test_db::TestDatabase;

    use crate::support::database;

    /// A fresh database (kept alive by the guard) and its store.
    async fn fresh() -> (TestDatabase, Store) {
        let (db, store) = database().await;
        (db, Arc::new(store))
    }

    checkout_domain::notice_store_contract!(fresh().await);
}

/// The `CardGuard` contract against PostgreSQL, each check on a database of its own.
mod card_guard {
    use std::sync::Arc;

    use checkout_domain::testing::contract::card_guard::Store;
    use checkout_test_db::TestDatabase;

    use crate::support::database;

    /// A fresh database (kept alive by the guard) and its store.
    async fn fresh() -> (TestDatabase, Store) {
        let (db, store) = database().await;
        (db, Arc::new(store))
    }

    checkout_domain::card_guard_contract!(fresh().await);
}
