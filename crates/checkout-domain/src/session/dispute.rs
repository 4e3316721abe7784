//! Disputes (chargebacks): the payer's bank contests a captured payment. The processor owns
//! them; the service records what the processor says of each, moves a record only forward
//! ([`DisputeStatus::can_become`]), and tells the merchant when one opens and when it closes.

use rust_decimal::Decimal;
use time::OffsetDateTime;

use crate::values::SessionId;

/// Where a dispute stands, as the processor reports it.
///
/// ```text
/// NeedsResponse ◀──▶ UnderReview ──▶ Won | Lost | InquiryClosed
/// ```
/// The open states may follow each other in any order; the closed ones are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DisputeStatus {
    /// Open: the merchant should send evidence (an inquiry or a chargeback).
    NeedsResponse,
    /// Open: evidence sent, the bank is deciding.
    UnderReview,
    /// Closed for the merchant: the money stays with the merchant.
    Won,
    /// Closed against the merchant: the money went back to the payer.
    Lost,
    /// Closed: an inquiry that never became a chargeback; no money moved.
    InquiryClosed,
}

impl DisputeStatus {
    /// Every status.
    pub const ALL: [DisputeStatus; 5] = [
        DisputeStatus::NeedsResponse,
        DisputeStatus::UnderReview,
        DisputeStatus::Won,
        DisputeStatus::Lost,
        DisputeStatus::InquiryClosed,
    ];

    /// The stored name (`needs_response`, `under_review`, `won`, `lost`, `inquiry_closed`).
    pub fn as_str(self) -> &'static str {
        match self {
            DisputeStatus::NeedsResponse => "needs_response",
            DisputeStatus::UnderReview => "under_review",
            DisputeStatus::Won => "won",
            DisputeStatus::Lost => "lost",
            DisputeStatus::InquiryClosed => "inquiry_closed",
        }
    }

    /// The name the merchant reads (`NeedsResponse`, `UnderReview`, `Won`, `Lost`,
    /// `InquiryClosed`).
    pub fn name(self) -> &'static str {
        match self {
            DisputeStatus::NeedsResponse => "NeedsResponse",
            DisputeStatus::UnderReview => "UnderReview",
            DisputeStatus::Won => "Won",
            DisputeStatus::Lost => "Lost",
            DisputeStatus::InquiryClosed => "InquiryClosed",
        }
    }

    /// Parses a name written by [`DisputeStatus::as_str`].
    pub fn parse(s: &str) -> Option<DisputeStatus> {
        DisputeStatus::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// True once the dispute is decided (Won, Lost or InquiryClosed).
    pub fn is_closed(self) -> bool {
        matches!(
            self,
            DisputeStatus::Won | DisputeStatus::Lost | DisputeStatus::InquiryClosed
        )
    }

    /// The one rule of a dispute record: an open dispute may take any other status; a closed
    /// one never changes. A processor event that arrives late (an "updated" after the
    /// "closed") therefore changes nothing.
    pub fn can_become(self, next: DisputeStatus) -> bool {
        !self.is_closed() && next != self
    }
}

/// One dispute of a captured session, as the processor last reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispute {
    /// The processor's dispute reference (`dp_...` with Stripe).
    pub reference: String,
    /// The disputed session.
    pub session_id: SessionId,
    /// The disputed amount, in the session's currency.
    pub amount: Decimal,
    /// The bank's reason, as the processor names it (`fraudulent`, `product_not_received`,
    /// ...).
    pub reason: String,
    /// Where it stands.
    pub status: DisputeStatus,
    /// When the service first learnt of it.
    pub opened_at: OffsetDateTime,
    /// When its record last changed.
    pub updated_at: OffsetDateTime,
}
