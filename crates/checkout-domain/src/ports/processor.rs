//! The external card processor.

use async_trait::async_trait;

use crate::card::CardDetails;
use crate::values::{Amount, AttemptId, InternalReference, SessionId};

/// One authorisation to ask for.
#[derive(Debug)]
pub struct AuthorizationRequest<'a> {
    /// The attempt; its id is the idempotency key.
    pub attempt: AttemptId,
    /// The session paid.
    pub session: SessionId,
    /// The service's reference, for the processor's records.
    pub internal_reference: &'a InternalReference,
    /// How much.
    pub amount: Amount,
    /// The card. Passed through, never stored or logged.
    pub card: &'a CardDetails,
    /// Where the processor sends the payer back after a challenge it hosts.
    pub return_url: &'a str,
}

/// What the processor answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessorOutcome {
    /// Authorised; `captured` tells whether the funds were captured too.
    Approved {
        /// The processor's reference.
        processor_reference: String,
        /// True when captured (Successful), false when only authorised (ApprovedTransaction).
        captured: bool,
    },
    /// Declined.
    Declined {
        /// The processor's reference, when it made one.
        processor_reference: Option<String>,
        /// The decline reason, safe to show (no card data).
        reason: String,
    },
    /// A 3DS challenge is needed.
    ChallengeRequired {
        /// The processor's reference, needed to complete the challenge.
        processor_reference: String,
        /// Where the payer takes the challenge when the processor hosts it; `None` when the
        /// service shows its own challenge page (the sandbox).
        challenge_url: Option<String>,
    },
}

/// What the payer did on the challenge page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChallengeAnswer {
    /// Authenticated.
    Passed,
    /// Failed or refused to authenticate.
    Failed,
    /// Came back from a challenge the processor hosted; the processor knows the result.
    Returned,
}

/// A processor failure, mapped to SVC_003 or SVC_004.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessorError {
    /// Timeout, connection failure or a 5xx: nothing is known about a charge (SVC_003).
    #[error("card processor unreachable: {0}")]
    Communication(String),
    /// The processor refused the request itself; nothing was charged (SVC_004).
    #[error("card processor refused the request: {0}")]
    Controlled(String),
}

/// Authorises card payments.
#[async_trait]
pub trait CardProcessor: Send + Sync {
    /// Asks for an authorisation.
    ///
    /// MUST send `request.attempt`'s idempotency key so that a repeated call for the same
    /// attempt never charges twice; MUST time out (a timeout is `Communication`); MUST NOT
    /// log or keep the card number, expiry or CVV.
    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError>;

    /// Completes a 3DS challenge for the authorisation `processor_reference`.
    ///
    /// MUST answer `Approved` or `Declined` (never `ChallengeRequired` again).
    async fn complete_challenge(
        &self,
        processor_reference: &str,
        answer: ChallengeAnswer,
    ) -> Result<ProcessorOutcome, ProcessorError>;

    /// Finds what became of the attempt `attempt` after its answer was lost.
    ///
    /// MUST return `Ok(None)` only when the processor certainly holds no charge for it.
    async fn lookup(&self, attempt: AttemptId) -> Result<Option<ProcessorOutcome>, ProcessorError>;
}
