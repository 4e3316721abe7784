//! Use case: the merchant captures an authorisation held without capture
//! (`POST /pay/api/payment/{id}/capture`, optionally under an `Idempotency-Key`), the whole
//! amount or less, once.

use rust_decimal::Decimal;

use super::hold_actions::{capture_amount, ActionDone};
use super::idempotent_create::as_it_stands;
use super::{Checkout, IdempotentAnswer, IdempotentRequest};
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode};
use crate::ports::SavedResponse;
use crate::session::{HoldActionKind, PaymentSession};
use crate::values::{IdempotencyKey, SessionId};

impl Checkout {
    /// Captures `amount` (the whole authorised amount when `None`) of the caller's session
    /// `id`, which must be ApprovedTransaction; returns the session, Successful, with the
    /// captured amount asked.
    ///
    /// The capture is recorded before the processor is asked, with a key of its own; the
    /// session moves only when the processor confirmed. Of two different captures (or a
    /// capture and a void) at once, one is recorded and the other is told what holds the
    /// authorisation. Errors: SVC_007 (not the caller's), 400 naming `Amount`, SVC_008 (not
    /// ApprovedTransaction, or another capture or void holds it), SVC_011 (above the
    /// authorised amount), SVC_004 (the processor refused: nothing captured), SVC_003 (the
    /// processor's answer was lost: the capture stays pending, is checked again
    /// automatically, and the same request sent again answers it as it stands).
    pub async fn capture_payment(
        &self,
        caller: &Claims,
        id: SessionId,
        amount: Option<Decimal>,
    ) -> Result<PaymentSession, CheckoutError> {
        self.capture_under(caller, id, amount, None).await?.answer()
    }

    /// [`Checkout::capture_payment`] under an `Idempotency-Key`: the key names one capture of
    /// the session for good; a settled answer is replayed, an unsettled one is not kept, so a
    /// retry answers the capture as it stands.
    pub async fn capture_payment_once<R>(
        &self,
        caller: &Claims,
        id: SessionId,
        amount: Option<Decimal>,
        once: &IdempotentRequest,
        render: R,
    ) -> Result<IdempotentAnswer, CheckoutError>
    where
        R: FnOnce(&Result<PaymentSession, CheckoutError>) -> SavedResponse,
    {
        let capture = async {
            as_it_stands(
                self.capture_under(caller, id, amount, Some(&once.key))
                    .await,
            )
        };
        self.run_once(caller, once, capture, render).await
    }

    async fn capture_under(
        &self,
        caller: &Claims,
        id: SessionId,
        amount: Option<Decimal>,
        key: Option<&IdempotencyKey>,
    ) -> Result<ActionDone, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        let amount = capture_amount(self, &session, amount)?;
        if amount.value() > session.amount().value() {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc011,
                format!(
                    "The amount to capture is above the authorised amount {}.",
                    session.amount().value()
                ),
            ));
        }
        self.act_on_hold(id, HoldActionKind::Capture, amount, key)
            .await
    }
}
