//! Use case: the payer answers a 3DS challenge, on the service's own challenge page (the
//! sandbox) or at the processor, coming back through the return address.

use super::settle::Answer;
use super::{Checkout, HostedPage, PaymentOutcome, PaymentResult};
use crate::error::CheckoutError;
use crate::ports::ProcessorOutcome;
use crate::session::{AttemptState, PaymentAttempt, PaymentSession, SessionEvent, SessionState};
use crate::values::SessionId;

impl Checkout {
    /// The payer's answer on the service's own challenge page (`passed` or not).
    ///
    /// An expired session is SVC_002 after its authorisation was cancelled at the processor
    /// (unless the processor says it already went through: that is recorded and shown). A
    /// session not waiting for a challenge gets [`PaymentResult::AlreadyHandled`]. Of racing
    /// answers exactly one is sent to the processor. When the processor refuses the answer or
    /// does not answer, the authorisation is read from the processor; nothing is ever assumed.
    pub async fn answer_challenge(
        &self,
        id: SessionId,
        passed: bool,
    ) -> Result<(HostedPage, PaymentOutcome), CheckoutError> {
        let page = self.open_payable(id, None).await?;
        let session = page.session.clone();
        if session.state() != SessionState::ChallengeRequired {
            return Ok((page, already_handled(session)));
        }
        let (attempt, reference) = self.challenge_attempt(&session).await?;
        // Claim the answer: the attempt goes back to Sent and the session to Processing, so
        // that a second answer (a double click) finds it taken.
        let now = self.now();
        let mut sent = attempt.moved(AttemptState::Sent, now)?;
        sent.next_check_at = Some(now + self.policy.reconcile.first_check_after);
        let processing = session.state().apply(SessionEvent::ChallengeAnswered)?;
        let claimed = self
            .ports
            .attempts
            .record_attempt(&crate::ports::AttemptChange {
                attempt: &sent,
                expected: &[AttemptState::RequiresAction],
                session_move: Some((session.state(), processing)),
            })
            .await?;
        if claimed != crate::ports::Recorded::Moved {
            let session = self.reload(id).await?;
            return Ok((page, already_handled(session)));
        }
        let session = session.moved(SessionEvent::ChallengeAnswered, now)?;
        let answer = match self
            .ports
            .processor
            .answer_challenge(&reference, passed)
            .await
        {
            Ok(outcome) => Ok(outcome),
            // Refused or lost: what the processor holds decides, never an assumption.
            Err(_) => self.ports.processor.retrieve(&reference).await,
        };
        let outcome = self
            .record_answer(
                session,
                &sent,
                &AttemptState::UNRESOLVED,
                Answer::of_read(answer),
            )
            .await?;
        if matches!(outcome.result, PaymentResult::Declined { .. }) {
            self.count_late_decline(id).await;
        }
        Ok((page, outcome))
    }

    /// GET /pay/return/{id}: the payer is back from a challenge the processor hosted. Only
    /// records what the processor says it holds: it never cancels and never assumes, so an
    /// anonymous request cannot move a session the processor has not moved. A challenge still
    /// waiting stays ChallengeRequired; an unreachable processor changes nothing
    /// ([`PaymentResult::Unresolved`]).
    pub async fn challenge_returned(
        &self,
        id: SessionId,
    ) -> Result<(HostedPage, PaymentOutcome), CheckoutError> {
        let session = self.load(id).await?;
        let terminal = self
            .ports
            .terminals
            .get_terminal(session.terminal())
            .await?;
        let page = HostedPage::of(session.clone(), terminal);
        if session.state() != SessionState::ChallengeRequired {
            return Ok((page, already_handled(session)));
        }
        let (attempt, reference) = self.challenge_attempt(&session).await?;
        let outcome = match self.ports.processor.retrieve(&reference).await {
            Ok(ProcessorOutcome::ChallengeRequired { challenge_url, .. }) => {
                // Not finished at the processor: an expired one is cancelled there first.
                let session = self.settle_expiry(session).await?;
                let result = if session.state() == SessionState::ChallengeRequired {
                    PaymentResult::ChallengeRequired {
                        challenge_url: challenge_url.or(attempt.challenge_url),
                    }
                } else {
                    PaymentResult::AlreadyHandled
                };
                PaymentOutcome { session, result }
            }
            Ok(holding) => {
                self.record_answer(
                    session,
                    &attempt,
                    &[AttemptState::RequiresAction],
                    Answer::Holds(holding),
                )
                .await?
            }
            Err(_) => PaymentOutcome {
                session,
                result: PaymentResult::Unresolved,
            },
        };
        Ok((page, outcome))
    }
}

impl Checkout {
    /// The current attempt of a session waiting for a challenge, and its processor reference.
    async fn challenge_attempt(
        &self,
        session: &PaymentSession,
    ) -> Result<(PaymentAttempt, String), CheckoutError> {
        let attempt = self.current_attempt(session).await?;
        match attempt.processor_reference.clone() {
            Some(reference) => Ok((attempt, reference)),
            None => {
                Err(anyhow::anyhow!("challenge attempt {} has no reference", attempt.id).into())
            }
        }
    }
}

fn already_handled(session: PaymentSession) -> PaymentOutcome {
    PaymentOutcome {
        session,
        result: PaymentResult::AlreadyHandled,
    }
}
