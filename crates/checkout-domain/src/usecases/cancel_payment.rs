//! Use cases: the payer cancels an integrated checkout (the page's back button), and the
//! merchant withdraws a session that has not been paid (`POST /pay/api/payment/{id}/cancel`).
//! Both end the session by the same rules.
//!
//! A merchant's cancel of a session in any other state is SVC_008 naming the state: "Payment
//! not in reversible state" is the spec's one code for "this payment's state does not allow
//! the action", and none of SVC_001..SVC_007 is about a state.

use super::idempotent_create::Finality;
use super::{Checkout, IdempotentAnswer, IdempotentRequest, PaymentOutcome, PaymentResult};
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode};
use crate::ports::SavedResponse;
use crate::session::{PaymentSession, SessionEvent, SessionKind, SessionState};
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
        if !matches!(session.kind(), SessionKind::IntegratedCheckout(_)) {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc002,
                "Payment links cannot be cancelled from the payment page.",
            ));
        }
        self.cancel_unpaid(session).await
    }

    /// POST /pay/api/payment/{checkoutSessionId}/cancel: the merchant withdraws one of its
    /// sessions (a link or a checkout) that has not been paid, by the same rules as the
    /// payer's cancel; returns the session, Cancelled.
    ///
    /// Errors: SVC_007 for an unknown id or another terminal's session; SVC_008 when the
    /// session is not Pending or waiting for a challenge (paid, failed, expired, cancelled,
    /// or a card being processed), and nothing changes; SVC_003 when the processor could not
    /// confirm the cancel of a challenge's authorisation, and nothing changes.
    pub async fn withdraw_payment(
        &self,
        caller: &Claims,
        id: SessionId,
    ) -> Result<PaymentSession, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        let outcome = self.cancel_unpaid(session).await?;
        match outcome.result {
            // Read again: the challenge's attempt was cancelled too, and the record lists it.
            PaymentResult::Cancelled => self.reload(id).await,
            PaymentResult::Unresolved => Err(CheckoutError::svc_with(
                SvcCode::Svc003,
                "The processor could not confirm that the payer's authorisation is cancelled; \
                 nothing changed. Retry the cancel.",
            )),
            _ => Err(not_reversible(&outcome.session, "cancelled")),
        }
    }

    /// [`Checkout::withdraw_payment`] under an `Idempotency-Key`: a cancel done (or refused
    /// for the session's state) is replayed for the key's window; one the processor could not
    /// confirm (SVC_003) is not kept, so a retry asks again.
    pub async fn withdraw_payment_once<R>(
        &self,
        caller: &Claims,
        id: SessionId,
        once: &IdempotentRequest,
        render: R,
    ) -> Result<IdempotentAnswer, CheckoutError>
    where
        R: FnOnce(&Result<PaymentSession, CheckoutError>) -> SavedResponse,
    {
        let cancel = async {
            let result = self.withdraw_payment(caller, id).await;
            let finality = match &result {
                Err(e) if e.svc_code() == Some(SvcCode::Svc003) => Finality::Unsettled,
                _ => Finality::Final,
            };
            (result, finality)
        };
        self.run_once(caller, once, cancel, render).await
    }

    /// Ends `session` as Cancelled if it is Pending or awaiting a challenge (the
    /// authorisation cancelled at the processor first); any other state is left as it is
    /// ([`PaymentResult::AlreadyHandled`]).
    async fn cancel_unpaid(
        &self,
        session: PaymentSession,
    ) -> Result<PaymentOutcome, CheckoutError> {
        match session.state() {
            SessionState::Pending => {
                let to = session.state().apply(SessionEvent::PayerCancelled)?;
                let moved = self
                    .ports
                    .sessions
                    .transition(session.id(), session.state(), to, self.now())
                    .await?;
                Ok(PaymentOutcome {
                    session: self.reload(session.id()).await?,
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

/// SVC_008 for a session whose state does not allow what the merchant asked (`what`: "cancelled",
/// "captured", ...), naming the state.
pub(super) fn not_reversible(session: &PaymentSession, what: &str) -> CheckoutError {
    CheckoutError::svc_with(
        SvcCode::Svc008,
        format!(
            "The payment is {} (state code {}) and cannot be {what}; nothing changed.",
            session.state().name(),
            session.state().code()
        ),
    )
}
