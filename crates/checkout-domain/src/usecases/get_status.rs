//! Use case: the merchant reads a session's state.

use super::Checkout;
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode};
use crate::session::{PaymentSession, SessionState};
use crate::values::SessionId;

impl Checkout {
    /// GET /pay/api/payment/{checkoutSessionId}: the session, if it belongs to the caller's
    /// terminal. Unknown ids and other terminals' sessions are both SVC_007 (404), so that
    /// nobody learns which ids exist. An expiry that has passed is written first (for a
    /// session waiting for a challenge, after the processor confirmed the cancel). A
    /// captured session comes with its disputes.
    ///
    /// The session's items and charges may be left empty: the status record shows neither,
    /// so only the session itself is read ([`SessionRepository::get_without_lines`]).
    ///
    /// [`SessionRepository::get_without_lines`]: crate::ports::SessionRepository::get_without_lines
    pub async fn payment_status(
        &self,
        caller: &Claims,
        id: SessionId,
    ) -> Result<PaymentSession, CheckoutError> {
        match self.ports.sessions.get_without_lines(id).await? {
            Some(session) if *session.terminal() == caller.terminal => {
                let mut session = self.settle_expiry(session).await?;
                if session.state() == SessionState::Successful {
                    // Only a captured payment can be disputed.
                    for dispute in self.ports.disputes.disputes(id).await? {
                        session.attach_dispute(dispute);
                    }
                }
                Ok(session)
            }
            _ => Err(CheckoutError::svc(SvcCode::Svc007)),
        }
    }
}
