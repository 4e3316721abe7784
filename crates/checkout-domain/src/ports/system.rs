//! Time and randomness, behind ports so that tests are deterministic.

use time::OffsetDateTime;

use crate::values::{ActionId, AttemptId, InternalReference, RefundId, SessionId};

/// The current time.
pub trait Clock: Send + Sync {
    /// Now, in UTC. MUST be monotonic enough for expiry checks (wall clock is fine).
    fn now(&self) -> OffsetDateTime;
}

/// Mints identifiers.
pub trait IdGenerator: Send + Sync {
    /// A new session id. MUST carry 128 bits from a cryptographically secure source in
    /// production: session ids are bearer capabilities for the hosted pages.
    fn session_id(&self) -> SessionId;

    /// A new internal reference; MUST NOT repeat.
    fn internal_reference(&self) -> InternalReference;

    /// A new attempt id; MUST NOT repeat (it is the processor idempotency key).
    fn attempt_id(&self) -> AttemptId;

    /// A new webhook endpoint id; MUST NOT repeat.
    fn webhook_endpoint_id(&self) -> uuid::Uuid;
    /// A new refund id; MUST NOT repeat (it is the processor idempotency key).
    fn refund_id(&self) -> RefundId;

    /// A new capture or void id; MUST NOT repeat (the processor idempotency key derives from
    /// it). The default draws it as a refund id is drawn.
    fn action_id(&self) -> ActionId {
        ActionId::from_uuid(self.refund_id().as_uuid())
    }
}
