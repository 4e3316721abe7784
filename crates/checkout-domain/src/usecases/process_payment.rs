//! Use case: the payer submits a card. At most one processor authorisation per session.

use super::Checkout;
use crate::card::CardDetails;
use crate::error::{CheckoutError, SvcCode};
use crate::ports::{AuthorizationRequest, ProcessorError, ProcessorOutcome};
use crate::session::{AttemptOutcome, PaymentAttempt, PaymentSession, SessionEvent, SessionState};

/// How a card submission, a challenge answer or a cancel ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentResult {
    /// Authorised: the session is Successful or ApprovedTransaction.
    Approved,
    /// Declined (SVC_006): the session is Failed.
    Declined {
        /// The processor's reason, safe to show.
        reason: String,
    },
    /// The payer must pass a 3DS challenge: the session is ChallengeRequired.
    ChallengeRequired {
        /// The processor's challenge page, or `None` for the service's own.
        challenge_url: Option<String>,
    },
    /// Nothing was charged and the payer may try again (SVC_003 or SVC_004): the session is
    /// Pending again.
    Retry {
        /// SVC_003 or SVC_004.
        code: SvcCode,
    },
    /// The processor's answer was lost and could not be recovered yet (SVC_003): the session
    /// stays Processing until reconciliation settles it through the idempotency key.
    Unresolved,
    /// The payer cancelled: the session is Cancelled.
    Cancelled,
    /// Another submission already owns the session (double click, second tab, or already
    /// paid); nothing was sent to the processor. The session shows where it stands.
    AlreadyHandled,
}

impl PaymentResult {
    /// The service code the result carries, if any.
    pub fn svc_code(&self) -> Option<SvcCode> {
        match self {
            PaymentResult::Declined { .. } => Some(SvcCode::Svc006),
            PaymentResult::Retry { code } => Some(*code),
            PaymentResult::Unresolved => Some(SvcCode::Svc003),
            _ => None,
        }
    }
}

/// The session after a payment step, and how the step ended.
#[derive(Debug, Clone)]
pub struct PaymentOutcome {
    /// The session as it now stands.
    pub session: PaymentSession,
    /// How the step ended.
    pub result: PaymentResult,
}

