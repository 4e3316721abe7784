//! A card processor in memory that keeps the port's promises the way a real one does:
//! idempotent replays by attempt, a charge that exists although its answer was lost, a
//! processor that is down, challenges completed at the processor, cancels refused for a
//! captured charge. Scripts stage the inconvenient answers.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use rust_decimal::Decimal;

use crate::card::CardDetails;
use crate::ports::{
    AuthorizationRequest, CaptureRequest, CardProcessor, DisputeReport, ProcessorError,
    ProcessorOutcome, RefundOutcome, RefundRequest,
};
use crate::session::DisputeStatus;
use crate::values::{AttemptId, RefundId, SessionId};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One scripted authorisation: what the first request is answered, and what the processor
/// then holds (what a replay with the same key returns).
#[derive(Debug, Clone)]
pub struct Scripted {
    /// What the first `authorize` returns.
    pub answer: Result<ProcessorOutcome, ProcessorError>,
    /// What the processor really holds afterwards; `None`: the request did nothing (a replay
    /// then runs afresh, as after a request that never reached the processor).
    pub really: Option<ProcessorOutcome>,
}

#[derive(Default)]
struct Ledger {
    /// What the processor holds per attempt (idempotency key).
    by_attempt: HashMap<AttemptId, ProcessorOutcome>,
    /// The session each attempt paid.
    sessions: HashMap<AttemptId, SessionId>,
    /// The attempt behind each processor reference.
    by_reference: HashMap<String, AttemptId>,
    /// The amount captured by a merchant's capture, per processor reference.
    captured: HashMap<String, Decimal>,
    /// Every refund executed, by refund id (idempotency key): its reference and answer.
    refunds: HashMap<RefundId, (String, Decimal, RefundOutcome)>,
    /// The disputes opened by the payers' banks, by reference.
    disputes: HashMap<String, DisputeReport>,
}

impl Ledger {
    fn holding(&self, reference: &str) -> Option<(AttemptId, &ProcessorOutcome)> {
        let attempt = *self.by_reference.get(reference)?;
        self.by_attempt.get(&attempt).map(|h| (attempt, h))
    }

    fn set(&mut self, attempt: AttemptId, holding: ProcessorOutcome) {
        if let Some(reference) = holding.processor_reference() {
            self.by_reference.insert(reference.to_owned(), attempt);
        }
        self.by_attempt.insert(attempt, holding);
    }
}

/// A processor in memory. With nothing scripted, `authorize` approves and captures (or holds
/// the authorisation, when manual capture is asked).
#[derive(Default)]
pub struct FakeProcessor {
    authorize_script: Mutex<VecDeque<Scripted>>,
    challenge_script: Mutex<VecDeque<ProcessorError>>,
    tokenize_script: Mutex<VecDeque<ProcessorError>>,
    ledger: Mutex<Ledger>,
    down: Mutex<bool>,
    authorizations_time_out: Mutex<bool>,
    authorize_calls: AtomicU64,
    executions: AtomicU64,
    challenge_calls: AtomicU64,
    cancel_calls: AtomicU64,
    tokens: AtomicU64,
    refund_script: Mutex<VecDeque<Result<RefundOutcome, ProcessorError>>>,
    capture_answers_lost: Mutex<u32>,
    capture_calls: AtomicU64,
    refund_answers_lost: Mutex<u32>,
}

/// An approval with capture, as the default script answers.
pub fn approved(reference: &str) -> ProcessorOutcome {
    ProcessorOutcome::Approved {
        processor_reference: reference.to_owned(),
        captured: true,
    }
}

impl FakeProcessor {
    /// The next new authorisation is answered `answer`, and the processor then holds it.
    pub fn push_authorize(&self, answer: Result<ProcessorOutcome, ProcessorError>) {
        let really = answer.as_ref().ok().cloned();
        lock(&self.authorize_script).push_back(Scripted { answer, really });
    }

    /// The next new authorisation's answer is lost (`error`) although the processor did
    /// `really` (`None`: nothing, and a replay runs afresh).
    pub fn push_lost_answer(&self, error: ProcessorError, really: Option<ProcessorOutcome>) {
        lock(&self.authorize_script).push_back(Scripted {
            answer: Err(error),
            really,
        });
    }

    /// The next `answer_challenge` applies the payer's answer at the processor but its
    /// answer is lost as `error` (a 4xx, a timeout).
    pub fn push_challenge_error(&self, error: ProcessorError) {
        lock(&self.challenge_script).push_back(error);
    }

