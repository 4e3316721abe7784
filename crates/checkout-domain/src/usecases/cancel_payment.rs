//! Use case: the payer cancels an integrated checkout (the page's back button).

use super::{Checkout, PaymentOutcome, PaymentResult};
use crate::error::{CheckoutError, SvcCode};
use crate::session::{SessionEvent, SessionKind, SessionState};
use crate::values::SessionId;

impl Checkout {
    /// Cancels the checkout session `id` if it is Pending or awaiting a challenge; the session's
    /// redirect then goes to `callbackBackUrl` (or `callbackFailUrl` when none was given).
    ///
    /// A session waiting for a challenge has its authorisation cancelled at the processor
    /// first: it ends Cancelled only when the processor confirmed, and if the processor says
    /// the challenge already went through, that is recorded and shown instead. When the
    /// processor cannot be reached nothing changes ([`PaymentResult::Unresolved`]). Payment
    /// links cannot be cancelled by the payer (SVC_002): the merchant may still expect them to
    /// be paid.
    pub async fn cancel_payment(&self, id: SessionId) -> Result<PaymentOutcome, CheckoutError> {
        let session = self.load(id).await?;
        if !matches!(session.kind, SessionKind::IntegratedCheckout(_)) {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc002,
                "Payment links cannot be cancelled from the payment page.",
            ));
        }
        match session.state {
            SessionState::Pending => {
                let to = session.state.apply(SessionEvent::PayerCancelled)?;
                let moved = self
                    .ports
                    .sessions
                    .transition(session.id, session.state, to, self.now())
                    .await?;
                Ok(PaymentOutcome {
                    session: self.reload(session.id).await?,
                    result: if moved {
                        PaymentResult::Cancelled
                    } else {
                        PaymentResult::AlreadyHandled
                    },
                })
            }
            SessionState::ChallengeRequired => {
                self.end_challenge(session, SessionEvent::PayerCancelled)
                    .await
            }
            _ => Ok(PaymentOutcome {
                session,
                result: PaymentResult::AlreadyHandled,
            }),
        }
    }
}
