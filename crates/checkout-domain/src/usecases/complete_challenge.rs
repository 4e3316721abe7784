//! Use case: the payer answers a 3DS challenge.

use super::{Checkout, PaymentOutcome, PaymentResult};
use crate::error::{CheckoutError, SvcCode};
use crate::ports::ChallengeAnswer;
use crate::session::{AttemptOutcome, SessionEvent, SessionState};

impl Checkout {
    /// Completes the challenge of session `id` with the payer's `answer`. A session not waiting
    /// for a challenge gets [`PaymentResult::AlreadyHandled`]; an unknown one SVC_002.
    pub async fn complete_challenge(
        &self,
        id: &str,
        answer: ChallengeAnswer,
    ) -> Result<PaymentOutcome, CheckoutError> {
        let Some(session) = self.find(id).await? else {
            return Err(CheckoutError::svc(SvcCode::Svc002));
        };
        if session.state != SessionState::ChallengeRequired {
            return Ok(PaymentOutcome {
                session,
                result: PaymentResult::AlreadyHandled,
            });
        }
        let mut attempt = self
            .ports
            .sessions
            .latest_attempt(session.id)
            .await?
            .filter(|a| a.outcome == AttemptOutcome::ChallengeRequired)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "session {} awaits a challenge but has no challenge attempt",
                    session.id
                )
            })?;
        let processor_reference = attempt.processor_reference.clone().ok_or_else(|| {
            anyhow::anyhow!(
                "challenge attempt {} has no processor reference",
                attempt.id
            )
        })?;

        attempt.outcome = AttemptOutcome::Sent;
        attempt.updated_at = self.now();
        let processing = session.state.apply(SessionEvent::ChallengeAnswered)?;
        if !self
            .ports
            .sessions
            .finish_attempt(&attempt, session.state, processing)
            .await?
        {
            return Ok(PaymentOutcome {
                session: self.reload(session.id).await?,
                result: PaymentResult::AlreadyHandled,
            });
        }
        let answer = self
            .ports
            .processor
            .complete_challenge(&processor_reference, answer)
            .await;
        self.settle_answer(attempt, answer).await
    }
}
