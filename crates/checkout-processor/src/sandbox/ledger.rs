//! What the sandbox processor remembers: the answer given to every attempt, what it holds for
//! it, and the attempt behind each processor reference.

use std::collections::{HashMap, HashSet};

use checkout_domain::ports::{ProcessorError, ProcessorOutcome, RefundOutcome};
use checkout_domain::values::{AttemptId, RefundId};
use rust_decimal::Decimal;

/// One attempt as the processor recorded it.
pub(crate) struct Entry {
    /// The answer `authorize` gave the first time.
    pub answer: Result<ProcessorOutcome, ProcessorError>,
    /// What the processor holds for the attempt now.
    pub holding: ProcessorOutcome,
}

impl Entry {
    /// The answer to a repeated `authorize` (an idempotent replay): what the processor holds
    /// now when the first answer was lost in transit, else the first answer.
    pub fn replay(&self) -> Result<ProcessorOutcome, ProcessorError> {
        match &self.answer {
            Err(ProcessorError::Communication(_)) => Ok(self.holding.clone()),
            answer => answer.clone(),
        }
    }
}

/// Every attempt seen, the attempts by processor reference, and the money moved after
/// authorisation: captures and refunds.
#[derive(Default)]
pub(crate) struct Ledger {
    attempts: HashMap<AttemptId, Entry>,
    references: HashMap<String, AttemptId>,
    /// The amount captured, per payment (a merchant's capture, or the whole amount).
    pub captured: HashMap<String, Decimal>,
    /// Every refund by id (idempotency key): its payment, amount and answer.
    pub refunds: HashMap<RefundId, (String, Decimal, RefundOutcome)>,
    /// The payments whose refunds the processor refuses.
    pub refusing_refunds: HashSet<String>,
}

impl Ledger {
    /// The attempt's entry, if it was seen.
    pub fn entry(&self, attempt: AttemptId) -> Option<&Entry> {
        self.attempts.get(&attempt)
    }

    /// Records the first answer to `attempt`, known by `reference`.
    pub fn record(&mut self, attempt: AttemptId, reference: String, entry: Entry) {
        self.references.insert(reference, attempt);
        self.attempts.insert(attempt, entry);
    }

    /// The amount refunded from payment `reference` (refused refunds not counted).
    pub fn refunded(&self, reference: &str) -> Decimal {
        self.refunds
            .values()
            .filter(|(r, _, answer)| {
                r == reference && !matches!(answer, RefundOutcome::Failed { .. })
            })
            .map(|(_, amount, _)| *amount)
            .sum()
    }

    /// What the processor holds for the authorisation `reference`, to read or settle in place.
    pub fn holding(&mut self, reference: &str) -> Option<&mut ProcessorOutcome> {
        let attempt = self.references.get(reference)?;
        self.attempts
            .get_mut(attempt)
            .map(|entry| &mut entry.holding)
    }
}
