//! Use case: the merchant captures an authorisation held without capture
//! (`POST /pay/api/payment/{id}/capture`), the whole amount or less, once.

use rust_decimal::Decimal;

use super::cancel_payment::not_reversible;
use super::Checkout;
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode};
use crate::ports::{CaptureRequest, ProcessorError};
use crate::session::{PaymentSession, SessionState};
use crate::values::SessionId;

impl Checkout {
    /// Captures `amount` (the whole authorised amount when `None`) of the caller's session
    /// `id`, which must be ApprovedTransaction; returns the session, Successful, with its
    /// captured amount.
    ///
    /// The processor is asked first, with an idempotency key derived from the authorised
    /// attempt (a retry is the same request); the session moves only when the processor
    /// confirmed. Errors: SVC_007 (not the caller's), 400 naming `Amount` (not a valid
    /// amount of the session's currency), SVC_008 (not ApprovedTransaction: nothing to
    /// capture, or already captured), SVC_011 (above the authorised amount), SVC_004 (the
    /// processor refused: nothing captured), SVC_003 (the processor's answer was lost: send
    /// the same request again).
    pub async fn capture_payment(
        &self,
        caller: &Claims,
        id: SessionId,
        amount: Option<Decimal>,
    ) -> Result<PaymentSession, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        let amount = match amount {
            Some(value) => self.amount_of(&session, value)?,
            None => session.amount,
        };
        if session.state != SessionState::ApprovedTransaction {
            return Err(not_reversible(&session, "captured"));
        }
        if amount.value() > session.amount.value() {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc011,
                format!(
                    "The amount to capture is above the authorised amount {}.",
                    session.amount.value()
                ),
            ));
        }
        let (attempt, reference) = self.processor_reference(&session).await?;
        let captured = self
            .ports
            .processor
            .capture(CaptureRequest {
                attempt: attempt.id,
                processor_reference: &reference,
                amount,
            })
            .await
            .map_err(|e| match e {
                ProcessorError::Controlled(_) => CheckoutError::svc_with(
                    SvcCode::Svc004,
                    "The processor refused the capture; nothing was captured.",
                ),
                ProcessorError::Communication(_) => CheckoutError::svc_with(
                    SvcCode::Svc003,
                    "The processor's answer to the capture was lost; nothing is recorded as \
                     captured. Send the same request again: the processor recognises it.",
                ),
            })?;
        self.ports
            .sessions
            .record_capture(session.id, captured, self.now())
            .await?;
        let now = self.reload(session.id).await?;
        if now.state == SessionState::Successful {
            Ok(now)
        } else {
            Err(not_reversible(&now, "captured"))
        }
    }
}