    /// The next new refund is answered `answer` instead of succeeding (a `Communication`
    /// error means the refund was done and its answer lost).
    pub fn push_refund(&self, answer: Result<RefundOutcome, ProcessorError>) {
        lock(&self.refund_script).push_back(answer);
    }

    /// The next `n` captures do their work but lose their answer (a timeout after the
    /// capture).
    pub fn lose_capture_answers(&self, n: u32) {
        *lock(&self.capture_answers_lost) = n;
    }

    /// The next `n` refund requests (new ones and replays alike) do their work but lose
    /// their answer.
    pub fn lose_refund_answers(&self, n: u32) {
        *lock(&self.refund_answers_lost) = n;
    }

    /// How many capture requests reached the processor.
    pub fn capture_calls(&self) -> u64 {
        self.capture_calls.load(Ordering::SeqCst)
    }

    /// The amount the processor holds captured for the payment `reference`, after a capture.
    pub fn captured_of(&self, reference: &str) -> Option<Decimal> {
        lock(&self.ledger).captured.get(reference).copied()
    }

    /// The refunds the processor holds as succeeded (or done with a lost answer) for the
    /// payment `reference`: their amounts.
    pub fn refunds_of(&self, reference: &str) -> Vec<Decimal> {
        lock(&self.ledger)
            .refunds
            .values()
            .filter(|(r, _, outcome)| {
                r == reference && !matches!(outcome, RefundOutcome::Failed { .. })
            })
            .map(|(_, amount, _)| *amount)
            .collect()
    }

    /// The next `tokenize` fails with `error`.
    pub fn push_tokenize_error(&self, error: ProcessorError) {
        lock(&self.tokenize_script).push_back(error);
    }

    /// While `down`, every call fails with a communication error and does nothing.
    pub fn set_down(&self, down: bool) {
        *lock(&self.down) = down;
    }

    /// While set, every `authorize` times out before reaching the processor (nothing done);
    /// the other calls still work.
    pub fn time_out_authorizations(&self, time_out: bool) {
        *lock(&self.authorizations_time_out) = time_out;
    }

    /// The payer completes the challenge `reference` at the processor (a processor-hosted
    /// page); returns false when it was not waiting for one.
    pub fn complete_at_processor(&self, reference: &str, passed: bool) -> bool {
        let mut ledger = lock(&self.ledger);
        match ledger.holding(reference) {
            Some((attempt, ProcessorOutcome::ChallengeRequired { .. })) => {
                ledger.set(attempt, after_challenge(reference, passed));
                true
            }
            _ => false,
        }
    }

    /// The authorisation `reference`, held without capture, expires: the processor releases
    /// it on its own (a read then answers `Canceled`). Returns false when it held none.
    pub fn expire_authorization(&self, reference: &str) -> bool {
        let mut ledger = lock(&self.ledger);
        match ledger.holding(reference) {
            Some((
                attempt,
                ProcessorOutcome::Approved {
                    captured: false, ..
                },
            )) => {
                let released = ProcessorOutcome::Canceled {
                    processor_reference: reference.to_owned(),
                };
                ledger.set(attempt, released);
                true
            }
            _ => false,
        }
    }

    /// The processor fails, after the fact, the refund it confirmed as `refund_reference`
    /// (the payer's bank returned it): a read of it now answers `Failed`. Returns false when
    /// there is no such refund.
    pub fn fail_refund_later(&self, refund_reference: &str) -> bool {
        let mut ledger = lock(&self.ledger);
        let found = ledger
            .refunds
            .values_mut()
            .find(|(_, _, outcome)| refund_reference_of(outcome) == Some(refund_reference));
        match found {
            Some((_, _, outcome)) => {
                *outcome = RefundOutcome::Failed {
                    refund_reference: Some(refund_reference.to_owned()),
                    reason: "the payer's bank returned the refund".into(),
                };
                true
            }
            None => false,
        }
    }

    /// The payer's bank disputes `amount` of the payment `payment_reference`, or moves the
    /// dispute `reference` to `status`: the processor then reports it so.
    pub fn set_dispute(
        &self,
        reference: &str,
        payment_reference: &str,
        amount: Decimal,
        status: DisputeStatus,
    ) {
        lock(&self.ledger).disputes.insert(
            reference.to_owned(),
            DisputeReport {
                reference: reference.to_owned(),
                payment_reference: payment_reference.to_owned(),
                amount,
                reason: "fraudulent".into(),
                status,
            },
        );
    }

    /// How many times `authorize` was called, replays included.
    pub fn authorize_calls(&self) -> u64 {
        self.authorize_calls.load(Ordering::SeqCst)
    }

