//! The processor's own news: its events (Stripe's webhooks), verified and read by the
//! processor's adapter, and what the service keeps of them. An event is a hint, never the
//! truth: the service reads the object it names from the processor's API and moves state only
//! through the ledgers' compare-and-set, so a duplicate, late or reordered event is harmless.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::session::{Dispute, PaymentAttempt, Refund};
use crate::values::{AttemptId, RefundId, SessionId};

/// One verified processor event: which object changed, not what it became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorNotice {
    /// The processor's event id (`evt_...`): each is absorbed once.
    pub id: String,
    /// The processor's event type (`payment_intent.succeeded`, ...), for the log.
    pub kind: String,
    /// The object it is about.
    pub subject: NoticeSubject,
}

/// The object a processor event is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeSubject {
    /// An authorisation (a Stripe PaymentIntent) that succeeded, failed, was cancelled or
    /// expired at the processor.
    Payment {
        /// The processor's reference of the authorisation.
        reference: String,
        /// The attempt the service asked it for, when the object carries it (found even when
        /// the authorisation's answer, and so its reference, was lost).
        attempt: Option<AttemptId>,
    },
    /// A refund that succeeded or failed, possibly long after it was asked.
    Refund {
        /// The processor's refund reference.
        reference: String,
        /// The ledger row the service asked it for, when the object carries it.
        refund: Option<RefundId>,
    },
    /// A dispute opened, updated or closed.
    Dispute {
        /// The processor's dispute reference.
        reference: String,
    },
    /// An event about nothing the service follows: answered, logged, not acted on.
    Other,
}

/// Why a processor event was refused: nothing was read or changed (answered 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoticeRejected {
    /// The service has no secret to verify processor events with.
    #[error("processor events are not configured on this service")]
    NotConfigured,
    /// The request carries no signature.
    #[error("the request carries no signature")]
    Unsigned,
    /// No signature matches any configured secret.
    #[error("the signature matches no configured secret")]
    BadSignature,
    /// The signature's timestamp is outside the tolerance: a replay of an old delivery.
    #[error("the signature's timestamp is outside the tolerance")]
    Stale,
    /// Signed, but not an event the adapter can read.
    #[error("the event cannot be read: {0}")]
    Malformed(String),
}

/// Verifies and reads the processor's events.
pub trait ProcessorNotices: Send + Sync {
    /// The request header that carries the signature (`Stripe-Signature`).
    fn signature_header(&self) -> &'static str;

    /// Verifies `payload` against `signature` and reads which object it is about.
    ///
    /// MUST verify over exactly the bytes received, accept a signature made with any of the
    /// configured secrets (so a secret can be rotated with two in place), compare in constant
    /// time, and refuse a signature whose timestamp is further from `now` than the tolerance
    /// ([`NoticeRejected::Stale`]). MUST NOT log the payload, the signature or a secret.
    /// MUST read nothing from the payload but the event's id, type and object reference (the
    /// service reads the object itself from the processor).
    fn read(
        &self,
        payload: &[u8],
        signature: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<ProcessorNotice, NoticeRejected>;
}

/// What the service keeps of the processor's events, and how it finds the rows they name.
#[async_trait]
pub trait NoticeStore: Send + Sync {
    /// True once [`record_notice`](Self::record_notice) of `id` has committed.
    async fn notice_seen(&self, id: &str) -> anyhow::Result<bool>;

    /// Records that event `id` was absorbed at `at`. MUST be idempotent (a second record of
    /// one id changes nothing and succeeds).
    async fn record_notice(&self, id: &str, at: OffsetDateTime) -> anyhow::Result<()>;

    /// Forgets the notices absorbed before `before`; returns how many. MUST NOT forget one
    /// absorbed at or after `before`. (An event absorbed again after its id was forgotten is
    /// harmless: the service reads the object from the processor and moves nothing twice.)
    async fn forget_notices_before(&self, before: OffsetDateTime) -> anyhow::Result<u64>;

    /// The attempt the processor knows as `reference`, if any.
    async fn attempt_by_reference(&self, reference: &str)
        -> anyhow::Result<Option<PaymentAttempt>>;

    /// The refund with id `id` (when given), else the one the processor knows as
    /// `reference`, if any.
    async fn find_refund(
        &self,
        id: Option<RefundId>,
        reference: &str,
    ) -> anyhow::Result<Option<Refund>>;
}

/// What [`DisputeLedger::record_dispute`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisputeRecorded {
    /// The dispute was new: recorded, and announced (opened; closed too when it came in
    /// already decided).
    Opened,
    /// The stored dispute moved to the new status (announced when it closed).
    Moved,
    /// Nothing changed: the same status, or a closed dispute (a late event).
    Unchanged,
}

/// Durable storage of the disputes the processor reports.
#[async_trait]
pub trait DisputeLedger: Send + Sync {
    /// Records what the processor says of `dispute`.
    ///
    /// MUST insert it when its reference is new, with the event `payment.dispute_opened`
    /// (and `payment.dispute_closed` after it when it is already closed). MUST otherwise save
    /// its status and `updated_at` only if the stored status
    /// [can become](crate::session::DisputeStatus::can_become) it, with
    /// `payment.dispute_closed` when the new status is closed. Decided atomically, each event
    /// in the same transaction as its change: racing records of one dispute write each event
    /// once.
    async fn record_dispute(&self, dispute: &Dispute) -> anyhow::Result<DisputeRecorded>;

    /// The disputes of `session`, oldest first.
    async fn disputes(&self, session: SessionId) -> anyhow::Result<Vec<Dispute>>;
}
