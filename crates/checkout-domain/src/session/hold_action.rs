//! Actions on an authorisation held without capture: the merchant's capture (whole or
//! partial) and void. Like a refund, each is a row written before the processor is asked,
//! whose id is the processor's idempotency key, settled by the processor's answer or by the
//! reconciliation sweep. At most one capture or void of a session reserves the authorisation
//! at a time: of two racing actions one is recorded, the other is told what holds it.

use rust_decimal::Decimal;
use time::OffsetDateTime;

use super::LedgerState;
use crate::error::SvcCode;
use crate::values::{ActionId, IdempotencyKey, SessionId};

/// What the merchant asked of the held authorisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HoldActionKind {
    /// Capture (part of) the authorised amount: ApprovedTransaction → Successful.
    Capture,
    /// Release the authorisation: ApprovedTransaction → Voided.
    Void,
    /// Not the merchant's: the processor released the authorisation on its own (it expired
    /// uncaptured, Stripe after 7 days), noticed by a processor event or a refused capture.
    /// Driving it reads the authorisation: ApprovedTransaction → Expired once the processor
    /// shows it cancelled.
    Expiry,
}

impl HoldActionKind {
    /// The stored name (`capture`, `void`).
    pub fn as_str(self) -> &'static str {
        match self {
            HoldActionKind::Capture => "capture",
            HoldActionKind::Void => "void",
            HoldActionKind::Expiry => "expiry",
        }
    }

    /// Parses a name written by [`HoldActionKind::as_str`].
    pub fn parse(s: &str) -> Option<HoldActionKind> {
        [
            HoldActionKind::Capture,
            HoldActionKind::Void,
            HoldActionKind::Expiry,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One capture, void or expiry of a session's held authorisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldAction {
    /// Its id; the processor idempotency key derives from it.
    pub id: ActionId,
    /// The session whose authorisation it acts on.
    pub session_id: SessionId,
    /// Capture, void or expiry.
    pub kind: HoldActionKind,
    /// A capture's amount; a void's is the authorised amount.
    pub amount: Decimal,
    /// Where it stands.
    pub state: LedgerState,
    /// What the processor holds captured after a capture it confirmed.
    pub captured: Option<Decimal>,
    /// The code it ended with when it did not succeed.
    pub svc_code: Option<SvcCode>,
    /// The merchant's `Idempotency-Key`, when it was asked with one.
    pub key: Option<IdempotencyKey>,
    /// When the reconciliation sweep next asks the processor about it (`None`: settled, or
    /// left for review).
    pub next_check_at: Option<OffsetDateTime>,
    /// When it was recorded.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
}
