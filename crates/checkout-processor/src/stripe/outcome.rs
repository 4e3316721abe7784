//! What a PaymentIntent's state means for the service.

use checkout_domain::ports::{ProcessorError, ProcessorOutcome};

use super::api::{IntentStatus, PaymentIntent};

/// The outcome an authorisation or a challenge answer reports for `intent`.
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
            None => Err(ProcessorError::Controlled(format!(
                "payment intent {id} was not confirmed (requires_payment_method)"
            ))),
        },
        IntentStatus::Canceled => Ok(ProcessorOutcome::Declined {
            processor_reference: Some(id),
            reason: "canceled".to_owned(),
        }),
        IntentStatus::Processing => Err(ProcessorError::Communication(format!(
            "payment intent {id} is still processing"
        ))),
        IntentStatus::RequiresConfirmation => Err(ProcessorError::Controlled(format!(
            "payment intent {id} was not confirmed (requires_confirmation)"
        ))),
        IntentStatus::Unknown => Err(ProcessorError::Communication(format!(
            "payment intent {id} has a status the adapter does not know"
        ))),
    }
}

/// What the processor holds for `intent`, as `lookup` reports it: `None` when the intent holds
/// no charge (never confirmed, or canceled), an error when that cannot be told yet.
pub(crate) fn holding_of(
    intent: &PaymentIntent,
) -> Result<Option<ProcessorOutcome>, ProcessorError> {
    match intent.status {
        IntentStatus::RequiresConfirmation | IntentStatus::Canceled => Ok(None),
        IntentStatus::RequiresPaymentMethod if intent.last_payment_error.is_none() => Ok(None),
        _ => outcome_of(intent).map(Some),
    }
}

/// Of several intents made for one attempt (a server without idempotency may have made more
/// than one), the one that matters most: an approval, else a challenge, else a decline.
pub(crate) fn most_significant(
    holdings: Vec<Result<Option<ProcessorOutcome>, ProcessorError>>,
) -> Result<Option<ProcessorOutcome>, ProcessorError> {
    let rank = |o: &ProcessorOutcome| match o {
        ProcessorOutcome::Approved { .. } => 0,
        ProcessorOutcome::ChallengeRequired { .. } => 1,
        ProcessorOutcome::Declined { .. } => 2,
    };
    let mut best: Option<ProcessorOutcome> = None;
    let mut unknown: Option<ProcessorError> = None;
    for holding in holdings {
        match holding {
            Ok(Some(outcome)) => {
                if best.as_ref().is_none_or(|b| rank(&outcome) < rank(b)) {
                    best = Some(outcome);
                }
            }
            Ok(None) => {}
            Err(e) => unknown = Some(e),
        }
    }
    match (best, unknown) {
        // An approval is what matters, whatever else is there.
        (Some(approved @ ProcessorOutcome::Approved { .. }), _) => Ok(Some(approved)),
        // An intent in an unknown state may yet hold a charge.
        (_, Some(e)) => Err(e),
        (best, None) => Ok(best),
    }
}
