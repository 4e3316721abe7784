//! The external card processor.
//!
//! Money moves exactly once: every authorisation carries its attempt's idempotency key, and an
//! answer that was lost is recovered by sending the same request again with the same key,
//! never by searching or listing. "Nothing was charged" is a claim an implementation makes only
//! when the processor said so.

use async_trait::async_trait;

use rust_decimal::Decimal;

use crate::card::CardDetails;
use crate::session::DisputeStatus;
use crate::terminal::CaptureMethod;
use crate::values::{ActionId, Amount, AttemptId, InternalReference, RefundId, SessionId};

/// One authorisation to ask for, or to replay: the same request, field for field, every time
/// it is sent for one attempt.
#[derive(Debug, Clone, Copy)]
pub struct AuthorizationRequest<'a> {
    /// The attempt; its id is the idempotency key.
    pub attempt: AttemptId,
    /// The session paid.
    pub session: SessionId,
    /// The service's reference, for the processor's records.
    pub internal_reference: &'a InternalReference,
    /// How much.
    pub amount: Amount,
    /// The processor's payment-method reference from [`CardProcessor::tokenize`].
    pub payment_method: &'a str,
    /// Where the processor sends the payer back after a challenge it hosts.
    pub return_url: &'a str,
    /// Capture with the authorisation, or hold it (`Approved { captured: false }`).
    pub capture: CaptureMethod,
}

/// What the processor holds for an authorisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessorOutcome {
    /// Authorised; `captured` tells whether the funds were captured too.
    Approved {
        /// The processor's reference.
        processor_reference: String,
        /// True when captured (Successful), false when only authorised (ApprovedTransaction).
        captured: bool,
    },
    /// Declined: nothing charged.
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
    /// Cancelled at the processor, which confirmed it: nothing charged.
    Canceled {
        /// The processor's reference.
        processor_reference: String,
    },
}

impl ProcessorOutcome {
    /// The processor's reference the outcome carries, when it has one.
    pub fn processor_reference(&self) -> Option<&str> {
        match self {
            ProcessorOutcome::Approved {
                processor_reference,
                ..
            }
            | ProcessorOutcome::ChallengeRequired {
                processor_reference,
                ..
            }
            | ProcessorOutcome::Canceled {
                processor_reference,
            } => Some(processor_reference),
            ProcessorOutcome::Declined {
                processor_reference,
                ..
            } => processor_reference.as_deref(),
        }
    }
}

/// A capture of an authorisation that was not captured: the same request, field for field,
/// every time it is sent.
#[derive(Debug, Clone, Copy)]
pub struct CaptureRequest<'a> {
    /// The capture's ledger row; its id derives the idempotency key, so that every send of
    /// one capture (a retry, another instance, the reconciliation sweep) is the same request.
    pub action: ActionId,
    /// The processor's reference of the authorisation.
    pub processor_reference: &'a str,
    /// How much to capture: at most the authorised amount.
    pub amount: Amount,
}

/// A refund of captured money: the same request, field for field, every time it is sent for
/// one refund.
#[derive(Debug, Clone, Copy)]
pub struct RefundRequest<'a> {
    /// The refund; its id is the idempotency key.
    pub refund: RefundId,
    /// The processor's reference of the captured payment.
    pub processor_reference: &'a str,
    /// How much to refund.
    pub amount: Amount,
}

/// What the processor says of a refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundOutcome {
    /// The money was returned.
    Succeeded {
        /// The processor's refund reference.
        refund_reference: String,
    },
    /// Accepted, not final yet: the money may or may not be returned.
    Pending {
        /// The processor's refund reference.
        refund_reference: String,
    },
    /// The processor failed the refund: nothing was returned.
    Failed {
        /// The processor's refund reference, when it made one.
        refund_reference: Option<String>,
        /// Why, safe to show (no card data).
        reason: String,
    },
}

/// What the processor says of a dispute (chargeback) on a captured payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisputeReport {
    /// The processor's dispute reference.
    pub reference: String,
    /// The processor's reference of the disputed payment (the authorisation's).
    pub payment_reference: String,
    /// The disputed amount, in major units of the payment's currency.
    pub amount: Decimal,
    /// The bank's reason, as the processor names it.
    pub reason: String,
    /// Where it stands.
    pub status: DisputeStatus,
}

/// A processor failure, mapped to SVC_003 or SVC_004.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessorError {
    /// Timeout, connection failure, 5xx, a concurrent request with the same key, or an
    /// unreadable answer: nothing is known about what the processor did (SVC_003).
    #[error("card processor unreachable: {0}")]
    Communication(String),
    /// The processor refused the request itself (SVC_004). For `tokenize` and `authorize`
    /// this means nothing was done and nothing charged; for the other calls it means only that
    /// the call changed nothing.
    #[error("card processor refused the request: {0}")]
    Controlled(String),
}

