//! The in-process sandbox processor: deterministic by card number (see [`cards`]), with the
//! idempotency and lookup behaviour of a real processor.

pub mod cards;
mod ledger;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use checkout_domain::ports::{
    AuthorizationRequest, CardProcessor, ChallengeAnswer, ProcessorError, ProcessorOutcome,
};
use checkout_domain::values::AttemptId;

use cards::{Behaviour, REASON_AUTHENTICATION_FAILED, REASON_AUTHENTICATION_NOT_COMPLETED};
use ledger::{Entry, Ledger};

/// A card processor in process, the embedded default: answers by card number following
/// Stripe's test-card convention, remembers every attempt, never moves money.
#[derive(Default)]
pub struct SandboxProcessor {
    ledger: Mutex<Ledger>,
    authorizations: AtomicU64,
    authorize_calls: AtomicU64,
    /// How long every call waits before answering (zero by default).
    delay: Duration,
}

impl std::fmt::Debug for SandboxProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxProcessor")
            .field("authorizations", &self.authorizations())
            .finish_non_exhaustive()
    }
}

impl SandboxProcessor {
    /// A sandbox that has seen no attempt yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A sandbox whose every call (authorise, challenge, lookup) first waits `delay`, as a
    /// slow processor would, without blocking a thread: for measuring the service while
    /// payments are stuck on the processor (`bench/run.sh`).
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    async fn wait(&self) {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
    }

    /// How many authorisations were performed: `authorize` calls for an attempt not seen before
    /// (a repeated call for the same attempt is answered from memory and not counted).
    pub fn authorizations(&self) -> u64 {
        self.authorizations.load(Ordering::SeqCst)
    }

    /// How many times `authorize` was called, repeats included.
    pub fn authorize_calls(&self) -> u64 {
        self.authorize_calls.load(Ordering::SeqCst)
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The processor reference of an attempt's authorisation.
fn reference_of(attempt: AttemptId) -> String {
    format!("sbx_{attempt}")
}

/// What the sandbox does with a new attempt: its answer and the charge it then holds.
fn decide(behaviour: Behaviour, reference: String) -> Entry {
    let unreachable = || ProcessorError::Communication("sandbox processor did not answer".into());
    match behaviour {
        Behaviour::Approve { captured } => {
            let outcome = ProcessorOutcome::Approved {
                processor_reference: reference,
                captured,
            };
            Entry {
                answer: Ok(outcome.clone()),
                charge: Some(outcome),
            }
        }
        Behaviour::Decline(reason) => {
            let outcome = ProcessorOutcome::Declined {
                processor_reference: Some(reference),
                reason: reason.to_owned(),
            };
            Entry {
                answer: Ok(outcome.clone()),
                charge: Some(outcome),
            }
        }
        Behaviour::Challenge => {
            let outcome = ProcessorOutcome::ChallengeRequired {
                processor_reference: reference,
                challenge_url: None,
            };
            Entry {
                answer: Ok(outcome.clone()),
                charge: Some(outcome),
            }
        }
        Behaviour::Unreachable => Entry {
            answer: Err(unreachable()),
            charge: None,
        },
        Behaviour::LoseAnswer => Entry {
            answer: Err(unreachable()),
            charge: Some(ProcessorOutcome::Approved {
                processor_reference: reference,
                captured: true,
            }),
        },
        Behaviour::Refuse => Entry {
            answer: Err(ProcessorError::Controlled(
                "sandbox processor refused the request".into(),
            )),
            charge: None,
        },
    }
}

#[async_trait]
impl CardProcessor for SandboxProcessor {
    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.authorize_calls.fetch_add(1, Ordering::SeqCst);
        self.wait().await;
        let mut ledger = self.ledger();
        if let Some(entry) = ledger.entry(request.attempt) {
            tracing::debug!(attempt = %request.attempt, "sandbox: repeated attempt, replaying");
            return entry.replay();
        }
        self.authorizations.fetch_add(1, Ordering::SeqCst);
        let behaviour = cards::behaviour_of(request.card.number.expose_digits());
        let entry = decide(behaviour, reference_of(request.attempt));
        let answer = entry.answer.clone();
        ledger.record(request.attempt, entry);
        tracing::debug!(attempt = %request.attempt, ?behaviour, "sandbox: authorised");
        answer
    }

    async fn complete_challenge(
        &self,
        processor_reference: &str,
        answer: ChallengeAnswer,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.wait().await;
        let mut ledger = self.ledger();
        let charge = ledger.challenge(processor_reference).ok_or_else(|| {
            ProcessorError::Controlled("sandbox processor knows no such challenge".into())
        })?;
        if let Some(ProcessorOutcome::ChallengeRequired { .. }) = charge {
            let reference = processor_reference.to_owned();
            let settled = match answer {
                ChallengeAnswer::Passed => ProcessorOutcome::Approved {
                    processor_reference: reference,
                    captured: true,
                },
                ChallengeAnswer::Failed => ProcessorOutcome::Declined {
                    processor_reference: Some(reference),
                    reason: REASON_AUTHENTICATION_FAILED.to_owned(),
                },
                ChallengeAnswer::Returned => ProcessorOutcome::Declined {
                    processor_reference: Some(reference),
                    reason: REASON_AUTHENTICATION_NOT_COMPLETED.to_owned(),
                },
            };
            *charge = Some(settled);
        }
        // Settled now or before: a repeated answer gets the same outcome.
        charge.clone().ok_or_else(|| {
            ProcessorError::Controlled(
                "sandbox processor holds no charge for this challenge".into(),
            )
        })
    }

    async fn lookup(&self, attempt: AttemptId) -> Result<Option<ProcessorOutcome>, ProcessorError> {
        self.wait().await;
        Ok(self
            .ledger()
            .entry(attempt)
            .and_then(|entry| entry.charge.clone()))
    }
}
