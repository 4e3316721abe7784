//! What the sandbox processor remembers: the answer given to every attempt, what it holds for
//! it, and the money moved after authorisation.
//!
//! The sandbox lives in the server's process and remembers every attempt for as long as the
//! process runs, so an attempt costs it a few dozen bytes: a fixed-size [`Entry`] keyed by the
//! attempt id, with no string of its own. The processor reference is the attempt's
//! ([`reference_of`], read back by [`attempt_of`]), a decline reason is one of the sandbox's
//! own constants, and the full [`ProcessorOutcome`] is built when asked for.

use std::collections::HashMap;

use checkout_domain::ports::{ProcessorError, ProcessorOutcome, RefundOutcome};
use checkout_domain::values::{AttemptId, RefundId};
use rust_decimal::Decimal;
use uuid::Uuid;

/// The processor reference of an attempt's authorisation.
pub(crate) fn reference_of(attempt: AttemptId) -> String {
    format!("sbx_{attempt}")
}

/// The attempt behind a reference of [`reference_of`].
pub(crate) fn attempt_of(reference: &str) -> Option<AttemptId> {
    let id = reference.strip_prefix("sbx_")?;
    // Only the form `reference_of` writes: another spelling of the same id is no reference.
    let uuid = Uuid::try_parse(id).ok()?;
    (uuid.hyphenated().to_string() == id).then(|| AttemptId::from_uuid(uuid))
}

/// What the processor holds for an attempt, without its reference (the attempt's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// Authorised; captured or not.
    Approved {
        /// True once the funds are captured.
        captured: bool,
    },
    /// Declined, for this reason.
    Declined(&'static str),
    /// Waiting for the payer's 3DS challenge.
    Challenge,
    /// Cancelled, or never taken: nothing charged.
    Canceled,
}

impl Held {
    /// The outcome as the port tells it, for the attempt with processor reference `reference`.
    pub fn outcome(self, reference: &str) -> ProcessorOutcome {
        let processor_reference = reference.to_owned();
        match self {
            Held::Approved { captured } => ProcessorOutcome::Approved {
                processor_reference,
                captured,
            },
            Held::Declined(reason) => ProcessorOutcome::Declined {
                processor_reference: Some(processor_reference),
                reason: reason.to_owned(),
            },
            Held::Challenge => ProcessorOutcome::ChallengeRequired {
                processor_reference,
                challenge_url: None,
            },
            Held::Canceled => ProcessorOutcome::Canceled {
                processor_reference,
            },
        }
    }
}

/// The answer `authorize` gave the first time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstAnswer {
    /// What it then held.
    Gave(Held),
    /// The answer was lost in transit (a communication error).
    Lost,
    /// The processor refused the request (a controlled error).
    Refused,
}

/// One attempt as the processor recorded it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    /// The answer `authorize` gave the first time.
    pub answer: FirstAnswer,
    /// What the processor holds for the attempt now.
    pub holding: Held,
    /// The amount captured (a merchant's capture, or the whole amount), once captured.
    pub captured: Option<Decimal>,
    /// True when the processor refuses every refund of this payment.
    pub refusing_refunds: bool,
    /// True when the authorisation was asked with manual capture: an approval is held.
    pub hold: bool,
}

impl Entry {
    /// The answer to a repeated `authorize` (an idempotent replay) of the attempt with
    /// reference `reference`: what the processor holds now when the first answer was lost in
    /// transit, else the first answer.
    pub fn replay(&self, reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        match self.answer {
            FirstAnswer::Gave(held) => Ok(held.outcome(reference)),
            FirstAnswer::Lost => Ok(self.holding.outcome(reference)),
            FirstAnswer::Refused => Err(refused()),
        }
    }
}

/// The sandbox's communication error: it did not answer.
pub(crate) fn unreachable() -> ProcessorError {
    ProcessorError::Communication("sandbox processor did not answer".into())
}

/// The sandbox's refusal of a request.
pub(crate) fn refused() -> ProcessorError {
    ProcessorError::Controlled("sandbox processor refused the request".into())
}

/// Every attempt seen, and every refund.
#[derive(Default)]
pub(crate) struct Ledger {
    attempts: HashMap<AttemptId, Entry>,
    /// Every refund by id (idempotency key): its payment, amount and answer.
    pub refunds: HashMap<RefundId, (String, Decimal, RefundOutcome)>,
}

impl Ledger {
    /// The attempt's entry, if it was seen.
    pub fn entry(&self, attempt: AttemptId) -> Option<&Entry> {
        self.attempts.get(&attempt)
    }

    /// Records the first answer to `attempt`.
    pub fn record(&mut self, attempt: AttemptId, entry: Entry) {
        self.attempts.insert(attempt, entry);
    }

    /// The entry of the authorisation `reference`, to read or settle in place.
    pub fn payment(&mut self, reference: &str) -> Option<&mut Entry> {
        self.attempts.get_mut(&attempt_of(reference)?)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_reads_back_as_its_attempt_and_nothing_else_does() {
        let attempt = AttemptId::from_random_bytes([0xab; 16]);
        let reference = reference_of(attempt);
        assert_eq!(attempt_of(&reference), Some(attempt));
        let upper = reference.to_uppercase().replacen("SBX_", "sbx_", 1);
        for other in [
            "sbx_",
            "pi_123",
            &reference[4..],
            &upper,
            &reference.replace('-', ""),
        ] {
            assert_eq!(attempt_of(other), None, "{other}");
        }
    }
}