/// Authorises card payments.
#[async_trait]
pub trait CardProcessor: Send + Sync {
    /// Turns the card into the processor's payment-method reference, for
    /// [`AuthorizationRequest::payment_method`].
    ///
    /// MUST charge nothing and hold nothing that can be charged without a later
    /// [`authorize`](Self::authorize); MUST NOT log or keep the card number, expiry or CVV
    /// (the reference it returns is the processor's, never card data); MUST time out.
    async fn tokenize(
        &self,
        attempt: AttemptId,
        card: &CardDetails,
    ) -> Result<String, ProcessorError>;

    /// Asks for an authorisation, or replays one.
    ///
    /// MUST send `request.attempt`'s idempotency key, so that sending the same request again
    /// never charges twice: a replay MUST return what the first request did (the same
    /// outcome), or `Communication` while the first is still running. MUST time out (a
    /// timeout is `Communication`). MUST return `Controlled` only when the processor refused
    /// the request and certainly holds no charge for it; any doubt is `Communication`.
    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError>;

    /// What the processor holds now for the authorisation `processor_reference`.
    ///
    /// MUST change nothing at the processor, and MUST report what it holds now (a read that is
    /// never behind the processor's own writes: a retrieve, never a list or a search).
    /// `ChallengeRequired` means the payer has not finished the challenge yet.
    async fn retrieve(&self, processor_reference: &str)
        -> Result<ProcessorOutcome, ProcessorError>;

    /// The payer's answer on a challenge page the service hosts itself (the sandbox).
    ///
    /// MUST answer what the authorisation holds after the answer (`Approved` or `Declined`;
    /// `ChallengeRequired` only if the processor still waits for the payer), or what it
    /// already held if it was no longer waiting for a challenge. A processor whose challenges it hosts itself MAY answer
    /// `Controlled`; the caller then reads the authorisation with
    /// [`retrieve`](Self::retrieve) and never assumes nothing was charged.
    async fn answer_challenge(
        &self,
        processor_reference: &str,
        passed: bool,
    ) -> Result<ProcessorOutcome, ProcessorError>;

    /// Cancels the authorisation `processor_reference` unless it holds a capture.
    ///
    /// MUST answer `Canceled` only when the processor confirmed the cancel (or it was
    /// cancelled before); when the authorisation had already succeeded or failed, MUST answer
    /// what it holds (`Approved`, `Declined`) instead of cancelling. MUST be idempotent.
    ///
    /// This is also the merchant's void of an authorisation held without capture
    /// (`Approved { captured: false }`): `Canceled` means the processor released it.
    async fn cancel(&self, processor_reference: &str) -> Result<ProcessorOutcome, ProcessorError>;

    /// Captures `request.amount` of an authorisation held without capture, and returns the
    /// amount the processor holds captured.
    ///
    /// MUST send an idempotency key derived from `request.action`, so that a replay of the
    /// same request never captures twice and returns what the first did. When the
    /// authorisation was already captured, MUST answer the amount captured rather than an
    /// error. MUST return `Controlled` only when the processor refused the capture and
    /// certainly captured nothing (an authorisation cancelled or expired, an amount above the
    /// authorised one); any doubt is `Communication`. MUST time out.
    async fn capture(&self, request: CaptureRequest<'_>) -> Result<Decimal, ProcessorError>;

    /// Refunds `request.amount` of a captured payment.
    ///
    /// MUST send `request.refund`'s idempotency key, so that sending the same request again
    /// never refunds twice and answers what the first did. MUST answer `Failed` or
    /// `Controlled` only when the processor said nothing was refunded; any doubt (a timeout,
    /// a 5xx, a concurrent request with the same key) is `Communication`. MUST time out.
    async fn refund(&self, request: RefundRequest<'_>) -> Result<RefundOutcome, ProcessorError>;

    /// What the processor holds now for the refund `refund_reference` (a reference a
    /// [`refund`](Self::refund) answer carried).
    ///
    /// MUST change nothing at the processor and MUST read the refund itself (a retrieve, never
    /// a list or a search). `Pending` while the processor has not finished it; `Failed` only
    /// when the processor says nothing was (or, after a later failure, remains) refunded.
    async fn refund_status(&self, refund_reference: &str) -> Result<RefundOutcome, ProcessorError>;

    /// What the processor holds now for the dispute `dispute_reference`.
    ///
    /// MUST change nothing at the processor and MUST read the dispute itself (a retrieve).
    /// A processor without disputes (the sandbox) answers `Controlled`.
    async fn dispute(&self, dispute_reference: &str) -> Result<DisputeReport, ProcessorError>;
}
