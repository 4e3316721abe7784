//! Use case: the merchant voids an authorisation held without capture
//! (`POST /pay/api/payment/{id}/void`), releasing the payer's funds.

use super::cancel_payment::not_reversible;
use super::Checkout;
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode};
use crate::ports::ProcessorOutcome;
use crate::session::{PaymentSession, SessionEvent, SessionState};
use crate::values::SessionId;

impl Checkout {
    /// Voids the authorisation of the caller's session `id` (ApprovedTransaction); returns the
    /// session, Voided.
    ///
    /// The authorisation is cancelled at the processor first; the session moves only when
    /// the processor confirmed. Errors: SVC_007 (not the caller's), SVC_011 (the payment is
    /// captured, at the service or at the processor: a settled transaction is refunded, not
    /// voided), SVC_008 (any other state), SVC_009 (the processor refused or its answer was
    /// lost: nothing changed).
    pub async fn void_payment(
        &self,
        caller: &Claims,
        id: SessionId,
    ) -> Result<PaymentSession, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        match session.state {
            SessionState::ApprovedTransaction => {}
            SessionState::Successful => return Err(settled()),
            _ => return Err(not_reversible(&session, "voided")),
        }
        let (_, reference) = self.processor_reference(&session).await?;
        match self.ports.processor.cancel(&reference).await {
            Ok(ProcessorOutcome::Canceled { .. }) => {
                let to = session.state.apply(SessionEvent::MerchantVoided)?;
                self.ports
                    .sessions
                    .transition(session.id, session.state, to, self.now())
                    .await?;
                let now = self.reload(session.id).await?;
                if now.state == SessionState::Voided {
                    Ok(now)
                } else {
                    Err(not_reversible(&now, "voided"))
                }
            }
            Ok(ProcessorOutcome::Approved { captured: true, .. }) => Err(settled()),
            Ok(_) | Err(_) => Err(CheckoutError::svc_with(
                SvcCode::Svc009,
                "The processor did not confirm the void; nothing changed. Retry the void.",
            )),
        }
    }
}

/// SVC_011 for a void of a captured payment.
fn settled() -> CheckoutError {
    CheckoutError::svc_with(
        SvcCode::Svc011,
        "The payment is captured (settled) and cannot be voided; refund it instead.",
    )
}
