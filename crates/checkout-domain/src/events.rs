//! Merchant events: what a merchant is told about a session's changes, in the order they were
//! committed. Every change of a session into a state with an [`EventType`] has exactly one
//! event, written in the same transaction as the change (see [`EventLog`](crate::ports::EventLog)).

use std::fmt;
use std::str::FromStr;

use time::OffsetDateTime;
use uuid::Uuid;

use crate::session::{DisputeStatus, PaymentSession, SessionState};
use crate::values::RefundId;

/// The kind of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// The payment was authorised and captured (Successful).
    PaymentSucceeded,
    /// The payment was authorised, not captured (ApprovedTransaction).
    PaymentAuthorized,
    /// The payment was declined (Failed).
    PaymentFailed,
    /// The session expired unpaid (Expired).
    PaymentExpired,
    /// The session was cancelled (Cancelled).
    PaymentCancelled,
    /// The merchant captured an authorisation (ApprovedTransaction → Successful).
    PaymentCaptured,
    /// The merchant voided an authorisation (Voided).
    PaymentVoided,
    /// The processor confirmed a refund (the session's refunded amount grew).
    PaymentRefunded,
    /// A card attempt was declined (its brand, last four and SVC_006 are in the record's
    /// `attempts`), whether or not the session stays payable.
    PaymentAttemptFailed,
    /// A refund ended Failed: the processor refused it, or failed it after confirming it
    /// (then the session's refunded amount shrank by it). The event names the refund.
    PaymentRefundFailed,
    /// The processor released an authorisation that was never captured (ApprovedTransaction
    /// → Expired): nothing was charged.
    PaymentAuthorizationExpired,
    /// The payer's bank opened a dispute on the captured payment. The event names it.
    PaymentDisputeOpened,
    /// A dispute was decided: the event names it with its outcome (`Won`, `Lost`,
    /// `InquiryClosed`).
    PaymentDisputeClosed,
    /// The card-testing guard saw the terminal's decline rate spike: its pages challenge
    /// every payer until it calms. The event's session is the post that saw the spike.
    TerminalCardTestingSuspected,
    /// The terminal's decline rate calmed (or the operator cleared it): its pages no longer
    /// challenge every payer. The event's session is the post that saw the calm.
    TerminalCardTestingEnded,
}

impl EventType {
    /// Every type.
    pub const ALL: [EventType; 15] = [
        EventType::PaymentSucceeded,
        EventType::PaymentAuthorized,
        EventType::PaymentFailed,
        EventType::PaymentExpired,
        EventType::PaymentCancelled,
        EventType::PaymentCaptured,
        EventType::PaymentVoided,
        EventType::PaymentRefunded,
        EventType::PaymentAttemptFailed,
        EventType::PaymentRefundFailed,
        EventType::PaymentAuthorizationExpired,
        EventType::PaymentDisputeOpened,
        EventType::PaymentDisputeClosed,
        EventType::TerminalCardTestingSuspected,
        EventType::TerminalCardTestingEnded,
    ];

    /// The name on the wire, e.g. `payment.succeeded`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::PaymentSucceeded => "payment.succeeded",
            EventType::PaymentAuthorized => "payment.authorized",
            EventType::PaymentFailed => "payment.failed",
            EventType::PaymentExpired => "payment.expired",
            EventType::PaymentCancelled => "payment.cancelled",
            EventType::PaymentCaptured => "payment.captured",
            EventType::PaymentVoided => "payment.voided",
            EventType::PaymentRefunded => "payment.refunded",
            EventType::PaymentAttemptFailed => "payment.attempt_failed",
            EventType::PaymentRefundFailed => "payment.refund_failed",
            EventType::PaymentAuthorizationExpired => "payment.authorization_expired",
            EventType::PaymentDisputeOpened => "payment.dispute_opened",
            EventType::PaymentDisputeClosed => "payment.dispute_closed",
            EventType::TerminalCardTestingSuspected => "terminal.card_testing_suspected",
            EventType::TerminalCardTestingEnded => "terminal.card_testing_ended",
        }
    }

    /// Parses a name written by [`EventType::as_str`].
    pub fn parse(s: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The event a change into `state` writes; `None` for states merchants are not told about
    /// (Pending, Processing, ChallengeRequired).
    pub fn of_state(state: SessionState) -> Option<EventType> {
        match state {
            SessionState::Successful => Some(EventType::PaymentSucceeded),
            SessionState::ApprovedTransaction => Some(EventType::PaymentAuthorized),
            SessionState::Failed => Some(EventType::PaymentFailed),
            SessionState::Expired => Some(EventType::PaymentExpired),
            SessionState::Cancelled => Some(EventType::PaymentCancelled),
            SessionState::Voided => Some(EventType::PaymentVoided),
            SessionState::Pending | SessionState::Processing | SessionState::ChallengeRequired => {
                None
            }
        }
    }
}

impl EventType {
    /// The event a change from `from` into `to` writes: the merchant's capture
    /// (ApprovedTransaction → Successful) is `payment.captured`, an authorisation the
    /// processor released (ApprovedTransaction → Expired) is `payment.authorization_expired`;
    /// any other change is its new
    /// state's event ([`EventType::of_state`]); `None` when the state did not change (a
    /// confirmed refund, which leaves the state as it is, is `payment.refunded`).
    pub fn of_change(from: SessionState, to: SessionState) -> Option<EventType> {
        match (from, to) {
            _ if from == to => None,
            (SessionState::ApprovedTransaction, SessionState::Successful) => {
                Some(EventType::PaymentCaptured)
            }
            (SessionState::ApprovedTransaction, SessionState::Expired) => {
                Some(EventType::PaymentAuthorizationExpired)
            }
            _ => EventType::of_state(to),
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A position in a terminal's event feed: the events after it are the ones committed after
/// the events before it. Opaque to merchants (`<transaction>.<sequence>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventCursor {
    /// The committing transaction's order.
    pub transaction: u64,
    /// The order within the store.
    pub sequence: u64,
}

/// A cursor that is not one the service handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not an event cursor")]
pub struct InvalidCursor;

impl FromStr for EventCursor {
    type Err = InvalidCursor;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (transaction, sequence) = s.split_once('.').ok_or(InvalidCursor)?;
        let number = |part: &str| {
            if part.is_empty() || part.len() > 20 || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(InvalidCursor);
            }
            part.parse::<u64>().map_err(|_| InvalidCursor)
        };
        Ok(EventCursor {
            transaction: number(transaction)?,
            sequence: number(sequence)?,
        })
    }
}

impl fmt::Display for EventCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.transaction, self.sequence)
    }
}

/// One event, with the session as it stood when the event happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentEvent {
    /// The event id: the same on every delivery of the event.
    pub id: Uuid,
    /// What happened.
    pub kind: EventType,
    /// When it happened (the session's last change at that moment).
    pub occurred_at: OffsetDateTime,
    /// Where it stands in the feed.
    pub cursor: EventCursor,
    /// The session as of the event: its state and last change are the event's; items and
    /// charges are left empty (the status record shows neither).
    pub session: PaymentSession,
    /// The refund or dispute the event is about, for the events that name one.
    pub about: Option<EventSubject>,
}

/// The ledger row an event is about, beyond its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventSubject {
    /// A refund (`payment.refund_failed`).
    Refund(RefundId),
    /// A dispute, with its status as of the event (`payment.dispute_opened`,
    /// `payment.dispute_closed`).
    Dispute {
        /// The processor's dispute reference.
        reference: String,
        /// Its status when the event was written.
        status: DisputeStatus,
    },
}
