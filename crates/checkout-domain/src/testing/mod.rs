//! In-memory adapters for every port [`Checkout`] uses (the webhook ports have none), for
//! tests that need no database, network or runtime. They keep the same promises the ports'
//! doc comments demand, and the contract suites ([`contract`]) hold them to it, so the domain
//! tests prove the use cases, not the adapters. Never used in production wiring.

pub mod builders;
pub mod contract;
mod fakes;
mod idempotency;
mod memory;
mod processor;

pub use fakes::{
    FakeIdentity, ManualClock, NoProcessorEvents, PlainGuardKeys, SequentialIds,
    FAKE_TOKEN_LIFETIME,
};
pub use idempotency::InMemoryIdempotency;
pub use memory::{InMemoryClients, InMemorySessions, InMemoryTerminals};
pub use processor::{approved, FakeProcessor, Scripted};

use std::sync::Arc;

use time::macros::datetime;
use time::Duration;
use url::Url;

use crate::auth::{Claims, Role};
use crate::terminal::Terminal;
use crate::usecases::{Checkout, CheckoutPolicy, Ports};
use crate::values::{MaxCardAttempts, TerminalNumber};

/// A [`Checkout`] wired to in-memory adapters, with handles on each for assertions.
pub struct TestKit {
    /// The service under test.
    pub checkout: Checkout,
    /// Session store.
    pub sessions: Arc<InMemorySessions>,
    /// Terminal registry.
    pub terminals: Arc<InMemoryTerminals>,
    /// Client store.
    pub clients: Arc<InMemoryClients>,
    /// Identity provider.
    pub identity: Arc<FakeIdentity>,
    /// Card processor.
    pub processor: Arc<FakeProcessor>,
    /// Clock, starting at 2026-01-15 12:00 UTC.
    pub clock: Arc<ManualClock>,
    /// Idempotency keys.
    pub idempotency: Arc<InMemoryIdempotency>,
}

/// The link validity of [`TestKit`]: 24 hours.
pub const TEST_LINK_VALIDITY: Duration = Duration::hours(24);
/// The checkout validity of [`TestKit`]: 1 hour.
pub const TEST_CHECKOUT_VALIDITY: Duration = Duration::hours(1);

impl TestKit {
    /// A kit with terminal `T-1` (active) and its client `client-1` / `secret-1`.
    pub fn new() -> Self {
        let terminals = Arc::new(InMemoryTerminals::default());
        let sessions = Arc::new(InMemorySessions::with_terminals(terminals.clone()));
        let clients = Arc::new(InMemoryClients::default());
        let identity = Arc::new(FakeIdentity::new(clients.clone()));
        let processor = Arc::new(FakeProcessor::default());
        let clock = Arc::new(ManualClock::new(datetime!(2026-01-15 12:00 UTC)));
        let idempotency = Arc::new(InMemoryIdempotency::default());
        let ports = Ports {
            sessions: sessions.clone(),
            attempts: sessions.clone(),
            sweeps: sessions.clone(),
            reversals: sessions.clone(),
            events: sessions.clone(),
            terminals: terminals.clone(),
            processor: processor.clone(),
            identity: identity.clone(),
            clock: clock.clone(),
            ids: Arc::new(SequentialIds::default()),
            idempotency: idempotency.clone(),
            processor_events: Arc::new(NoProcessorEvents),
            notices: sessions.clone(),
            disputes: sessions.clone(),
        };
        let base = Url::parse("https://checkout.test/pay/link").unwrap_or_else(|_| unreachable!());
        let policy = CheckoutPolicy::new(TEST_LINK_VALIDITY, TEST_CHECKOUT_VALIDITY, base)
            .unwrap_or_else(|_| unreachable!());
        let kit = TestKit {
            checkout: Checkout::new(ports, policy),
            sessions,
            terminals,
            clients,
            identity,
            processor,
            clock,
            idempotency,
        };
        kit.add_terminal("T-1", true);
        kit.clients
            .add_client("client-1", "secret-1", "T-1", vec![Role::SvcTerminal], true);
        kit
    }

    /// Provisions a terminal.
    pub fn add_terminal(&self, number: &str, active: bool) {
        let number = TerminalNumber::parse(number).unwrap_or_else(|_| unreachable!());
        self.terminals.add(Terminal {
            display_name: format!("Merchant {number}"),
            number,
            active,
            callback_hosts: None,
            max_card_attempts: MaxCardAttempts::SPEC,
            capture_method: crate::terminal::CaptureMethod::Automatic,
        });
    }

    /// The kit with the card-testing guard on (the session store keeps its counts), under
    /// `policy`.
    pub fn guarded(mut self, policy: crate::guard::GuardPolicy) -> Self {
        let guard = crate::usecases::CardGuardSetup {
            store: self.sessions.clone(),
            keys: Arc::new(PlainGuardKeys),
            policy,
        };
        self.checkout = self.checkout.with_card_guard(guard);
        self
    }

    /// Sets the `maxCardAttempts` of a provisioned terminal.
    pub fn set_max_card_attempts(&self, number: &str, n: i64) {
        let number = TerminalNumber::parse(number).unwrap_or_else(|_| unreachable!());
        let limit = MaxCardAttempts::new(n).unwrap_or_else(|_| unreachable!());
        self.terminals
            .update(&number, |t| t.max_card_attempts = limit);
    }

    /// Claims of a caller of `terminal` with the SvcTerminal role, valid for an hour.
    pub fn caller(&self, terminal: &str) -> Claims {
        Claims {
            client_id: format!("client-of-{terminal}"),
            terminal: TerminalNumber::parse(terminal).unwrap_or_else(|_| unreachable!()),
            roles: vec![Role::SvcTerminal],
            expires_at: self.clock.now_value() + Duration::hours(1),
        }
    }
}

impl Default for TestKit {
    fn default() -> Self {
        Self::new()
    }
}
