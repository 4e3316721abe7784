//! Refunds: the ledger of money returned after a capture. A refund row is written (Sent, its
//! amount reserved against the captured amount) before the processor is asked, and settled
//! by the processor's answer; its id is the processor idempotency key.

use rust_decimal::Decimal;
use time::OffsetDateTime;

use crate::error::SvcCode;
use crate::values::{RefundId, SessionId};

/// Where one refund stands at the processor, as far as the service knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefundState {
    /// Recorded, its amount reserved, before the processor was asked.
    Sent,
    /// The processor confirmed the refund: counted in the session's refunded amount.
    Succeeded,
    /// The processor refused or failed it (SVC_009): nothing refunded, nothing reserved.
    Failed,
    /// The processor's answer was lost: it may have refunded. The amount stays reserved and
    /// is not reported as refunded until the processor says so.
    Unknown,
}

impl RefundState {
    /// Every state.
    pub const ALL: [RefundState; 4] = [
        RefundState::Sent,
        RefundState::Succeeded,
        RefundState::Failed,
        RefundState::Unknown,
    ];

    /// The states a processor answer may settle.
    pub const UNSETTLED: [RefundState; 2] = [RefundState::Sent, RefundState::Unknown];

    /// The stored name (`sent`, `succeeded`, `failed`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            RefundState::Sent => "sent",
            RefundState::Succeeded => "succeeded",
            RefundState::Failed => "failed",
            RefundState::Unknown => "unknown",
        }
    }

    /// The name the merchant reads (`Pending`, `Succeeded`, `Failed`, `Unknown`).
    pub fn name(self) -> &'static str {
        match self {
            RefundState::Sent => "Pending",
            RefundState::Succeeded => "Succeeded",
            RefundState::Failed => "Failed",
            RefundState::Unknown => "Unknown",
        }
    }

    /// Parses a name written by [`RefundState::as_str`].
    pub fn parse(s: &str) -> Option<RefundState> {
        RefundState::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// True when the refund's amount counts against what can still be refunded: every state
    /// but Failed (a lost answer may have refunded).
    pub fn reserves(self) -> bool {
        self != RefundState::Failed
    }
}

/// One refund of a captured session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refund {
    /// Its id; also the processor idempotency key, so that a replay is the same request.
    pub id: RefundId,
    /// The refunded session.
    pub session_id: SessionId,
    /// How much, in the session's currency.
    pub amount: Decimal,
    /// Where it stands.
    pub state: RefundState,
    /// The processor's refund reference, once known.
    pub processor_reference: Option<String>,
    /// SVC_009 once the processor refused it or its answer was lost.
    pub svc_code: Option<SvcCode>,
    /// When it was recorded.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
}
