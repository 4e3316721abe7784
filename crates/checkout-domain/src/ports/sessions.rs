//! Storage of payment sessions and their attempts.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::ports::TerminalDirectory;
use crate::session::{AttemptState, PaymentAttempt, PaymentSession, SessionState};
use crate::terminal::Terminal;
use crate::values::{AttemptId, MerchantReference, SessionId, TerminalNumber};

/// Why a session could not be inserted.
#[derive(Debug, thiserror::Error)]
pub enum InsertError {
    /// The terminal already has a session holding this merchant reference.
    #[error("the terminal already has a session with this reference")]
    DuplicateReference,
    /// The session's terminal is no longer as the caller read it (deactivated, or its
    /// callback hosts changed): nothing was inserted.
    #[error("the terminal is no longer as it was read")]
    TerminalChanged,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] anyhow::Error),
}

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

/// What [`SessionRepository::record_attempt`] did.
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

    /// Stores a new session as [`insert`](Self::insert) does, on the condition that its
    /// terminal is still as the caller read it in `read` (possibly some time ago).
    ///
    /// MUST insert only when, as the insert sees the terminal `session.terminal`, it is
    /// active and its callback hosts equal `read.callback_hosts`, and MUST decide that in the
    /// same atomic step as the insert, so that a deactivation or a change of callback hosts
    /// committed before the insert began refuses it. Otherwise MUST insert nothing and return
    /// [`InsertError::TerminalChanged`] (a held reference on top of it may answer either).
    async fn insert_for_terminal(
        &self,
        session: &PaymentSession,
        read: &Terminal,
    ) -> Result<(), InsertError>;

    /// The session with this id, with its items, charges and card attempts; `None` when
    /// there is none.
    ///
    /// MUST fill [`PaymentSession::attempts`] (oldest first), as every read that returns a
    /// session for a status record does ([`get_without_lines`](Self::get_without_lines),
    /// [`find_by_reference`](Self::find_by_reference), and the events of
    /// [`EventLog`](crate::ports::EventLog)).
    async fn get(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>>;

    /// The session of `terminal` that holds `reference`, if any.
    async fn find_holding_reference(
        &self,
        terminal: &TerminalNumber,
        reference: &MerchantReference,
    ) -> anyhow::Result<Option<PaymentSession>>;

    /// The sessions of `terminal` whose merchant reference is `reference`, in every state
    /// (an expired session and its successor share a reference), newest first by creation
    /// time, at most `limit`. Their items and charges MAY be left empty (the status record
    /// shows neither).
    ///
    /// MUST return only sessions of `terminal`: another terminal's session with the same
    /// reference is never in the list.
    async fn find_by_reference(
        &self,
        terminal: &TerminalNumber,
        reference: &MerchantReference,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentSession>>;

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
    /// ([`Recorded::AttemptOnly`]).
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

    /// Moves every Pending session whose `expires_at` is at or before `now` to Expired;
    /// returns how many moved. (A session waiting for a challenge is expired by the use case,
    /// which cancels the authorisation at the processor first.)
    async fn expire_due(&self, now: OffsetDateTime) -> anyhow::Result<u64>;

    /// The sessions in ChallengeRequired whose `expires_at` is at or before `now`, soonest
    /// expired first, at most `limit`.
    async fn due_challenges(
        &self,
        now: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>>;

    /// Claims the attempts in a [checked state](AttemptState::CHECKED) whose `next_check_at`
    /// is at or before `now`, oldest due first, at most `limit`, for reconciliation.
    ///
    /// MUST set each claimed attempt's `next_check_at` to `lease_until` in the same atomic
    /// step, and MUST skip attempts another caller is claiming at the same moment, so that
    /// two sweeps (two instances) never take the same attempt at once. Attempts whose
    /// `next_check_at` is `None` are never claimed.
    async fn claim_due_attempts(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentAttempt>>;

    /// How many attempts are unresolved (Sent or Unknown), and the creation time of the
    /// oldest: the reconciliation backlog.
    async fn unresolved_attempts(&self) -> anyhow::Result<(u64, Option<OffsetDateTime>)>;

    /// The session with this id like [`get`](Self::get), but its items and charges MAY be
    /// left empty: for reads that show neither (the merchant's status record), so that an
    /// adapter can read one row instead of three. `None` when there is none.
    ///
    /// The default reads the whole session with [`get`](Self::get).
    async fn get_without_lines(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        self.get(id).await
    }

    /// The session with this id as [`get`](Self::get) reads it (as
    /// [`get_without_lines`](Self::get_without_lines) when `lines` is false), with its terminal
    /// as `terminals` reads it (`None` when it was never provisioned); `None` when there is no
    /// such session. For the payer's pages and card post, which check both.
    ///
    /// MUST read the terminal no earlier than the session: a terminal deactivated before the
    /// session was read is seen deactivated.
    ///
    /// The default reads the session, then the terminal from `terminals`. An adapter that is
    /// also the store `terminals` reads from MAY read both in one statement instead.
    async fn get_with_terminal(
        &self,
        id: SessionId,
        lines: bool,
        terminals: &dyn TerminalDirectory,
    ) -> anyhow::Result<Option<(PaymentSession, Option<Terminal>)>> {
        let session = if lines {
            self.get(id).await?
        } else {
            self.get_without_lines(id).await?
        };
        let Some(session) = session else {
            return Ok(None);
        };
        let terminal = terminals.get_terminal(&session.terminal).await?;
        Ok(Some((session, terminal)))
    }
}
