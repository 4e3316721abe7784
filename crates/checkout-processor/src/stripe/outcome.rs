//! What a PaymentIntent's state means for the service.

use checkout_domain::ports::{ProcessorError, ProcessorOutcome};

use super::api::{IntentStatus, PaymentIntent};

/// What the processor holds for `intent`: an outcome, or an error when that cannot be told
/// (still processing, a status the adapter does not know, or an intent never confirmed).
pub(crate) fn outcome_of(intent: &PaymentIntent) -> Result<ProcessorOutcome, ProcessorError> {
    let id = intent.id.clone();
    match intent.status {
        IntentStatus::Succeeded => Ok(ProcessorOutcome::Approved {
            processor_reference: id,
            captured: true,
        }),
        IntentStatus::RequiresCapture => Ok(ProcessorOutcome::Approved {
            processor_reference: id,
            captured: false,
        }),
        IntentStatus::RequiresAction => Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference: id,
            challenge_url: intent.challenge_url(),
        }),
        IntentStatus::RequiresPaymentMethod => match &intent.last_payment_error {
            Some(error) => Ok(ProcessorOutcome::Declined {
                processor_reference: Some(id),
                reason: error.reason(),
            }),
            // Confirmed with `confirm=true`, an intent never rests here without an error.
            None => Err(ProcessorError::Communication(format!(
                "payment intent {id} awaits a payment method"
            ))),
        },
        IntentStatus::Canceled => Ok(ProcessorOutcome::Canceled {
            processor_reference: id,
        }),
        IntentStatus::Processing => Err(ProcessorError::Communication(format!(
            "payment intent {id} is still processing"
        ))),
        IntentStatus::RequiresConfirmation => Err(ProcessorError::Communication(format!(
            "payment intent {id} was not confirmed (requires_confirmation)"
        ))),
        IntentStatus::Unknown => Err(ProcessorError::Communication(format!(
            "payment intent {id} has a status the adapter does not know"
        ))),
    }
}
