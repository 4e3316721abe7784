//! Payment attempts: one per card submission, holding what may be kept of it.

use time::OffsetDateTime;

use crate::card::CardBrand;
use crate::error::SvcCode;
use crate::values::{AttemptId, SessionId};

/// Where one attempt stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptOutcome {
    /// Recorded; the processor call is under way.
    Sent,
    /// The processor asked for a 3DS challenge.
    ChallengeRequired,
    /// Authorised (captured or not).
    Approved,
    /// Declined by the issuer or processor (SVC_006).
    Declined,
    /// The processor refused the request with a controlled error; nothing charged (SVC_004).
    Rejected,
    /// The processor could not be reached or did not answer in time (SVC_003); reconciliation
    /// settles it through the attempt's idempotency key.
    Unresolved,
    /// Reconciliation established that nothing was charged.
    Voided,
}

impl AttemptOutcome {
    /// Every outcome.
    pub const ALL: [AttemptOutcome; 7] = [
        AttemptOutcome::Sent,
        AttemptOutcome::ChallengeRequired,
        AttemptOutcome::Approved,
        AttemptOutcome::Declined,
        AttemptOutcome::Rejected,
        AttemptOutcome::Unresolved,
        AttemptOutcome::Voided,
    ];

    /// A lower-case name, for storage.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Sent => "sent",
            AttemptOutcome::ChallengeRequired => "challenge_required",
            AttemptOutcome::Approved => "approved",
            AttemptOutcome::Declined => "declined",
            AttemptOutcome::Rejected => "rejected",
            AttemptOutcome::Unresolved => "unresolved",
            AttemptOutcome::Voided => "voided",
        }
    }

    /// Parses a name written by [`AttemptOutcome::as_str`].
    pub fn parse(s: &str) -> Option<AttemptOutcome> {
        AttemptOutcome::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// One card submission for a session. Holds the brand and last four digits only: never the
/// number, the expiry or the CVV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentAttempt {
    /// The attempt id, also the processor idempotency key.
    pub id: AttemptId,
    /// The session paid.
    pub session_id: SessionId,
    /// The card brand.
    pub card_brand: CardBrand,
    /// The card's last four digits.
    pub card_last4: String,
    /// The processor's reference for the authorisation, once known.
    pub processor_reference: Option<String>,
    /// Where a 3DS challenge happens, when the processor hosts it.
    pub challenge_url: Option<String>,
    /// Where the attempt stands.
    pub outcome: AttemptOutcome,
    /// The service code the attempt ended with, if any.
    pub svc_code: Option<SvcCode>,
    /// When it was made (UTC).
    pub created_at: OffsetDateTime,
    /// When it last changed (UTC).
    pub updated_at: OffsetDateTime,
}
