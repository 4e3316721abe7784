//! What the sandbox processor remembers: the answer given to every attempt, what it holds for
//! it, and the attempt behind each processor reference.

use std::collections::HashMap;

use checkout_domain::ports::{ProcessorError, ProcessorOutcome};
use checkout_domain::values::AttemptId;

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

/// Every attempt seen, and the attempts by processor reference.
#[derive(Default)]
pub(crate) struct Ledger {
    attempts: HashMap<AttemptId, Entry>,
    references: HashMap<String, AttemptId>,
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

    /// What the processor holds for the authorisation `reference`, to read or settle in place.
    pub fn holding(&mut self, reference: &str) -> Option<&mut ProcessorOutcome> {
        let attempt = self.references.get(reference)?;
        self.attempts
            .get_mut(attempt)
            .map(|entry| &mut entry.holding)
    }
}