    /// How many authorisations were executed (replays answered from the ledger not counted).
    pub fn executions(&self) -> u64 {
        self.executions.load(Ordering::SeqCst)
    }

    /// How many times `answer_challenge` was called.
    pub fn challenge_calls(&self) -> u64 {
        self.challenge_calls.load(Ordering::SeqCst)
    }

    /// How many times `cancel` was called.
    pub fn cancel_calls(&self) -> u64 {
        self.cancel_calls.load(Ordering::SeqCst)
    }

    /// How many authorisations of `session` hold money (approved, captured or not).
    pub fn charges_for(&self, session: SessionId) -> usize {
        let ledger = lock(&self.ledger);
        ledger
            .by_attempt
            .iter()
            .filter(|(attempt, holding)| {
                ledger.sessions.get(attempt) == Some(&session)
                    && matches!(holding, ProcessorOutcome::Approved { .. })
            })
            .count()
    }

    /// What the processor holds for `attempt`.
    pub fn holding_of(&self, attempt: AttemptId) -> Option<ProcessorOutcome> {
        lock(&self.ledger).by_attempt.get(&attempt).cloned()
    }

    fn check_up(&self) -> Result<(), ProcessorError> {
        if *lock(&self.down) {
            Err(ProcessorError::Communication("processor down".into()))
        } else {
            Ok(())
        }
    }
}

fn after_challenge(reference: &str, passed: bool) -> ProcessorOutcome {
    if passed {
        approved(reference)
    } else {
        ProcessorOutcome::Declined {
            processor_reference: Some(reference.to_owned()),
            reason: "authentication failed".into(),
        }
    }
}

impl FakeProcessor {
    /// A refund as the processor does it, scripted answers included.
    fn refund_held(&self, request: RefundRequest<'_>) -> Result<RefundOutcome, ProcessorError> {
        let mut ledger = lock(&self.ledger);
        if let Some((_, _, outcome)) = ledger.refunds.get(&request.refund) {
            return Ok(outcome.clone());
        }
        let reference = request.processor_reference;
        if !matches!(
            ledger.holding(reference),
            Some((_, ProcessorOutcome::Approved { captured: true, .. }))
        ) {
            return Err(ProcessorError::Controlled("no captured payment".into()));
        }
        let done = RefundOutcome::Succeeded {
            refund_reference: format!("re_{}", request.refund),
        };
        let answer = lock(&self.refund_script)
            .pop_front()
            .unwrap_or(Ok(done.clone()));
        let really = match &answer {
            Ok(outcome) => Some(outcome.clone()),
            Err(ProcessorError::Communication(_)) => Some(done),
            Err(ProcessorError::Controlled(_)) => None,
        };
        if let Some(really) = really {
            ledger.refunds.insert(
                request.refund,
                (reference.to_owned(), request.amount.value(), really),
            );
        }
        answer
    }

    /// A capture as the processor does it (its answer is not lost yet).
    fn capture_held(&self, request: CaptureRequest<'_>) -> Result<Decimal, ProcessorError> {
        let mut ledger = lock(&self.ledger);
        let reference = request.processor_reference;
        let Some((attempt, holding)) = ledger.holding(reference) else {
            return Err(ProcessorError::Controlled("no such payment".into()));
        };
        match holding {
            ProcessorOutcome::Approved { captured: true, .. } => Ok(ledger
                .captured
                .get(reference)
                .copied()
                .unwrap_or(request.amount.value())),
            ProcessorOutcome::Approved {
                captured: false, ..
            } => {
                ledger.set(attempt, approved(reference));
                ledger
                    .captured
                    .insert(reference.to_owned(), request.amount.value());
                Ok(request.amount.value())
            }
            _ => Err(ProcessorError::Controlled(
                "the payment holds no authorisation to capture".into(),
            )),
        }
    }
}

