//! Storage of payment sessions and their attempts.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::session::{PaymentAttempt, PaymentSession, SessionState};
use crate::values::{MerchantReference, SessionId, TerminalNumber};

/// Why a session could not be inserted.
#[derive(Debug, thiserror::Error)]
pub enum InsertError {
    /// The terminal already has a session holding this merchant reference.
    #[error("the terminal already has a session with this reference")]
    DuplicateReference,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] anyhow::Error),
}

/// Durable storage of payment sessions and their payment attempts.
#[async_trait]
pub trait SessionRepository: Send + Sync {
    /// Stores a new session with its items and charges, atomically.
    ///
    /// MUST return [`InsertError::DuplicateReference`] when the terminal already has a
    /// session with the same merchant reference whose state
    /// [holds the reference](SessionState::holds_reference), and MUST decide that atomically,
    /// so that of any number of racing inserts with one reference exactly one succeeds.
    async fn insert(&self, session: &PaymentSession) -> Result<(), InsertError>;

    /// The session with this id, with its items and charges; `None` when there is none.
    async fn get(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>>;

    /// The session of `terminal` that holds `reference`, if any.
    async fn find_holding_reference(
        &self,
        terminal: &TerminalNumber,
        reference: &MerchantReference,
    ) -> anyhow::Result<Option<PaymentSession>>;

    /// Moves a session from `from` to `to` and sets its `updated_at` to `at`, only if it is in
    /// state `from` right now.
    ///
    /// MUST be a single atomic compare-and-set: of any number of racing calls from the same
    /// state, exactly one returns `true`; the others return `false` and change nothing.
    async fn transition(
        &self,
        id: SessionId,
        from: SessionState,
        to: SessionState,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Moves the session of `attempt.session_id` from `from` to `to` and records `attempt`
    /// as a new attempt, in one transaction.
    ///
    /// MUST insert the attempt only if the compare-and-set succeeds; returns whether it did.
    async fn begin_attempt(
        &self,
        attempt: &PaymentAttempt,
        from: SessionState,
        to: SessionState,
    ) -> anyhow::Result<bool>;

    /// Saves the attempt's new outcome, processor reference, challenge URL, code and
    /// `updated_at`, and moves its session from `from` to `to`, in one transaction.
    ///
    /// MUST save nothing unless the session is in state `from`; returns whether it was.
    /// `from == to` is allowed and only updates the attempt (still guarded by the state).
    async fn finish_attempt(
        &self,
        attempt: &PaymentAttempt,
        from: SessionState,
        to: SessionState,
    ) -> anyhow::Result<bool>;

    /// The session's most recent attempt, if any.
    async fn latest_attempt(&self, session: SessionId) -> anyhow::Result<Option<PaymentAttempt>>;

    /// Moves every Pending session whose `expires_at` is at or before `now` to Expired;
    /// returns how many moved.
    async fn expire_due(&self, now: OffsetDateTime) -> anyhow::Result<u64>;

    /// The sessions in Processing whose last change is at or before `before`, oldest first,
    /// at most `limit`: the ones whose processor answer was lost (a timeout whose lookup
    /// failed too, a process killed mid-authorisation) and that reconciliation must settle.
    async fn stale_processing(
        &self,
        before: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>>;

    /// The session with this id like [`get`](Self::get), but its items and charges MAY be
    /// left empty: for reads that show neither (the merchant's status record), so that an
    /// adapter can read one row instead of three. `None` when there is none.
    ///
    /// The default reads the whole session with [`get`](Self::get).
    async fn get_without_lines(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        self.get(id).await
    }
}
