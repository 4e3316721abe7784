//! The ledger of card attempts: each card submission is a row written before the processor
//! is asked, settled by the processor's answer under a compare-and-set.

use async_trait::async_trait;

use crate::session::{AttemptState, PaymentAttempt, SessionState};
use crate::values::{AttemptId, SessionId};

/// An attempt's new standing, and the session move it may cause.
#[derive(Debug, Clone, Copy)]
pub struct AttemptChange<'a> {
    /// The attempt as it now stands.
    pub attempt: &'a PaymentAttempt,
    /// The states the stored attempt must be in for the change to apply.
    pub expected: &'a [AttemptState],
    /// Move the session from the first state to the second, if the attempt is its current
    /// attempt and it is in the first state; `None`: the session does not move.
    pub session_move: Option<(SessionState, SessionState)>,
}

/// What [`AttemptLedger::record_attempt`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The attempt was saved and its session moved (or no move was asked).
    Moved,
    /// The attempt was saved; its session did not move (another state, or another attempt is
    /// current).
    AttemptOnly,
    /// Nothing was saved: the attempt was no longer in an expected state.
    Stale,
}

/// Durable storage of the card attempts of sessions.
#[async_trait]
pub trait AttemptLedger: Send + Sync {
    /// Moves the session of `attempt.session_id` from `from` to `to`, makes `attempt` its
    /// current attempt, and inserts `attempt`, in one transaction.
    ///
    /// MUST be a compare-and-set on the session's state: of racing calls from one state
    /// exactly one returns `true`; the others change nothing and insert nothing.
    async fn begin_attempt(
        &self,
        attempt: &PaymentAttempt,
        from: SessionState,
        to: SessionState,
    ) -> anyhow::Result<bool>;

    /// Records what became of an attempt and, when asked, moves its session, in one
    /// transaction.
    ///
    /// MUST save `change.attempt`'s state, processor reference, challenge URL, code, checks,
    /// next check and `updated_at` only if the stored attempt is in one of `change.expected`
    /// right now (else [`Recorded::Stale`], nothing saved). MUST then move the session from
    /// `from` to `to` only if it is in `from` AND its current attempt is this attempt: an
    /// answer about any other attempt is kept on its own attempt and never moves the session
    /// ([`Recorded::AttemptOnly`]). A store that also keeps receipt mails
    /// ([`ReceiptOutbox`](super::ReceiptOutbox)) MUST queue the session's receipt in the same
    /// transaction when the move is to Successful or ApprovedTransaction and the session has
    /// the payer's address.
    async fn record_attempt(&self, change: &AttemptChange<'_>) -> anyhow::Result<Recorded>;

    /// The attempt with this id, if any.
    async fn attempt(&self, id: AttemptId) -> anyhow::Result<Option<PaymentAttempt>>;

    /// The session's most recent attempt, if any.
    async fn latest_attempt(&self, session: SessionId) -> anyhow::Result<Option<PaymentAttempt>>;

    /// Every attempt of `session`, oldest first.
    ///
    /// MUST include every attempt committed before the call, in the states stored: the use
    /// cases count the session's declined cards from it.
    async fn attempts(&self, session: SessionId) -> anyhow::Result<Vec<PaymentAttempt>>;
}
