//! Use case: the merchant reads a session's state.

use super::Checkout;
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode};
use crate::session::PaymentSession;

impl Checkout {
    /// GET /pay/api/payment/{checkoutSessionId}: the session, if it belongs to the caller's
    /// terminal. Unknown ids and other terminals' sessions are both SVC_007 (404), so that
    /// nobody learns which ids exist. An expiry that has passed is written first.
    pub async fn payment_status(
        &self,
        caller: &Claims,
        id: &str,
    ) -> Result<PaymentSession, CheckoutError> {
        match self.find(id).await? {
            Some(session) if session.terminal == caller.terminal => {
                self.settle_expiry(session).await
            }
            _ => Err(CheckoutError::svc(SvcCode::Svc007)),
        }
    }
}
