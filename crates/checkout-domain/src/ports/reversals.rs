//! The ledger of money moved after the charge: captures and voids of held authorisations,
//! and refunds of captured payments.

use async_trait::async_trait;
use rust_decimal::Decimal;
use time::OffsetDateTime;

use crate::session::{HoldAction, Refund, SessionState};
use crate::values::SessionId;

/// What [`ReversalLedger::reserve_refund`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reservation {
    /// The refund was recorded and its amount reserved.
    Reserved,
    /// Nothing recorded: the session already has a refund under the same merchant key (this
    /// one, as it stands now).
    Existing(Refund),
    /// Nothing recorded: the session holds no capture (it is in this state).
    NotCaptured(SessionState),
    /// Nothing recorded: the amount is above what can still be refunded (this much).
    Exceeds {
        /// The captured amount less every refund that is not Failed.
        refundable: Decimal,
    },
}

/// What [`ReversalLedger::begin_action`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionBegun {
    /// The action was recorded: it now holds the authorisation.
    Begun,
    /// Nothing recorded: the session already has an action under the same merchant key (this
    /// one, as it stands now).
    Existing(HoldAction),
    /// Nothing recorded: another capture or void holds the authorisation (unsettled, or
    /// succeeded).
    Held(HoldAction),
    /// Nothing recorded: the session is not ApprovedTransaction (it is in this state).
    NotHeld(SessionState),
}

/// A session move that a settled action makes, in the same transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionMove {
    /// The state the session must be in.
    pub from: SessionState,
    /// The state it moves to.
    pub to: SessionState,
}

/// Durable storage of captures, voids and refunds.
///
/// Every row is written before the processor is asked and is the only source of its
/// processor idempotency key, so that a retry, another instance or a restart after a crash
/// asks the processor with the same key.
#[async_trait]
pub trait ReversalLedger: Send + Sync {
    /// Records `refund` (Sent) and reserves its amount, if the session can still refund it.
    ///
    /// MUST, when `refund.key` is set and the session already has a refund with that key,
    /// record nothing and return [`Reservation::Existing`] with the stored refund, so that a
    /// merchant's key names one refund for good. MUST otherwise decide under a lock of the
    /// session, in one transaction: the refund is inserted only if the session is Successful
    /// and `refund.amount` plus every one of its refunds that
    /// [reserves](crate::session::LedgerState::reserves) is at most its
    /// [captured amount](crate::session::PaymentSession::captured_amount); so that of any
    /// number of racing reservations the sum reserved never exceeds what was captured.
    async fn reserve_refund(&self, refund: &Refund) -> anyhow::Result<Reservation>;

    /// Saves what became of `refund`: its state, processor reference, code, next check and
    /// `updated_at`.
    ///
    /// MUST save only if the stored refund's state
    /// [can become](crate::session::LedgerState::can_become) `refund.state` right now (else
    /// `false`, nothing saved); MUST, when the new state is Succeeded, add its amount to the
    /// session's refunded amount and set the session's `updated_at`, in the same transaction.
    async fn settle_refund(&self, refund: &Refund) -> anyhow::Result<bool>;

    /// The refunds of `session`, oldest first.
    async fn refunds(&self, session: SessionId) -> anyhow::Result<Vec<Refund>>;

    /// Claims the unsettled refunds whose `next_check_at` is at or before `now`, oldest due
    /// first, at most `limit`, for reconciliation.
    ///
    /// MUST set each claimed refund's `next_check_at` to `lease_until` in the same atomic
    /// step, and MUST skip refunds another caller is claiming at the same moment.
    async fn claim_due_refunds(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<Refund>>;

    /// Records `action` (Sent), if the session's authorisation is held and free.
    ///
    /// MUST, when `action.key` is set and the session already has an action with that key,
    /// record nothing and return [`ActionBegun::Existing`]. MUST otherwise insert only if the
    /// session is ApprovedTransaction and none of its actions
    /// [reserves](crate::session::LedgerState::reserves) the authorisation, decided
    /// atomically: of racing actions on one session exactly one is recorded, and the others
    /// get [`ActionBegun::Held`] with the one that holds it.
    async fn begin_action(&self, action: &HoldAction) -> anyhow::Result<ActionBegun>;

    /// Saves what became of `action` (state, captured amount, code, next check,
    /// `updated_at`) and, when it succeeded, moves its session by `session_move`.
    ///
    /// MUST save only if the stored action's state
    /// [can become](crate::session::LedgerState::can_become) `action.state` right now (else
    /// `false`, nothing saved). MUST, in the same transaction, move the session from
    /// `session_move.from` to `session_move.to` (setting its captured amount to
    /// `action.captured` when there is one, and `updated_at`) only if it is in `from`.
    async fn settle_action(
        &self,
        action: &HoldAction,
        session_move: Option<SessionMove>,
    ) -> anyhow::Result<bool>;

    /// The captures and voids of `session`, oldest first.
    async fn actions(&self, session: SessionId) -> anyhow::Result<Vec<HoldAction>>;

    /// Claims the unsettled actions whose `next_check_at` is at or before `now`, as
    /// [`claim_due_refunds`](Self::claim_due_refunds) claims refunds.
    async fn claim_due_actions(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<HoldAction>>;
}
