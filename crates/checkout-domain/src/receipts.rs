//! E-mail receipts: what a payer's receipt says, and where its mail stands in the outbox.
//!
//! The statement that records a payment's success
//! ([`AttemptLedger::record_attempt`](crate::ports::AttemptLedger::record_attempt)) queues
//! the session's receipt mail in the same transaction when the session has the payer's
//! address (`userEmail`): at most one per session. Workers send the queued mails through
//! [`ReceiptMailer`](crate::ports::ReceiptMailer) ([`Receipts`](crate::usecases::Receipts)),
//! retrying on the webhooks' [`RetrySchedule`](crate::webhooks::RetrySchedule). With no
//! mail server configured nothing sends them: they stay in the outbox, for an operator to
//! read.

use rust_decimal::Decimal;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::card::CardBrand;
use crate::values::{Culture, Currency, SessionId, TerminalNumber};

/// What a receipt says: the payment, the merchant and the card's brand and last four
/// digits, never more of the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// `checkoutSessionId`, to quote.
    pub session_id: SessionId,
    /// The merchant's terminal.
    pub terminal: TerminalNumber,
    /// The payer's address (`userEmail`).
    pub to: String,
    /// The receipt's language: the session's `culture`, Spanish when it has none (as the
    /// pages choose without a browser's preference).
    pub culture: Culture,
    /// The merchant's display name.
    pub merchant: String,
    /// `generalPurchaseDescription`.
    pub description: Option<String>,
    /// The amount paid.
    pub amount: Decimal,
    /// Its currency.
    pub currency: Currency,
    /// The card's brand.
    pub card_brand: CardBrand,
    /// The card's last four digits.
    pub card_last4: String,
    /// `internalTransactionReferenceNumber`, to quote.
    pub internal_reference: String,
    /// When the card was submitted (UTC).
    pub paid_at: OffsetDateTime,
}

/// Where a receipt mail stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MailState {
    /// Waiting to be sent (or, with no mail server configured, kept).
    Pending,
    /// The mail server accepted it.
    Sent,
    /// Refused for good, or every attempt of the schedule failed.
    Failed,
}

impl MailState {
    /// The stored name: `pending`, `sent`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            MailState::Pending => "pending",
            MailState::Sent => "sent",
            MailState::Failed => "failed",
        }
    }

    /// Parses a name written by [`MailState::as_str`].
    pub fn parse(s: &str) -> Option<MailState> {
        [MailState::Pending, MailState::Sent, MailState::Failed]
            .into_iter()
            .find(|m| m.as_str() == s)
    }
}

/// A receipt mail claimed for one sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueReceipt {
    /// The mail's id.
    pub id: Uuid,
    /// The claim that leases it to this worker.
    pub claim: Uuid,
    /// Sendings made before this one.
    pub attempts_before: u32,
    /// What it says.
    pub receipt: Receipt,
}

/// A receipt mail as the outbox holds it (the operator's list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedReceipt {
    /// The mail's id.
    pub id: Uuid,
    /// When it was queued: when the payment's success was recorded.
    pub queued_at: OffsetDateTime,
    /// Where it stands.
    pub state: MailState,
    /// Sendings made.
    pub attempts: u32,
    /// When the mail server accepted it.
    pub sent_at: Option<OffsetDateTime>,
    /// The last failure, as the mail server or the connection said it.
    pub last_error: Option<String>,
    /// What it says.
    pub receipt: Receipt,
}

/// Why a receipt was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailFailure {
    /// It may go through later (no connection, a time-out, a 4xx reply): retried.
    #[error("{0}")]
    Transient(String),
    /// The server refused it for good (a 5xx reply): not retried.
    #[error("{0}")]
    Permanent(String),
}

/// What one run of the receipt worker did, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiptRun {
    /// Mails the server accepted.
    pub sent: u32,
    /// Mails that failed and will be retried.
    pub retrying: u32,
    /// Mails that failed for good.
    pub failed: u32,
    /// Results that changed nothing (the lease was lost).
    pub stale: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mail_states_round_trip_their_stored_names() {
        for state in [MailState::Pending, MailState::Sent, MailState::Failed] {
            assert_eq!(MailState::parse(state.as_str()), Some(state));
        }
        assert_eq!(MailState::parse("delivered"), None);
    }
}
