//! Use cases: the merchant refunds a captured payment, in part or whole
//! (`POST /pay/api/payment/{id}/refunds`, optionally under an `Idempotency-Key`), and lists its
//! refunds.
//!
//! Money rule: the refund is recorded (Sent) with its amount reserved against the captured
//! amount, under a lock of the session, before the processor is asked; the processor's answer
//! settles it. A refusal records nothing as refunded; a lost answer stays Unknown, its amount
//! reserved, is never reported as "not refunded", and is settled by the reconciliation sweep
//! (or by the merchant's retry under the same key), always with the refund's own processor
//! key. A merchant's key names one refund for good.

use rust_decimal::Decimal;

use super::cancel_payment::not_reversible;
use super::idempotent_create::{as_it_stands, AsItStands};
use super::{Checkout, IdempotentAnswer, IdempotentRequest};
use crate::auth::Claims;
use crate::error::{CheckoutError, IdempotencyConflict, SvcCode};
use crate::ports::{Reservation, SavedResponse};
use crate::session::{LedgerState, PaymentSession, Refund, SessionState};
use crate::values::{IdempotencyKey, SessionId};

/// A refund as it stands after a request: the session and the refund, in any state.
#[derive(Debug, Clone)]
pub struct RefundDone {
    /// The session, its refunded amount counting the refund once it succeeded.
    pub session: PaymentSession,
    /// The refund.
    pub refund: Refund,
}

impl RefundDone {
    /// The merchant's answer: the refund when it succeeded; SVC_009 when the processor
    /// refused it, or has not confirmed it yet (listed Unknown, its amount reserved).
    pub fn answer(self) -> Result<RefundDone, CheckoutError> {
        match self.refund.state {
            LedgerState::Succeeded => Ok(self),
            LedgerState::Failed => Err(CheckoutError::svc_with(SvcCode::Svc009, REFUSED_DETAIL)),
            LedgerState::Sent | LedgerState::Unknown => {
                Err(CheckoutError::svc_with(SvcCode::Svc009, UNKNOWN_DETAIL))
            }
        }
    }
}

impl AsItStands for RefundDone {
    type Answer = RefundDone;

    fn is_settled(&self) -> bool {
        self.refund.state.is_settled()
    }

    fn answer(self) -> Result<RefundDone, CheckoutError> {
        RefundDone::answer(self)
    }
}

impl Checkout {
    /// Refunds `amount` of the caller's captured session `id`.
    ///
    /// Errors: SVC_007 (not the caller's), 400 naming `Amount` (missing, or not a valid
    /// amount of the session's currency), SVC_008 (nothing captured: the session is not
    /// Successful), SVC_011 (above what can still be refunded: the captured amount less every
    /// refund not Failed), SVC_009 (the processor refused: nothing refunded; or it has not
    /// confirmed: the refund is kept Unknown, its amount reserved, and not counted as
    /// refunded until the reconciliation sweep learns the outcome).
    pub async fn refund_payment(
        &self,
        caller: &Claims,
        id: SessionId,
        amount: Option<Decimal>,
    ) -> Result<RefundDone, CheckoutError> {
        self.refund_under(caller, id, amount, None).await?.answer()
    }

    /// [`Checkout::refund_payment`] under an `Idempotency-Key` of the caller's terminal.
    ///
    /// The key names one refund of the session for good: a retry, whatever became of the
    /// first request (a crash, a lost answer, a lapsed claim), asks the processor about that
    /// same refund with its own key and never makes a second one. A settled answer is kept
    /// and replayed for the key's window; an unsettled one is not kept, so that a retry
    /// answers the refund as it stands then.
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
        let refund =
            async { as_it_stands(self.refund_under(caller, id, amount, Some(&once.key)).await) };
        self.run_once(caller, once, refund, render).await
    }

    /// The refund `amount` of session `id` under `key`: the one the key already names, or a
    /// new one; asked at the processor unless settled.
    async fn refund_under(
        &self,
        caller: &Claims,
        id: SessionId,
        amount: Option<Decimal>,
        key: Option<&IdempotencyKey>,
    ) -> Result<RefundDone, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        let Some(value) = amount else {
            let mut errors = crate::ValidationErrors::new();
            errors.add("Amount", "The Amount field is required.");
            return Err(errors.into());
        };
        let amount = self.amount_of(&session, value)?;
        if session.state() != SessionState::Successful {
            return Err(not_reversible(&session, "refunded"));
        }
        let now = self.now();
        let fresh = Refund {
            id: self.ports.ids.refund_id(),
            session_id: session.id(),
            amount: amount.value(),
            state: LedgerState::Sent,
            processor_reference: None,
            svc_code: None,
            key: key.cloned(),
            next_check_at: Some(now + self.policy.reconcile.first_check_after),
            created_at: now,
            updated_at: now,
        };
        let refund = match self.ports.reversals.reserve_refund(&fresh).await? {
            Reservation::Reserved => fresh,
            Reservation::Existing(stored) if stored.amount != fresh.amount => {
                return Err(IdempotencyConflict::KeyReused.into())
            }
            Reservation::Existing(stored) => stored,
            Reservation::NotCaptured(_) => {
                return Err(not_reversible(&self.reload(id).await?, "refunded"))
            }
            Reservation::Exceeds { mut refundable } => {
                refundable.rescale(session.amount().currency().minor_units());
                return Err(CheckoutError::svc_with(
                    SvcCode::Svc011,
                    format!(
                        "The amount is above what can still be refunded ({refundable} {}).",
                        session.amount().currency().code()
                    ),
                ));
            }
        };
        let refund = if refund.state.is_settled() {
            refund
        } else {
            self.drive_refund(&session, refund, true).await?
        };
        Ok(RefundDone {
            session: self.reload(id).await?,
            refund,
        })
    }

    /// GET /pay/api/payment/{checkoutSessionId}/refunds: the caller's session and its
    /// refunds, oldest first (SVC_007 when it is not the caller's).
    pub async fn payment_refunds(
        &self,
        caller: &Claims,
        id: SessionId,
    ) -> Result<(PaymentSession, Vec<Refund>), CheckoutError> {
        // The session and its refunds are two reads: a refund settled between them would
        // show it Succeeded beside a `refundedAmount` that does not count it yet. Every
        // change of a refund that changes what was refunded changes the session's money in
        // the same transaction, so the pair is consistent when the session's money is the
        // same on both sides of the refunds' read.
        let mut session = self.payment_status(caller, id).await?;
        for _ in 0..CONSISTENT_READ_TRIES {
            let refunds = self.ports.reversals.refunds(id).await?;
            let after = self.payment_status(caller, id).await?;
            if after.money() == session.money() {
                return Ok((after, refunds));
            }
            session = after;
        }
        // Still moving after several tries: the refunds as read last, beside the session
        // read after them (their money is never behind the refunds').
        let refunds = self.ports.reversals.refunds(id).await?;
        let session = self.payment_status(caller, id).await?;
        Ok((session, refunds))
    }
}

/// How many times the refund list is read again while a refund settles under it.
const CONSISTENT_READ_TRIES: usize = 3;

/// The detail of an SVC_009 for a refund the processor refused.
const REFUSED_DETAIL: &str = "The processor refused the refund; nothing was refunded.";
/// The detail of an SVC_009 for a refund whose outcome is not known.
const UNKNOWN_DETAIL: &str = "The processor has not confirmed the refund (its answer was lost or \
     is pending): it is listed as Unknown, its amount stays reserved, and it is not counted as \
     refunded until the processor confirms it. It is checked again automatically; a retry with \
     the same Idempotency-Key answers it as it stands and never refunds twice.";
