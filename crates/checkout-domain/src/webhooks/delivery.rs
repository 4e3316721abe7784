//! Deliveries: one per (endpoint, event), attempted until the receiver answers 2xx or the
//! retry schedule runs out, every attempt logged.

use std::time::Duration;

use time::OffsetDateTime;
use uuid::Uuid;

use std::fmt;
use std::str::FromStr;

use super::circuit::{CircuitEvent, EndpointHealth};
use super::endpoint::SealedSecret;
use crate::events::{EventType, PaymentEvent};

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryState {
    /// Waiting for its next attempt.
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// Every attempt of the schedule failed.
    Failed,
    /// The endpoint was deleted, or disabled, before it was delivered.
    Cancelled,
}

impl DeliveryState {
    /// The stored and wire name: `pending`, `delivered`, `failed`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
            DeliveryState::Cancelled => "cancelled",
        }
    }

    /// Parses a name written by [`DeliveryState::as_str`].
    pub fn parse(s: &str) -> Option<DeliveryState> {
        [
            DeliveryState::Pending,
            DeliveryState::Delivered,
            DeliveryState::Failed,
            DeliveryState::Cancelled,
        ]
        .into_iter()
        .find(|state| state.as_str() == s)
    }
}

/// A delivery a worker has claimed: everything needed to send it.
#[derive(Debug, Clone)]
pub struct DueDelivery {
    /// The delivery.
    pub id: Uuid,
    /// The claim: the worker's lease, which its result must present.
    pub claim: Uuid,
    /// Attempts made before this one.
    pub attempts_before: u32,
    /// The endpoint's id (the context its secrets are sealed with).
    pub endpoint_id: Uuid,
    /// Where to post.
    pub url: String,
    /// The endpoint's active secrets, newest first: the current one and, during a rotation's
    /// overlap, the previous one.
    pub secrets: Vec<SealedSecret>,
    /// The event, with the session as of the event.
    pub event: PaymentEvent,
    /// The endpoint's health when the delivery was claimed.
    pub health: EndpointHealth,
}

/// What one attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptResult {
    /// When it started.
    pub attempted_at: OffsetDateTime,
    /// How long it took.
    pub duration: Duration,
    /// The answer's HTTP status; `None` when there was no answer.
    pub status: Option<u16>,
    /// Why there was no answer (a network error, a timeout, a refused URL); never a secret.
    pub error: Option<String>,
    /// The first bytes of the answer.
    pub response_excerpt: Option<String>,
}

impl AttemptResult {
    /// True when the receiver answered 2xx: the delivery is done.
    pub fn delivered(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// What happens to a delivery after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep {
    /// Delivered: no more attempts.
    Delivered,
    /// Try again at this time.
    RetryAt(OffsetDateTime),
    /// The schedule ran out: failed for good.
    GiveUp,
}

/// One logged attempt, as the deliveries log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedAttempt {
    /// When it started.
    pub attempted_at: OffsetDateTime,
    /// How long it took, milliseconds.
    pub duration_ms: u32,
    /// The answer's HTTP status, if any.
    pub status: Option<u16>,
    /// Why there was no answer, if there was none.
    pub error: Option<String>,
    /// The first bytes of the answer.
    pub response_excerpt: Option<String>,
}

/// A delivery with its attempts, as the deliveries log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryLog {
    /// The delivery.
    pub id: Uuid,
    /// The event delivered (the `webhook-id` of every attempt).
    pub event_id: Uuid,
    /// The event's type.
    pub event_type: EventType,
    /// Where it stands.
    pub state: DeliveryState,
    /// When the event was queued for this endpoint.
    pub created_at: OffsetDateTime,
    /// When the next attempt is due (pending deliveries only).
    pub next_attempt_at: Option<OffsetDateTime>,
    /// True when a merchant asked for it again (`redeliver`).
    pub redelivery: bool,
    /// Every attempt, oldest first.
    pub attempts: Vec<LoggedAttempt>,
}

/// Where a page of an endpoint's deliveries log ends: the next page lists the deliveries
/// queued before it. Opaque to merchants (a number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeliveryCursor(pub u64);

/// A cursor that is not one the service handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a deliveries cursor")]
pub struct InvalidDeliveryCursor;

impl FromStr for DeliveryCursor {
    type Err = InvalidDeliveryCursor;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() || s.len() > 19 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(InvalidDeliveryCursor);
        }
        s.parse::<u64>()
            .map(DeliveryCursor)
            .map_err(|_| InvalidDeliveryCursor)
    }
}

impl fmt::Display for DeliveryCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One page of an endpoint's deliveries log, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryPage {
    /// The deliveries, newest first, each with every attempt.
    pub deliveries: Vec<DeliveryLog>,
    /// The position after the last delivery listed (to read on with); `None` when the page
    /// is empty.
    pub cursor: Option<DeliveryCursor>,
    /// True when older deliveries follow.
    pub has_more: bool,
}

/// What became of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Answered 2xx: the delivery is done.
    Delivered,
    /// Failed; another attempt is scheduled.
    Retrying,
    /// Failed, and the schedule ran out: failed for good.
    Failed,
    /// The result changed nothing: the claim's lease was lost, or the endpoint was deleted or
    /// disabled meanwhile.
    Stale,
}

/// One attempt made by a delivery worker, and what it did to its endpoint's circuit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptReport {
    /// The delivery attempted.
    pub delivery: Uuid,
    /// Its endpoint.
    pub endpoint: Uuid,
    /// What became of the delivery.
    pub outcome: AttemptOutcome,
    /// What changed in the endpoint's circuit, if anything worth telling.
    pub circuit: Option<CircuitEvent>,
}

/// How far behind the delivery workers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WebhookBacklog {
    /// Deliveries due now and not yet delivered.
    pub due: u64,
    /// When the oldest of them fell due.
    pub oldest_due_at: Option<OffsetDateTime>,
}
