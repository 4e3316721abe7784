//! Production adapters of the clock and id ports: the wall clock and the OS random source.

use checkout_domain::ports::{Clock, IdGenerator};
use checkout_domain::values::{AttemptId, InternalReference, RefundId, SessionId};
use time::OffsetDateTime;

/// The system clock, in UTC.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// Ids from the operating system's cryptographically secure random source.
pub struct RandomIds;

fn random_bytes() -> [u8; 16] {
    let mut bytes = [0u8; 16];
    // The OS random source failing is unrecoverable: no id may be minted without it.
    if let Err(e) = getrandom::getrandom(&mut bytes) {
        panic!("the operating system's random source failed: {e}");
    }
    bytes
}

impl IdGenerator for RandomIds {
    fn session_id(&self) -> SessionId {
        SessionId::from_random_bytes(random_bytes())
    }

    fn internal_reference(&self) -> InternalReference {
        InternalReference::from_random_bytes(random_bytes())
    }

    fn attempt_id(&self) -> AttemptId {
        AttemptId::from_random_bytes(random_bytes())
    }

    fn webhook_endpoint_id(&self) -> uuid::Uuid {
        uuid::Uuid::from_bytes(random_bytes())
    }

    fn refund_id(&self) -> RefundId {
        RefundId::from_random_bytes(random_bytes())
    }
}