impl Checkout {
    /// POST /pay/process-payment: authorises `card` for the session `id`.
    ///
    /// Unknown or expired sessions are SVC_002. Of racing submissions exactly one moves the
    /// session from Pending to Processing and calls the processor; the others get
    /// [`PaymentResult::AlreadyHandled`]. `return_url` is where a processor-hosted challenge
    /// sends the payer back.
    pub async fn process_payment(
        &self,
        id: &str,
        card: &CardDetails,
        return_url: &str,
    ) -> Result<PaymentOutcome, CheckoutError> {
        let Some(session) = self.find(id).await? else {
            return Err(CheckoutError::svc(SvcCode::Svc002));
        };
        let session = self.settle_expiry(session).await?;
        if session.state == SessionState::Expired {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc002,
                "The payment session has expired.",
            ));
        }
        if session.state != SessionState::Pending {
            return Ok(already_handled(session));
        }

        let now = self.now();
        let attempt = PaymentAttempt {
            id: self.ports.ids.attempt_id(),
            session_id: session.id,
            card_brand: card.number.brand(),
            card_last4: card.number.last4().to_owned(),
            processor_reference: None,
            challenge_url: None,
            outcome: AttemptOutcome::Sent,
            svc_code: None,
            created_at: now,
            updated_at: now,
        };
        let processing = session.state.apply(SessionEvent::CardSubmitted)?;
        if !self
            .ports
            .sessions
            .begin_attempt(&attempt, session.state, processing)
            .await?
        {
            return Ok(already_handled(self.reload(session.id).await?));
        }

        let answer = self
            .ports
            .processor
            .authorize(AuthorizationRequest {
                attempt: attempt.id,
                session: session.id,
                internal_reference: &session.internal_reference,
                amount: session.amount,
                card,
                return_url,
            })
            .await;
        self.settle_answer(attempt, answer).await
    }

    /// Records a processor answer for `attempt`, whose session is Processing, and moves the
    /// session accordingly. A lost answer is looked up once through the idempotency key.
    pub(super) async fn settle_answer(
        &self,
        attempt: PaymentAttempt,
        answer: Result<ProcessorOutcome, ProcessorError>,
    ) -> Result<PaymentOutcome, CheckoutError> {
        match answer {
            Ok(outcome) => self.record_outcome(attempt, outcome).await,
            Err(ProcessorError::Controlled(_)) => {
                self.void_attempt(attempt, AttemptOutcome::Rejected, SvcCode::Svc004)
                    .await
            }
            Err(ProcessorError::Communication(_)) => {
                match self.ports.processor.lookup(attempt.id).await {
                    Ok(Some(outcome)) => self.record_outcome(attempt, outcome).await,
                    Ok(None) => {
                        self.void_attempt(attempt, AttemptOutcome::Voided, SvcCode::Svc003)
                            .await
                    }
                    Err(_) => self.leave_unresolved(attempt).await,
                }
            }
        }
    }

    pub(super) async fn record_outcome(
        &self,
        mut attempt: PaymentAttempt,
        outcome: ProcessorOutcome,
    ) -> Result<PaymentOutcome, CheckoutError> {
        let (event, result) = match &outcome {
            ProcessorOutcome::Approved {
                processor_reference,
                captured,
            } => {
                attempt.outcome = AttemptOutcome::Approved;
                attempt.processor_reference = Some(processor_reference.clone());
                let event = if *captured {
                    SessionEvent::Captured
                } else {
                    SessionEvent::Authorized
                };
                (event, PaymentResult::Approved)
            }
            ProcessorOutcome::Declined {
                processor_reference,
                reason,
            } => {
                attempt.outcome = AttemptOutcome::Declined;
                attempt.processor_reference.clone_from(processor_reference);
                attempt.svc_code = Some(SvcCode::Svc006);
                (
                    SessionEvent::Declined,
                    PaymentResult::Declined {
                        reason: reason.clone(),
                    },
                )
            }
            ProcessorOutcome::ChallengeRequired {
                processor_reference,
                challenge_url,
            } => {
                attempt.outcome = AttemptOutcome::ChallengeRequired;
                attempt.processor_reference = Some(processor_reference.clone());
                attempt.challenge_url.clone_from(challenge_url);
                (
                    SessionEvent::ChallengeIssued,
                    PaymentResult::ChallengeRequired {
                        challenge_url: challenge_url.clone(),
                    },
                )
            }
        };
        self.finish(attempt, event, result).await
    }

    pub(super) async fn void_attempt(
        &self,
        mut attempt: PaymentAttempt,
        outcome: AttemptOutcome,
        code: SvcCode,
    ) -> Result<PaymentOutcome, CheckoutError> {
        attempt.outcome = outcome;
        attempt.svc_code = Some(code);
        self.finish(
            attempt,
            SessionEvent::AttemptVoided,
            PaymentResult::Retry { code },
        )
        .await
    }

    async fn leave_unresolved(
        &self,
        mut attempt: PaymentAttempt,
    ) -> Result<PaymentOutcome, CheckoutError> {
        attempt.outcome = AttemptOutcome::Unresolved;
        attempt.svc_code = Some(SvcCode::Svc003);
        attempt.updated_at = self.now();
        let processing = SessionState::Processing;
        let stored = self
            .ports
            .sessions
            .finish_attempt(&attempt, processing, processing)
            .await?;
        let session = self.reload(attempt.session_id).await?;
        let result = if stored {
            PaymentResult::Unresolved
        } else {
            PaymentResult::AlreadyHandled
        };
        Ok(PaymentOutcome { session, result })
    }

    /// Saves the attempt and applies `event` to its Processing session, guarded.
    async fn finish(
        &self,
        mut attempt: PaymentAttempt,
        event: SessionEvent,
        result: PaymentResult,
    ) -> Result<PaymentOutcome, CheckoutError> {
        attempt.updated_at = self.now();
        let from = SessionState::Processing;
        let to = from.apply(event)?;
        let moved = self
            .ports
            .sessions
            .finish_attempt(&attempt, from, to)
            .await?;
        let session = self.reload(attempt.session_id).await?;
        Ok(PaymentOutcome {
            session,
            result: if moved {
                result
            } else {
                PaymentResult::AlreadyHandled
            },
        })
    }
}

fn already_handled(session: PaymentSession) -> PaymentOutcome {
    PaymentOutcome {
        session,
        result: PaymentResult::AlreadyHandled,
    }
}
