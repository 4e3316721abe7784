//! The in-process sandbox processor: deterministic by card number (see [`cards`]), with the
//! idempotency of a real processor (a replay of an attempt returns what it did).

pub mod cards;
mod ledger;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use checkout_domain::card::CardDetails;
use checkout_domain::ports::{
    AuthorizationRequest, CaptureRequest, CardProcessor, DisputeReport, ProcessorError,
    ProcessorOutcome, RefundOutcome, RefundRequest,
};
use checkout_domain::terminal::CaptureMethod;
use checkout_domain::values::{AttemptId, RefundId};
use rust_decimal::Decimal;

use cards::{Behaviour, REASON_AUTHENTICATION_FAILED};
use ledger::{reference_of, refused, unreachable, Entry, FirstAnswer, Held, Ledger};

/// A card processor in process, the embedded default: answers by card number following
/// Stripe's test-card convention, remembers every attempt (in memory: a restart forgets, so
/// a replay after a restart runs afresh, with the same deterministic answer), never moves
/// money.
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

    /// A sandbox whose every call (tokenize, authorise, read, challenge, cancel) first waits
    /// `delay`, as a
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

/// The payment-method reference of a card: its behaviour and the attempt, never card data.
fn payment_method_of(behaviour: Behaviour, attempt: AttemptId) -> String {
    format!("pm_sbx_{}_{}", behaviour.tag(), attempt.as_uuid().simple())
}

/// The behaviour a payment-method reference of [`payment_method_of`] carries.
fn behaviour_of_payment_method(reference: &str) -> Option<Behaviour> {
    let rest = reference.strip_prefix("pm_sbx_")?;
    let (tag, _) = rest.split_once('_')?;
    Behaviour::of_tag(tag)
}

/// What the sandbox does with a new attempt: its answer and what it then holds. With `hold`
/// (manual capture) every approval is held without capture.
fn decide(behaviour: Behaviour, hold: bool) -> Entry {
    let (answer, holding) = match behaviour {
        Behaviour::ApproveRefundRefused => {
            let held = Held::Approved { captured: !hold };
            (FirstAnswer::Gave(held), held)
        }
        Behaviour::Approve { captured } => {
            let held = Held::Approved {
                captured: captured && !hold,
            };
            (FirstAnswer::Gave(held), held)
        }
        Behaviour::Decline(reason) => (
            FirstAnswer::Gave(Held::Declined(reason)),
            Held::Declined(reason),
        ),
        Behaviour::Challenge => (FirstAnswer::Gave(Held::Challenge), Held::Challenge),
        // Never reached: such a card is refused at tokenize.
        Behaviour::Unreachable => (FirstAnswer::Lost, Held::Canceled),
        Behaviour::LoseAnswer => (FirstAnswer::Lost, Held::Approved { captured: !hold }),
        Behaviour::Refuse => (FirstAnswer::Refused, Held::Canceled),
    };
    Entry {
        answer,
        holding,
        captured: None,
        refusing_refunds: behaviour == Behaviour::ApproveRefundRefused,
        hold,
    }
}

fn unknown_reference() -> ProcessorError {
    ProcessorError::Controlled("sandbox processor knows no such payment".into())
}

