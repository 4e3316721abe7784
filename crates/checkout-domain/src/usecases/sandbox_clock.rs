//! Use cases of the sandbox's developer routes: what otherwise waits for the clock, done now
//! for one of the caller's sessions (the adapters decide that they run in a sandbox only).

use super::cancel_payment::not_reversible;
use super::{Checkout, PaymentResult};
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode};
use crate::session::{PaymentSession, SessionEvent, SessionState};
use crate::values::SessionId;

impl Checkout {
    /// Expires one of the caller's sessions now, as its expiry passing would: a Pending
    /// session becomes Expired (`payment.expired`); a session waiting for a challenge has its
    /// authorisation cancelled at the processor first and becomes Expired only when the
    /// processor confirms (if it says the payment went through, that is recorded instead).
    /// Returns the session as it then stands. An Expired session is returned as it is.
    ///
    /// Errors: SVC_007 for an unknown id or another terminal's session; SVC_008 for a session
    /// that is paid, finished or being processed (nothing changes); SVC_003 when the processor
    /// could not confirm the cancel of a challenge's authorisation (nothing changes).
    pub async fn expire_now(
        &self,
        caller: &Claims,
        id: SessionId,
    ) -> Result<PaymentSession, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        match session.state() {
            SessionState::Expired => Ok(session),
            SessionState::Pending => {
                let to = session.state().apply(SessionEvent::ExpiryPassed)?;
                let now = self.now();
                if self
                    .ports
                    .sessions
                    .transition(id, session.state(), to, now)
                    .await?
                {
                    self.reload(id).await
                } else {
                    // Something else moved it first (a card post, a cancel): it is left so.
                    Err(not_reversible(&self.reload(id).await?, "expired"))
                }
            }
            SessionState::ChallengeRequired => {
                let outcome = self
                    .end_challenge(session, SessionEvent::ExpiryPassed)
                    .await?;
                match outcome.result {
                    PaymentResult::Unresolved => Err(CheckoutError::svc_with(
                        SvcCode::Svc003,
                        "The processor could not confirm that the challenge's authorisation is \
                         cancelled; nothing changed. Retry.",
                    )),
                    _ => self.reload(id).await,
                }
            }
            _ => Err(not_reversible(&session, "expired")),
        }
    }

    /// Settles now what the reconciliation sweep would settle later for one of the caller's
    /// sessions: its current card attempt, when its answer is not known yet (a lost answer,
    /// a challenge finished at the processor), is asked about at once and the answer
    /// recorded, by the same compare-and-set as the sweep; then a passed expiry is written.
    /// Returns the session as it then stands (unchanged when nothing was waiting).
    ///
    /// Errors: SVC_007 for an unknown id or another terminal's session.
    pub async fn settle_now(
        &self,
        caller: &Claims,
        id: SessionId,
    ) -> Result<PaymentSession, CheckoutError> {
        let session = self.payment_status(caller, id).await?;
        if session.current_attempt().is_some()
            && matches!(
                session.state(),
                SessionState::Processing | SessionState::ChallengeRequired
            )
        {
            let attempt = self.current_attempt(&session).await?;
            if !attempt.state.is_final() {
                self.resolve(&attempt).await?;
            }
        }
        self.payment_status(caller, id).await
    }
}
