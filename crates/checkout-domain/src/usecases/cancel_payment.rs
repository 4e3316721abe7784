//! Use case: the payer cancels an integrated checkout (the page's back button).

use super::{Checkout, PaymentOutcome, PaymentResult};
use crate::error::{CheckoutError, SvcCode};
use crate::session::{SessionEvent, SessionKind, SessionState};

impl Checkout {
    /// Cancels the checkout session `id` if it is Pending or awaiting a challenge; the session's
    /// redirect then goes to `callbackBackUrl` (or `callbackFailUrl` when none was given).
    /// Payment links cannot be cancelled by the payer (SVC_002): the merchant may still
    /// expect them to be paid.
    pub async fn cancel_payment(&self, id: &str) -> Result<PaymentOutcome, CheckoutError> {
        let Some(session) = self.find(id).await? else {
            return Err(CheckoutError::svc(SvcCode::Svc002));
        };
        if !matches!(session.kind, SessionKind::IntegratedCheckout(_)) {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc002,
                "Payment links cannot be cancelled from the payment page.",
            ));
        }
        let from = session.state;
        if !matches!(
            from,
            SessionState::Pending | SessionState::ChallengeRequired
        ) {
            return Ok(PaymentOutcome {
                session,
                result: PaymentResult::AlreadyHandled,
            });
        }
        let to = from.apply(SessionEvent::PayerCancelled)?;
        let moved = self
            .ports
            .sessions
            .transition(session.id, from, to, self.now())
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
}