#[async_trait]
impl CardProcessor for SandboxProcessor {
    async fn tokenize(
        &self,
        attempt: AttemptId,
        card: &CardDetails,
    ) -> Result<String, ProcessorError> {
        self.wait().await;
        let behaviour = cards::behaviour_of(card.number.expose_digits());
        if behaviour == Behaviour::Unreachable {
            return Err(unreachable());
        }
        Ok(payment_method_of(behaviour, attempt))
    }

    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.authorize_calls.fetch_add(1, Ordering::SeqCst);
        self.wait().await;
        let mut ledger = self.ledger();
        let reference = reference_of(request.attempt);
        if let Some(entry) = ledger.entry(request.attempt) {
            tracing::debug!(attempt = %request.attempt, "sandbox: repeated attempt, replaying");
            return entry.replay(&reference);
        }
        let behaviour = behaviour_of_payment_method(request.payment_method).ok_or_else(|| {
            ProcessorError::Controlled("sandbox processor knows no such payment method".into())
        })?;
        self.authorizations.fetch_add(1, Ordering::SeqCst);
        let mut entry = decide(behaviour, request.capture == CaptureMethod::Manual);
        if entry.holding == (Held::Approved { captured: true }) {
            entry.captured = Some(request.amount.value());
        }
        let answer = match entry.answer {
            FirstAnswer::Gave(held) => Ok(held.outcome(&reference)),
            FirstAnswer::Lost => Err(unreachable()),
            FirstAnswer::Refused => Err(refused()),
        };
        ledger.record(request.attempt, entry);
        tracing::debug!(attempt = %request.attempt, ?behaviour, "sandbox: authorised");
        answer
    }

    async fn retrieve(
        &self,
        processor_reference: &str,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.wait().await;
        self.ledger()
            .payment(processor_reference)
            .map(|entry| entry.holding.outcome(processor_reference))
            .ok_or_else(unknown_reference)
    }

    async fn answer_challenge(
        &self,
        processor_reference: &str,
        passed: bool,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.wait().await;
        let mut ledger = self.ledger();
        let entry = ledger
            .payment(processor_reference)
            .ok_or_else(unknown_reference)?;
        if entry.holding == Held::Challenge {
            entry.holding = if passed {
                Held::Approved {
                    captured: !entry.hold,
                }
            } else {
                Held::Declined(REASON_AUTHENTICATION_FAILED)
            };
        }
        // Settled now or before: a repeated answer gets what the processor holds.
        Ok(entry.holding.outcome(processor_reference))
    }

    async fn cancel(&self, processor_reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        self.wait().await;
        let mut ledger = self.ledger();
        let entry = ledger
            .payment(processor_reference)
            .ok_or_else(unknown_reference)?;
        if matches!(
            entry.holding,
            Held::Challenge | Held::Approved { captured: false }
        ) {
            entry.holding = Held::Canceled;
        }
        Ok(entry.holding.outcome(processor_reference))
    }

    async fn capture(&self, request: CaptureRequest<'_>) -> Result<Decimal, ProcessorError> {
        self.wait().await;
        let mut ledger = self.ledger();
        let reference = request.processor_reference;
        let entry = ledger.payment(reference).ok_or_else(unknown_reference)?;
        match entry.holding {
            Held::Approved { captured: false } => {
                entry.holding = Held::Approved { captured: true };
                entry.captured = Some(request.amount.value());
                Ok(request.amount.value())
            }
            Held::Approved { captured: true } => {
                Ok(entry.captured.unwrap_or(request.amount.value()))
            }
            _ => Err(ProcessorError::Controlled(
                "sandbox processor: no authorisation to capture".into(),
            )),
        }
    }

    async fn refund(&self, request: RefundRequest<'_>) -> Result<RefundOutcome, ProcessorError> {
        self.wait().await;
        let mut ledger = self.ledger();
        if let Some((_, _, answer)) = ledger.refunds.get(&request.refund) {
            return Ok(answer.clone());
        }
        let reference = request.processor_reference;
        let (captured, refusing) = match ledger.payment(reference) {
            Some(Entry {
                holding: Held::Approved { captured: true },
                captured,
                refusing_refunds,
                ..
            }) => (captured.unwrap_or_default(), *refusing_refunds),
            Some(_) => {
                return Err(ProcessorError::Controlled(
                    "sandbox processor: nothing captured to refund".into(),
                ))
            }
            None => return Err(unknown_reference()),
        };
        if request.amount.value() > captured - ledger.refunded(reference) {
            return Err(ProcessorError::Controlled(
                "sandbox processor: the refund is above what remains".into(),
            ));
        }
        let refund_reference = format!("sbx_re_{}", request.refund);
        let answer = if refusing {
            RefundOutcome::Failed {
                refund_reference: Some(refund_reference),
                reason: "refund_failed".into(),
            }
        } else {
            RefundOutcome::Succeeded { refund_reference }
        };
        ledger.refunds.insert(
            request.refund,
            (reference.to_owned(), request.amount.value(), answer.clone()),
        );
        Ok(answer)
    }

    async fn refund_status(&self, refund_reference: &str) -> Result<RefundOutcome, ProcessorError> {
        self.wait().await;
        let id = refund_reference
            .strip_prefix("sbx_re_")
            .and_then(|id| id.parse::<uuid::Uuid>().ok())
            .map(RefundId::from_uuid)
            .ok_or_else(unknown_reference)?;
        self.ledger()
            .refunds
            .get(&id)
            .map(|(_, _, answer)| answer.clone())
            .ok_or_else(unknown_reference)
    }

    /// The sandbox's payers never dispute a payment.
    async fn dispute(&self, _dispute_reference: &str) -> Result<DisputeReport, ProcessorError> {
        self.wait().await;
        Err(ProcessorError::Controlled(
            "the sandbox processor has no disputes".into(),
        ))
    }
}
