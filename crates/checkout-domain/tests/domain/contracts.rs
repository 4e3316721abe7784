//! The `SessionRepository` contract against the in-memory store the domain tests use.

use std::sync::Arc;

use checkout_domain::testing::contract::sessions::Store;
use checkout_domain::testing::InMemorySessions;

/// A fresh in-memory store (nothing to keep alive).
fn fresh() -> ((), Store) {
    ((), Arc::new(InMemorySessions::default()))
}

checkout_domain::session_repository_contract!(fresh());

/// The `ReversalLedger` contract against the same in-memory store.
mod reversal_ledger {
    use std::sync::Arc;

    use checkout_domain::testing::contract::reversals::Store;
    use checkout_domain::testing::InMemorySessions;

    /// A fresh in-memory store (nothing to keep alive).
    fn fresh() -> ((), Store) {
        ((), Arc::new(InMemorySessions::default()))
    }

    checkout_domain::reversal_ledger_contract!(fresh());
}

/// The `NoticeStore` and `DisputeLedger` contract against the same in-memory store.
mod notice_store {
    use std::sync::Arc;

    use checkout_domain::testing::contract::notices::Store;
    use checkout_domain::testing::InMemorySessions;

    /// A fresh in-memory store (nothing to keep alive).
    fn fresh() -> ((), Store) {
        ((), Arc::new(InMemorySessions::default()))
    }

    checkout_domain::notice_store_contract!(fresh());
}

/// The `CardGuard` contract against the same in-memory store.
mod card_guard {
    use std::sync::Arc;

    use checkout_domain::testing::contract::card_guard::Store;
    use checkout_domain::testing::InMemorySessions;

    /// A fresh in-memory store (nothing to keep alive).
    fn fresh() -> ((), Store) {
        ((), Arc::new(InMemorySessions::default()))
    }

    checkout_domain::card_guard_contract!(fresh());
}
