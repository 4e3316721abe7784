//! The card-testing guard's ports: the shared counts of processor answers (so that an
//! attacker gains nothing from the number of instances) and the keyed hashes it counts by.

use std::net::IpAddr;

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::card::CardNumber;
use crate::guard::{
    AddressKey, CardFingerprint, GuardCounts, GuardSubject, GuardWindows, TerminalCaps,
    TerminalGuardState,
};
use crate::values::{SessionId, TerminalNumber};

/// The keyed hashes the guard counts by.
///
/// MUST be HMAC-SHA256 under a secret of the service (the same secret on every instance),
/// written as 64 lowercase hex digits, so that one card or one address gives one key across
/// the fleet and a leaked row names neither. MUST NOT log or keep the number or the address.
pub trait GuardKeys: Send + Sync {
    /// The card's fingerprint.
    fn card(&self, number: &CardNumber) -> CardFingerprint;
    /// The address's key.
    fn address(&self, address: IpAddr) -> AddressKey;
}

/// The guard's shared counts.
///
/// Only the processor's answers to card posts are recorded: never a post refused by the
/// checks of the card's fields (the payer's typing), never a post the guard refused or
/// challenged (it never reached the processor).
#[async_trait]
pub trait CardGuard: Send + Sync {
    /// Records the processor's answer to a post of `subject` at `at`: `declined` when it
    /// declined the card.
    ///
    /// MUST keep the keys only (the fingerprint, the address key, the terminal, the session,
    /// the time, whether declined): never the card number. MUST be visible to every later
    /// [`counts`](Self::counts) on any instance once it returns.
    async fn record_outcome(
        &self,
        subject: &GuardSubject,
        declined: bool,
        at: OffsetDateTime,
    ) -> anyhow::Result<()>;

    /// Records that the processor declined, after its 3DS challenge, the card of `session`'s
    /// post whose answer was recorded as not declined (a challenge is no decline): that
    /// answer becomes a decline at `at`, of the same address, card and terminal. Returns
    /// whether an answer was changed.
    ///
    /// MUST change at most one answer per call (the session's latest not declined one), so
    /// that a decline recorded once per attempt counts once.
    async fn record_late_decline(
        &self,
        session: SessionId,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// The counts of `subject` at `now`, each over its sliding window of `windows` (only
    /// the answers recorded after `now - window`); the session's over its whole life.
    ///
    /// MUST count the declines of the session, of the address (none when the subject has no
    /// address), the distinct sessions and terminals that declined the card (none when it
    /// has no card), the terminal's answers and declines, and read the terminal's alert flag.
    /// MAY stop counting the terminal's declines at `caps.declines`, and its answers once they
    /// pass `declines * 100 / caps.rate_percent + 1` (so that a busy terminal's post costs no
    /// more than a quiet one's); every other count MUST be exact. An error MUST be returned
    /// (never zero counts) when the store cannot be read: the caller fails closed.
    async fn counts(
        &self,
        subject: &GuardSubject,
        windows: &GuardWindows,
        caps: &TerminalCaps,
        now: OffsetDateTime,
    ) -> anyhow::Result<GuardCounts>;

    /// Spends the proof-of-work challenge `id`, valid until `expires_at`.
    ///
    /// MUST return true for the first spend of an id and false for every later one, across
    /// instances and under racing spends (exactly one of racing spends wins). MAY forget ids
    /// whose `expires_at` is past `now` (an expired proof is refused before it is spent).
    async fn spend_proof(
        &self,
        id: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Sets the terminal's alert flag to `alerted` at `at`, announcing the change with the
    /// event `terminal.card_testing_suspected` (raised) or `terminal.card_testing_ended`
    /// (lowered) about `session` (the post that saw the change).
    ///
    /// MUST write the event in the same transaction as the change, and only when the flag
    /// changed: of racing calls with one value exactly one announces. Returns whether it
    /// changed.
    async fn set_alert(
        &self,
        terminal: &TerminalNumber,
        alerted: bool,
        session: SessionId,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// The terminals whose alert flag is raised, each with the session whose post raised it
    /// (the one the ending's event is about).
    async fn alerted_terminals(&self) -> anyhow::Result<Vec<(TerminalNumber, SessionId)>>;

    /// Forgets the answers recorded before `before`; returns how many.
    ///
    /// MUST leave every answer at or after `before` counted as before.
    async fn forget_answers_before(&self, before: OffsetDateTime) -> anyhow::Result<u64>;

    /// The terminal's state for the operator.
    async fn terminal_state(
        &self,
        terminal: &TerminalNumber,
        windows: &GuardWindows,
        now: OffsetDateTime,
    ) -> anyhow::Result<TerminalGuardState>;

    /// Forgets everything recorded of the terminal's posts and lowers its flag silently (the
    /// operator's clear). Returns how many answers were forgotten.
    async fn clear_terminal(&self, terminal: &TerminalNumber) -> anyhow::Result<u64>;
}
