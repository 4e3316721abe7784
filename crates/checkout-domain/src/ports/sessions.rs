//! Storage of payment sessions.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::session::{PaymentSession, SessionState};
use crate::terminal::Terminal;
use crate::values::{InternalReference, MerchantReference, SessionId, TerminalNumber};

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

/// Durable storage of payment sessions: their creation, reads and state moves. Their card
/// attempts are the [`AttemptLedger`](crate::ports::AttemptLedger)'s; what the periodic sweeps
/// look for is [`Sweeps`](crate::ports::Sweeps)'.
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

    /// The session whose `internalTransactionReferenceNumber` is `reference`, of any
    /// terminal (the reference is unique across the service), if any. Its items and charges
    /// MAY be left empty (the status record shows neither); its card attempts MUST be filled.
    async fn find_by_internal_reference(
        &self,
        reference: &InternalReference,
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

    /// The session with this id like [`get`](Self::get), but its items and charges MAY be
    /// left empty: for reads that show neither (the merchant's status record), so that an
    /// adapter can read one row instead of three. `None` when there is none.
    ///
    /// The default reads the whole session with [`get`](Self::get).
    async fn get_without_lines(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        self.get(id).await
    }

    /// The session with this id as [`get`](Self::get) reads it (items and charges
    /// included), with its terminal (`None` when it was never provisioned): for the payer's
    /// pages, which show the lines and check the terminal. `None` when there is no such session.
    ///
    /// MUST read the terminal no earlier than the session: a terminal deactivated before the
    /// session was read is seen deactivated.
    async fn get_for_page(
        &self,
        id: SessionId,
    ) -> anyhow::Result<Option<(PaymentSession, Option<Terminal>)>>;

    /// The session with this id as [`get_without_lines`](Self::get_without_lines) reads it,
    /// with its terminal, under the rule of [`get_for_page`](Self::get_for_page): for the card
    /// post, which checks both and shows neither line.
    async fn get_for_card_post(
        &self,
        id: SessionId,
    ) -> anyhow::Result<Option<(PaymentSession, Option<Terminal>)>>;
}
