//! Use cases: the merchant refunds a captured payment, in part or whole
//! (`POST /pay/api/payment/{id}/refunds`, optionally under an `Idempotency-Key`), and lists its
//! refunds.
//!
//! Money rule: the refund is recorded (Sent) with its amount reserved against the captured
//! amount, under a lock of the session, before the processor is asked; the processor's answer
//! settles it. A refusal records nothing as refunded; a lost answer stays Unknown, its amount
//! reserved, and is never reported as "not refunded".

use rust_decimal::Decimal;

use super::cancel_payment::not_reversible;
use super::{Checkout, IdempotentAnswer, IdempotentRequest};
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode};
use crate::ports::{ProcessorError, RefundOutcome, RefundRequest, Reservation, SavedResponse};
use crate::session::{PaymentSession, Refund, RefundState, SessionState};
use crate::values::SessionId;

/// A refund done: the session after it and the refund.
#[derive(Debug, Clone)]
pub struct RefundDone {
    /// The session, its refunded amount counting the refund.
    pub session: PaymentSession,
    /// The refund, Succeeded.
    pub refund: Refund,
}

impl Checkout {
    /// Refunds `amount` of the caller's captured session `id`.
    ///
    /// Errors: SVC_007 (not the caller's), 400 naming `Amount` (missing, or not a valid
    /// amount of the session's currency), SVC_008 (nothing captured: the session is not
    /// Successful), SVC_011 (above what can still be refunded: the captured amount less every
    /// refund not Failed), SVC_009 (the processor refused: nothing refunded; or its answer was
    /// lost: the refund is kept Unknown, its amount reserved, and not counted as refunded).
    pub async fn refund_payment(
        &self,
        caller: &Claims,
        id: SessionId,
        amount: Option<Decimal>,
    ) -> Result<RefundDone, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        let Some(value) = amount else {
            let mut errors = crate::ValidationErrors::new();
            errors.add("Amount", "The Amount field is required.");
            return Err(errors.into());
        };
        let amount = self.amount_of(&session, value)?;
        if session.state != SessionState::Successful {
            return Err(not_reversible(&session, "refunded"));
        }
        // Known before anything is reserved, so that no reservation is left behind by a
        // session without one.
        let (_, reference) = self.processor_reference(&session).await?;
        let now = self.now();
        let mut refund = Refund {
            id: self.ports.ids.refund_id(),
            session_id: session.id,
            amount: amount.value(),
            state: RefundState::Sent,
            processor_reference: None,
            svc_code: None,
            created_at: now,
            updated_at: now,
        };
        match self.ports.sessions.reserve_refund(&refund).await? {
            Reservation::Reserved => {}
            Reservation::NotCaptured(_) => {
                return Err(not_reversible(&self.reload(id).await?, "refunded"))
            }
            Reservation::Exceeds { mut refundable } => {
                refundable.rescale(session.amount.currency().minor_units());
                return Err(CheckoutError::svc_with(
                    SvcCode::Svc011,
                    format!(
                        "The amount is above what can still be refunded ({refundable} {}).",
                        session.amount.currency().code()
                    ),
                ));
            }
        }
        let request = RefundRequest {
            refund: refund.id,
            processor_reference: &reference,
            amount,
        };
        let mut answer = self.ports.processor.refund(request).await;
        if matches!(answer, Err(ProcessorError::Communication(_))) {
            // The same request again, with the same key: the processor answers what it did.
            answer = self.ports.processor.refund(request).await;
        }
        let (state, processor_reference, failure) = match answer {
            Ok(RefundOutcome::Succeeded { refund_reference }) => {
                (RefundState::Succeeded, Some(refund_reference), None)
            }
            Ok(RefundOutcome::Pending { refund_reference }) => (
                RefundState::Unknown,
                Some(refund_reference),
                Some(UNKNOWN_DETAIL),
            ),
            Ok(RefundOutcome::Failed {
                refund_reference, ..
            }) => (RefundState::Failed, refund_reference, Some(REFUSED_DETAIL)),
            Err(ProcessorError::Controlled(_)) => (RefundState::Failed, None, Some(REFUSED_DETAIL)),
            Err(ProcessorError::Communication(_)) => {
                (RefundState::Unknown, None, Some(UNKNOWN_DETAIL))
            }
        };
        refund.state = state;
        refund.processor_reference = processor_reference;
        refund.svc_code = failure.map(|_| SvcCode::Svc009);
        refund.updated_at = self.now();
        self.ports.sessions.settle_refund(&refund).await?;
        if let Some(detail) = failure {
            return Err(CheckoutError::svc_with(SvcCode::Svc009, detail));
        }
        Ok(RefundDone {
            session: self.reload(id).await?,
            refund,
        })
    }

    /// [`Checkout::refund_payment`] under an `Idempotency-Key` of the caller's terminal: at
    /// most once per key, a retry answered the first response (see
    /// [`Checkout::start_payment_once`]).
    pub async fn refund_payment_once<R>(
        &self,
        caller: &Claims,
        id: SessionId,
        amount: Option<Decimal>,
        once: &IdempotentRequest,
        render: R,
    ) -> Result<IdempotentAnswer, CheckoutError>
    where
        R: FnOnce(&Result<RefundDone, CheckoutError>) -> SavedResponse,
    {
        let refund = self.refund_payment(caller, id, amount);
        self.run_once(caller, once, refund, render).await
    }

    /// GET /pay/api/payment/{checkoutSessionId}/refunds: the caller's session and its
    /// refunds, oldest first (SVC_007 when it is not the caller's).
    pub async fn payment_refunds(
        &self,
        caller: &Claims,
        id: SessionId,
    ) -> Result<(PaymentSession, Vec<Refund>), CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        let refunds = self.ports.sessions.refunds(id).await?;
        Ok((session, refunds))
    }
}

/// The detail of an SVC_009 for a refund the processor refused.
const REFUSED_DETAIL: &str = "The processor refused the refund; nothing was refunded.";
/// The detail of an SVC_009 for a refund whose outcome is not known.
const UNKNOWN_DETAIL: &str = "The processor has not confirmed the refund (its answer was lost or \
     is pending): it is listed as Unknown, its amount stays reserved, and it is not counted as \
     refunded until the processor confirms it.";