#[async_trait]
impl CardProcessor for FakeProcessor {
    async fn tokenize(
        &self,
        attempt: AttemptId,
        _card: &CardDetails,
    ) -> Result<String, ProcessorError> {
        self.check_up()?;
        if let Some(error) = lock(&self.tokenize_script).pop_front() {
            return Err(error);
        }
        let n = self.tokens.fetch_add(1, Ordering::SeqCst);
        Ok(format!("pm_{n}_{attempt}"))
    }

    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.authorize_calls.fetch_add(1, Ordering::SeqCst);
        self.check_up()?;
        if *lock(&self.authorizations_time_out) {
            return Err(ProcessorError::Communication(
                "authorisation timed out".into(),
            ));
        }
        let mut ledger = lock(&self.ledger);
        if let Some(holding) = ledger.by_attempt.get(&request.attempt) {
            return Ok(holding.clone());
        }
        self.executions.fetch_add(1, Ordering::SeqCst);
        let scripted = lock(&self.authorize_script).pop_front().unwrap_or_else(|| {
            let outcome = ProcessorOutcome::Approved {
                processor_reference: format!("pi_{}", request.attempt),
                // A held authorisation when manual capture is asked.
                captured: request.capture == crate::terminal::CaptureMethod::Automatic,
            };
            Scripted {
                answer: Ok(outcome.clone()),
                really: Some(outcome),
            }
        });
        if let Some(really) = scripted.really {
            ledger.sessions.insert(request.attempt, request.session);
            ledger.set(request.attempt, really);
        }
        scripted.answer
    }

    async fn retrieve(
        &self,
        processor_reference: &str,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.check_up()?;
        lock(&self.ledger)
            .holding(processor_reference)
            .map(|(_, h)| h.clone())
            .ok_or_else(|| ProcessorError::Controlled("no such payment".into()))
    }

    async fn answer_challenge(
        &self,
        processor_reference: &str,
        passed: bool,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.challenge_calls.fetch_add(1, Ordering::SeqCst);
        self.check_up()?;
        let mut ledger = lock(&self.ledger);
        let Some((attempt, holding)) = ledger.holding(processor_reference) else {
            return Err(ProcessorError::Controlled("no such payment".into()));
        };
        let holding = match holding {
            ProcessorOutcome::ChallengeRequired { .. } => {
                let settled = after_challenge(processor_reference, passed);
                ledger.set(attempt, settled.clone());
                settled
            }
            other => other.clone(),
        };
        match lock(&self.challenge_script).pop_front() {
            Some(error) => Err(error),
            None => Ok(holding),
        }
    }

    async fn cancel(&self, processor_reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        self.cancel_calls.fetch_add(1, Ordering::SeqCst);
        self.check_up()?;
        let mut ledger = lock(&self.ledger);
        let Some((attempt, holding)) = ledger.holding(processor_reference) else {
            return Err(ProcessorError::Controlled("no such payment".into()));
        };
        match holding {
            ProcessorOutcome::ChallengeRequired { .. }
            | ProcessorOutcome::Approved {
                captured: false, ..
            }
            | ProcessorOutcome::Canceled { .. } => {
                let canceled = ProcessorOutcome::Canceled {
                    processor_reference: processor_reference.to_owned(),
                };
                ledger.set(attempt, canceled.clone());
                Ok(canceled)
            }
            other => Ok(other.clone()),
        }
    }

    async fn capture(&self, request: CaptureRequest<'_>) -> Result<Decimal, ProcessorError> {
        self.check_up()?;
        self.capture_calls.fetch_add(1, Ordering::SeqCst);
        let answer = self.capture_held(request);
        let mut lost = lock(&self.capture_answers_lost);
        if *lost > 0 && answer.is_ok() {
            *lost -= 1;
            return Err(ProcessorError::Communication(
                "the capture's answer was lost".into(),
            ));
        }
        answer
    }

    async fn refund(&self, request: RefundRequest<'_>) -> Result<RefundOutcome, ProcessorError> {
        self.check_up()?;
        let answer = self.refund_held(request);
        let mut lost = lock(&self.refund_answers_lost);
        if *lost > 0 && answer.is_ok() {
            *lost -= 1;
            return Err(ProcessorError::Communication(
                "the refund's answer was lost".into(),
            ));
        }
        answer
    }

    async fn refund_status(&self, refund_reference: &str) -> Result<RefundOutcome, ProcessorError> {
        self.check_up()?;
        let ledger = lock(&self.ledger);
        ledger
            .refunds
            .values()
            .map(|(_, _, outcome)| outcome)
            .find(|outcome| refund_reference_of(outcome) == Some(refund_reference))
            .cloned()
            .ok_or_else(|| ProcessorError::Controlled("no such refund".into()))
    }

    async fn dispute(&self, dispute_reference: &str) -> Result<DisputeReport, ProcessorError> {
        self.check_up()?;
        lock(&self.ledger)
            .disputes
            .get(dispute_reference)
            .cloned()
            .ok_or_else(|| ProcessorError::Controlled("no such dispute".into()))
    }
}

/// The processor's reference a refund answer carries.
fn refund_reference_of(outcome: &RefundOutcome) -> Option<&str> {
    match outcome {
        RefundOutcome::Succeeded { refund_reference }
        | RefundOutcome::Pending { refund_reference } => Some(refund_reference),
        RefundOutcome::Failed {
            refund_reference, ..
        } => refund_reference.as_deref(),
    }
}
