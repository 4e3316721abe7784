//! Refunds: money returned after a capture. A refund row is written (Sent, its amount
//! reserved against the captured amount) before the processor is asked, and settled by the
//! processor's answer or by the reconciliation sweep; its id is the processor idempotency key.

use rust_decimal::Decimal;
use time::OffsetDateTime;

use super::LedgerState;
use crate::error::SvcCode;
use crate::values::{IdempotencyKey, RefundId, SessionId};

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
    pub state: LedgerState,
    /// The processor's refund reference, once known.
    pub processor_reference: Option<String>,
    /// SVC_009 once the processor refused it or its answer was lost.
    pub svc_code: Option<SvcCode>,
    /// The merchant's `Idempotency-Key`, when the refund was asked with one: a key names one
    /// refund of its session for good, whatever became of the request that made it.
    pub key: Option<IdempotencyKey>,
    /// When the reconciliation sweep next asks the processor about it (`None`: settled, or
    /// left for review).
    pub next_check_at: Option<OffsetDateTime>,
    /// When it was recorded.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
}
