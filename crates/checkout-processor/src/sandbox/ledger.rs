//! What the sandbox processor remembers: the answer given to every attempt, the charge it holds
//! for it, and the challenges waiting for an answer.

use std::collections::HashMap;

use checkout_domain::ports::{ProcessorError, ProcessorOutcome};
use checkout_domain::values::AttemptId;

/// One attempt as the processor recorded it.
pub(crate) struct Entry {
    /// The answer `authorize` gave the first time.
    pub answer: Result<ProcessorOutcome, ProcessorError>,
    /// What the processor holds for the attempt now; `None`: no charge.
    pub charge: Option<ProcessorOutcome>,
}

impl Entry {
    /// The answer to a repeated `authorize`: the first answer, or, when that answer was lost in
    /// transit, what the processor did (as an idempotent replay would return it).
    pub fn replay(&self) -> Result<ProcessorOutcome, ProcessorError> {
        match (&self.answer, &self.charge) {
            (Err(ProcessorError::Communication(_)), Some(charge)) => Ok(charge.clone()),
            (answer, _) => answer.clone(),
        }
    }
}

/// Every attempt seen, and the challenges by processor reference.
#[derive(Default)]
pub(crate) struct Ledger {
    attempts: HashMap<AttemptId, Entry>,
    challenges: HashMap<String, AttemptId>,
}

impl Ledger {
    /// The attempt's entry, if it was seen.
    pub fn entry(&self, attempt: AttemptId) -> Option<&Entry> {
        self.attempts.get(&attempt)
    }

    /// Records the first answer to `attempt`.
    pub fn record(&mut self, attempt: AttemptId, entry: Entry) {
        if let Some(ProcessorOutcome::ChallengeRequired {
            processor_reference,
            ..
        }) = &entry.charge
        {
            self.challenges.insert(processor_reference.clone(), attempt);
        }
        self.attempts.insert(attempt, entry);
    }

    /// The charge held for the challenge `processor_reference`, to be settled in place.
    pub fn challenge(
        &mut self,
        processor_reference: &str,
    ) -> Option<&mut Option<ProcessorOutcome>> {
        let attempt = self.challenges.get(processor_reference)?;
        self.attempts
            .get_mut(attempt)
            .map(|entry| &mut entry.charge)
    }
}
