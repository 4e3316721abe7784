//! E-mail receipts: the outbox the payment's success fills, and the mail server that sends
//! them.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::receipts::{DueReceipt, MailFailure, QueuedReceipt, Receipt};
use crate::values::TerminalNumber;
use crate::webhooks::NextStep;

/// The receipt mails queued by the payments' successes.
///
/// An implementation MUST queue a session's receipt mail in the same transaction as the
/// change that moves the session to Successful or ApprovedTransaction through its card
/// attempt ([`AttemptLedger::record_attempt`](super::AttemptLedger::record_attempt)) when the
/// session has the payer's address, and MUST keep at most one per session (a unique key, so
/// that a replay, a capture or a race queues nothing more). It MUST keep no card data but the
/// brand and last four digits the attempt already holds, and MUST keep the mails through
/// restarts: a mail is pending until a sending's result says otherwise.
#[async_trait]
pub trait ReceiptOutbox: Send + Sync {
    /// Claims at most `limit` pending mails due at `now`, oldest due first, each leased until
    /// `lease_until` under a new claim. MUST skip mails another worker holds (`FOR UPDATE
    /// SKIP LOCKED` or equivalent) and mails whose lease lasts past `now`, so that two
    /// workers never send one mail at once while a lease lasts.
    async fn claim_due(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<DueReceipt>>;

    /// Records one sending of `due` made at `at` and applies `next` (sent, retry at, or
    /// failed for good), keeping `error` as the last failure. MUST count the sending and
    /// change the mail only while `due.claim` still holds it and it is pending; returns
    /// whether it did (false: the lease was lost, nothing changed).
    async fn record_send(
        &self,
        due: &DueReceipt,
        at: OffsetDateTime,
        next: NextStep,
        error: Option<&str>,
    ) -> anyhow::Result<bool>;

    /// The newest `limit` mails, newest first; only `terminal`'s when one is given.
    async fn list(
        &self,
        terminal: Option<&TerminalNumber>,
        limit: u32,
    ) -> anyhow::Result<Vec<QueuedReceipt>>;
}

/// The mail server receipts are sent through.
#[async_trait]
pub trait ReceiptMailer: Send + Sync {
    /// Sends `receipt` to `receipt.to` as one message with a plain-text and an HTML part,
    /// both in `receipt.culture`'s language.
    ///
    /// MUST NOT put any card data in the message but the brand and the last four digits.
    /// MUST return `Ok` only when the server accepted the message; MUST return
    /// [`MailFailure::Transient`] for what may pass (no connection, a time-out, a 4xx reply)
    /// and [`MailFailure::Permanent`] for a refusal (a 5xx reply). MUST NOT put the server's
    /// password in any error or log.
    async fn send(&self, receipt: &Receipt) -> Result<(), MailFailure>;
}
