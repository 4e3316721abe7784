//! Use case: the merchant voids an authorisation held without capture
//! (`POST /pay/api/payment/{id}/void`, optionally under an `Idempotency-Key`), releasing the
//! payer's funds.

use super::hold_actions::ActionDone;
use super::idempotent_create::as_it_stands;
use super::{Checkout, IdempotentAnswer, IdempotentRequest};
use crate::auth::Claims;
use crate::error::CheckoutError;
use crate::ports::SavedResponse;
use crate::session::{HoldActionKind, PaymentSession};
use crate::values::{IdempotencyKey, SessionId};

impl Checkout {
    /// Voids the authorisation of the caller's session `id` (ApprovedTransaction); returns the
    /// session, Voided.
    ///
    /// The void is recorded before the processor is asked; the session moves only when the
    /// processor confirmed. Errors: SVC_007 (not the caller's), SVC_011 (the payment is
    /// captured, at the service or at the processor: a settled transaction is refunded, not
    /// voided), SVC_008 (any other state, or a capture pending), SVC_009 (the processor
    /// refused, or did not confirm: the void stays pending and is checked again
    /// automatically).
    pub async fn void_payment(
        &self,
        caller: &Claims,
        id: SessionId,
    ) -> Result<PaymentSession, CheckoutError> {
        self.void_under(caller, id, None).await?.answer()
    }

    /// [`Checkout::void_payment`] under an `Idempotency-Key`, with the rules of
    /// [`Checkout::capture_payment_once`].
    pub async fn void_payment_once<R>(
        &self,
        caller: &Claims,
        id: SessionId,
        once: &IdempotentRequest,
        render: R,
    ) -> Result<IdempotentAnswer, CheckoutError>
    where
        R: FnOnce(&Result<PaymentSession, CheckoutError>) -> SavedResponse,
    {
        let void = async { as_it_stands(self.void_under(caller, id, Some(&once.key)).await) };
        self.run_once(caller, once, void, render).await
    }

    async fn void_under(
        &self,
        caller: &Claims,
        id: SessionId,
        key: Option<&IdempotencyKey>,
    ) -> Result<ActionDone, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        self.act_on_hold(id, HoldActionKind::Void, session.amount(), key)
            .await
    }
}
