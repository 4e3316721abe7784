//! The session state machine: the states with their stable numeric codes, the events that
//! move them, and the one function that decides every transition.
//!
//! Voided (8) is the one state added to the spec's: none of them says "authorised, then
//! released" (Cancelled means nothing was ever authorised). Refunds add no state: a refunded
//! payment stays Successful and its refunded amount says how much came back, so a partial
//! refund and a whole one read alike (`docs/decisions/0006-voided-state-refunds-as-amounts.md`).

use std::fmt;

/// The state of a payment session, as the status route reports it.
///
/// The numeric codes are stable and stored; Failed is 2 as the spec fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionState {
    /// Created; the payer has not submitted a card yet (or may try again after a
    /// processor error that charged nothing). Code 0.
    Pending,
    /// Terminal: the payment was authorised and captured. Code 1.
    Successful,
    /// Terminal: the payment was declined. Code 2.
    Failed,
    /// Terminal: the processor approved the authorisation; capture is the processor's or the
    /// merchant's to do. Code 3.
    ApprovedTransaction,
    /// A card was submitted and the processor has not answered yet. Code 4.
    Processing,
    /// The processor asked for a 3-D Secure challenge; waiting for the payer. Code 5.
    ChallengeRequired,
    /// Terminal: the session expired unpaid (or its authorisation expired at the processor
    /// uncaptured: nothing charged); its merchant reference is free again. Code 6.
    Expired,
    /// Terminal: cancelled unpaid, by the payer (the back button of the checkout page) or by
    /// the merchant (`POST /pay/api/payment/{id}/cancel`). Code 7.
    Cancelled,
    /// Terminal: the merchant voided an authorisation that was never captured; the payer's
    /// funds are released. Code 8.
    Voided,
}

/// Something that happened to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionEvent {
    /// The payer submitted a card (Pending → Processing).
    CardSubmitted,
    /// The processor asked for a 3DS challenge (Processing → ChallengeRequired).
    ChallengeIssued,
    /// The payer answered the challenge (ChallengeRequired → Processing).
    ChallengeAnswered,
    /// The processor authorised and captured (Processing or ChallengeRequired → Successful;
    /// from ChallengeRequired when the processor says a challenge it hosted was passed).
    Captured,
    /// The processor authorised without capture (Processing or ChallengeRequired →
    /// ApprovedTransaction).
    Authorized,
    /// The processor declined, and the terminal allows no further card (Processing or
    /// ChallengeRequired → Failed).
    Declined,
    /// The processor declined, and the terminal allows another card (`maxCardAttempts`):
    /// nothing charged, the payer may pay with another card (Processing or ChallengeRequired
    /// → Pending).
    DeclinedRetryable,
    /// The attempt ended with nothing charged, as the processor said: a refused request, or an
    /// authorisation cancelled at the processor (Processing or ChallengeRequired → Pending),
    /// so the payer may try again.
    AttemptVoided,
    /// The payer or the merchant cancelled (Pending or ChallengeRequired → Cancelled). From
    /// ChallengeRequired only after the processor confirmed the authorisation cancelled.
    PayerCancelled,
    /// The session's expiry passed unpaid (Pending or ChallengeRequired → Expired). From
    /// ChallengeRequired only after the processor confirmed the authorisation cancelled.
    ExpiryPassed,
    /// The merchant captured an authorisation, as the processor confirmed
    /// (ApprovedTransaction → Successful).
    MerchantCaptured,
    /// The merchant voided an authorisation, as the processor confirmed
    /// (ApprovedTransaction → Voided).
    MerchantVoided,
    /// The processor released an authorisation that was never captured (it expired), as a
    /// read of it confirmed (ApprovedTransaction → Expired): nothing was charged.
    AuthorizationExpired,
}

/// A move the state machine refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal transition: {event:?} in state {from}")]
pub struct IllegalTransition {
    /// The state the session was in.
    pub from: SessionState,
    /// The event that cannot happen in it.
    pub event: SessionEvent,
}

