//! Use case: settle a session whose processor answer was lost.

use super::{Checkout, PaymentOutcome, PaymentResult};
use crate::error::{CheckoutError, SvcCode};
use crate::session::{AttemptOutcome, SessionState};

impl Checkout {
    /// Looks up, through its idempotency key, the latest attempt of a session left in
    /// Processing with an unresolved or unanswered attempt, and records what the processor
    /// says: the charge's outcome, or, when it holds none, the session is Pending again.
    /// Sessions in any other state get [`PaymentResult::AlreadyHandled`].
    pub async fn reconcile(&self, id: &str) -> Result<PaymentOutcome, CheckoutError> {
        let Some(session) = self.find(id).await? else {
            return Err(CheckoutError::svc(SvcCode::Svc002));
        };
        let attempt = match self.ports.sessions.latest_attempt(session.id).await? {
            Some(a)
                if session.state == SessionState::Processing
                    && matches!(a.outcome, AttemptOutcome::Sent | AttemptOutcome::Unresolved) =>
            {
                a
            }
            _ => {
                return Ok(PaymentOutcome {
                    session,
                    result: PaymentResult::AlreadyHandled,
                })
            }
        };
        match self.ports.processor.lookup(attempt.id).await {
            Ok(Some(outcome)) => self.record_outcome(attempt, outcome).await,
            Ok(None) => {
                self.void_attempt(attempt, AttemptOutcome::Voided, SvcCode::Svc003)
                    .await
            }
            Err(_) => Ok(PaymentOutcome {
                session,
                result: PaymentResult::Unresolved,
            }),
        }
    }
}