impl SessionState {
    /// Every state.
    pub const ALL: [SessionState; 9] = [
        SessionState::Pending,
        SessionState::Successful,
        SessionState::Failed,
        SessionState::ApprovedTransaction,
        SessionState::Processing,
        SessionState::ChallengeRequired,
        SessionState::Expired,
        SessionState::Cancelled,
        SessionState::Voided,
    ];

    /// Decides every transition: the state after `event`, or [`IllegalTransition`].
    pub fn apply(self, event: SessionEvent) -> Result<SessionState, IllegalTransition> {
        use SessionEvent as E;
        use SessionState as S;
        let next = match (self, event) {
            (S::Pending, E::CardSubmitted) => S::Processing,
            (S::Processing, E::ChallengeIssued) => S::ChallengeRequired,
            (S::ChallengeRequired, E::ChallengeAnswered) => S::Processing,
            (S::Processing | S::ChallengeRequired, E::Captured) => S::Successful,
            (S::Processing | S::ChallengeRequired, E::Authorized) => S::ApprovedTransaction,
            (S::Processing | S::ChallengeRequired, E::Declined) => S::Failed,
            (S::Processing | S::ChallengeRequired, E::AttemptVoided | E::DeclinedRetryable) => {
                S::Pending
            }
            (S::Pending | S::ChallengeRequired, E::PayerCancelled) => S::Cancelled,
            (S::Pending | S::ChallengeRequired, E::ExpiryPassed) => S::Expired,
            (S::ApprovedTransaction, E::MerchantCaptured) => S::Successful,
            (S::ApprovedTransaction, E::MerchantVoided) => S::Voided,
            (S::ApprovedTransaction, E::AuthorizationExpired) => S::Expired,
            (from, event) => return Err(IllegalTransition { from, event }),
        };
        Ok(next)
    }

    /// The stable numeric code.
    pub fn code(self) -> i16 {
        match self {
            SessionState::Pending => 0,
            SessionState::Successful => 1,
            SessionState::Failed => 2,
            SessionState::ApprovedTransaction => 3,
            SessionState::Processing => 4,
            SessionState::ChallengeRequired => 5,
            SessionState::Expired => 6,
            SessionState::Cancelled => 7,
            SessionState::Voided => 8,
        }
    }

    /// The state with this numeric code.
    pub fn from_code(code: i16) -> Option<SessionState> {
        SessionState::ALL.into_iter().find(|s| s.code() == code)
    }

    /// The name the status route reports (`Successful`, `Failed`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SessionState::Pending => "Pending",
            SessionState::Successful => "Successful",
            SessionState::Failed => "Failed",
            SessionState::ApprovedTransaction => "ApprovedTransaction",
            SessionState::Processing => "Processing",
            SessionState::ChallengeRequired => "ChallengeRequired",
            SessionState::Expired => "Expired",
            SessionState::Cancelled => "Cancelled",
            SessionState::Voided => "Voided",
        }
    }

    /// True for the final states: no payer or processor event moves the session any more.
    /// (The merchant may still capture or void an ApprovedTransaction.)
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            SessionState::Successful
                | SessionState::Failed
                | SessionState::ApprovedTransaction
                | SessionState::Expired
                | SessionState::Cancelled
                | SessionState::Voided
        )
    }

    /// True for the outcomes the spec names for merchants polling: Successful, Failed,
    /// ApprovedTransaction.
    pub fn is_payment_outcome(self) -> bool {
        matches!(
            self,
            SessionState::Successful | SessionState::Failed | SessionState::ApprovedTransaction
        )
    }

    /// True when a session in this state keeps its merchant reference taken: every state but
    /// Expired (spec 7.4.1: in-flight or completed sessions hold it).
    pub fn holds_reference(self) -> bool {
        self != SessionState::Expired
    }
}

impl fmt::Display for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
