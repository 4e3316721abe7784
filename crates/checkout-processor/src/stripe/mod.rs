//! The Stripe adapter: the public PaymentIntents API over HTTP, tested against localstripe.

mod amount;
mod api;
mod client;
mod config;
mod lookup;
mod outcome;

use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use checkout_domain::ports::{
    AuthorizationRequest, CardProcessor, ChallengeAnswer, ProcessorError, ProcessorOutcome,
};
use checkout_domain::values::AttemptId;

pub use config::StripeConfig;

use crate::redact::redact;
use api::{ApiError, IntentStatus, PaymentIntent, PaymentMethod};
use client::{CallError, Client, Form};
use config::{check_base_url, ApiKey};
use outcome::outcome_of;

/// A card processor speaking Stripe's PaymentIntents API (form-encoded, idempotency keys
/// derived from the attempt, one timeout per call).
pub struct StripeProcessor {
    client: Client,
    /// Cleared when the server refuses `return_url` (localstripe does).
    sends_return_url: AtomicBool,
}

impl std::fmt::Debug for StripeProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StripeProcessor")
            .field("base_url", &self.client.base_url().as_str())
            .finish_non_exhaustive()
    }
}

impl StripeProcessor {
    /// Checks `config` (an http(s) base URL, a non-empty key, a non-zero timeout) and builds the
    /// HTTP client.
    pub fn new(config: StripeConfig) -> anyhow::Result<Self> {
        check_base_url(&config.base_url)?;
        if config.timeout.is_zero() {
            anyhow::bail!("the Stripe timeout must be greater than zero");
        }
        let api_key = ApiKey::parse(config.api_key)?;
        Ok(StripeProcessor {
            client: Client::new(config.base_url, api_key, config.timeout)?,
            sends_return_url: AtomicBool::new(true),
        })
    }

    async fn authorize_card(
        &self,
        request: &AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let key = request.attempt.idempotency_key();
        let minor_units = amount::minor_units(request.amount).ok_or_else(|| {
            ProcessorError::Controlled("the amount does not fit Stripe's minor units".into())
        })?;

        let card = request.card;
        let card_form: Form = vec![
            ("type", "card".into()),
            ("card[number]", card.number.expose_digits().to_owned()),
            ("card[exp_month]", card.expiry.month().to_string()),
            ("card[exp_year]", card.expiry.year().to_string()),
            ("card[cvc]", card.cvv.expose_digits().to_owned()),
            ("billing_details[name]", card.holder.as_str().to_owned()),
        ];
        let created = self
            .client
            .post::<PaymentMethod>(
                "create payment method",
                &["v1", "payment_methods"],
                &format!("{key}-payment-method"),
                &card_form,
            )
            .await;
        drop(card_form);
        let payment_method = match created {
            Ok(pm) => pm,
            Err(e) => return answer_for(e),
        };

        let mut form: Form = vec![
            ("amount", minor_units.to_string()),
            (
                "currency",
                request.amount.currency().code().to_ascii_lowercase(),
            ),
            ("payment_method", payment_method.id),
            ("payment_method_types[0]", "card".into()),
            ("confirm", "true".into()),
            ("metadata[attempt]", request.attempt.to_string()),
            ("metadata[session]", request.session.to_string()),
            (
                "metadata[internal_reference]",
                request.internal_reference.as_str().to_owned(),
            ),
        ];
        if self.sends_return_url.load(Ordering::Relaxed) {
            form.push(("return_url", request.return_url.to_owned()));
        }
        let intent_key = format!("{key}-payment-intent");
        let mut created = self.create_intent(&intent_key, &form).await;
        if matches!(&created, Err(CallError::Refused { error, .. }) if refuses_return_url(error)) {
            // localstripe: a 400 raised before anything was created. Retry without it.
            tracing::warn!("the Stripe server refuses return_url; sending none from now on");
            self.sends_return_url.store(false, Ordering::Relaxed);
            form.retain(|(name, _)| *name != "return_url");
            created = self.create_intent(&intent_key, &form).await;
        }
        match created {
            Ok(intent) => outcome_of(&intent),
            Err(e) => answer_for(e),
        }
    }

    async fn create_intent(&self, key: &str, form: &Form) -> Result<PaymentIntent, CallError> {
        self.client
            .post(
                "create payment intent",
                &["v1", "payment_intents"],
                key,
                form,
            )
            .await
    }

    async fn settle_challenge(
        &self,
        reference: &str,
        answer: ChallengeAnswer,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let mut intent = match self.retrieve(reference).await {
            Ok(intent) => intent,
            Err(e) => return answer_for(e),
        };
        if intent.status == IntentStatus::RequiresAction && answer != ChallengeAnswer::Returned {
            // localstripe's stand-in for the payer's 3DS page.
            let success = answer == ChallengeAnswer::Passed;
            let client_secret = intent.client_secret.take().ok_or_else(|| {
                ProcessorError::Controlled(format!(
                    "payment intent {reference} has no client secret"
                ))
            })?;
            let form: Form = vec![
                ("client_secret", client_secret),
                ("success", success.to_string()),
            ];
            intent = match self
                .client
                .post::<PaymentIntent>(
                    "authenticate payment intent",
                    &["v1", "payment_intents", reference, "_authenticate"],
                    &format!("hc-challenge-{reference}-{success}"),
                    &form,
                )
                .await
            {
                Ok(intent) => intent,
                // A decline at charge time, after a passed authentication.
                Err(e) => return answer_for(e).map(|o| about_intent(o, reference)),
            };
        }
        if intent.status == IntentStatus::RequiresAction {
            // The payer came back without authenticating: cancel, so that "declined" is true.
            return self.abandon(reference).await;
        }
        settled(&intent)
    }

    async fn retrieve(&self, reference: &str) -> Result<PaymentIntent, CallError> {
        self.client
            .get(
                "retrieve payment intent",
                &["v1", "payment_intents", reference],
                &[],
            )
            .await
    }

    async fn abandon(&self, reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        let canceled = self
            .client
            .post::<PaymentIntent>(
                "cancel payment intent",
                &["v1", "payment_intents", reference, "cancel"],
                &format!("hc-cancel-{reference}"),
                &Form::new(),
            )
            .await;
        match canceled {
            Ok(intent) if intent.status == IntentStatus::Canceled => {
                Ok(ProcessorOutcome::Declined {
                    processor_reference: Some(intent.id),
                    reason: "authentication_not_completed".into(),
                })
            }
            Ok(intent) => settled(&intent),
            Err(e) => answer_for(e),
        }
    }
}

/// The outcome of an intent whose challenge was answered: never a challenge again.
fn settled(intent: &PaymentIntent) -> Result<ProcessorOutcome, ProcessorError> {
    match outcome_of(intent)? {
        ProcessorOutcome::ChallengeRequired { .. } => Err(ProcessorError::Communication(format!(
            "payment intent {} still awaits authentication",
            intent.id
        ))),
        outcome => Ok(outcome),
    }
}

/// The answer a failed call gives: a 402 is a decline, another 4xx a controlled error, the
/// rest a communication error.
fn answer_for(error: CallError) -> Result<ProcessorOutcome, ProcessorError> {
    match error {
        CallError::Declined(error) => Ok(ProcessorOutcome::Declined {
            processor_reference: error.reference(),
            reason: error.reason(),
        }),
        other => Err(failure_of(other)),
    }
}

/// A decline of the intent `reference` names that intent (a 402 body may name only a charge).
fn about_intent(outcome: ProcessorOutcome, reference: &str) -> ProcessorOutcome {
    match outcome {
        ProcessorOutcome::Declined { reason, .. } => ProcessorOutcome::Declined {
            processor_reference: Some(reference.to_owned()),
            reason,
        },
        other => other,
    }
}

/// A failed call as a processor error (a decline where none is expected is a refusal).
fn failure_of(error: CallError) -> ProcessorError {
    match error {
        CallError::Declined(error) => {
            ProcessorError::Controlled(format!("HTTP 402: {}", error.describe()))
        }
        CallError::Refused {
            call,
            status,
            error,
        } => ProcessorError::Controlled(format!(
            "{call}: HTTP {}: {}",
            status.as_u16(),
            error.describe()
        )),
        CallError::Unreachable(text) => ProcessorError::Communication(text),
    }
}

/// localstripe's refusal of the `return_url` parameter.
fn refuses_return_url(error: &ApiError) -> bool {
    error.message.as_deref() == Some("Unexpected return_url")
}

/// A processor reference goes into a URL path: Stripe ids are letters, digits and `_`.
fn check_reference(reference: &str) -> Result<(), ProcessorError> {
    let well_formed = !reference.is_empty()
        && reference.len() <= 255
        && reference
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if well_formed {
        Ok(())
    } else {
        Err(ProcessorError::Controlled(
            "malformed processor reference".into(),
        ))
    }
}

/// Redacts every text of an answer (card number and CVV, any long digit group).
fn scrubbed(
    answer: Result<ProcessorOutcome, ProcessorError>,
    secrets: &[&str],
) -> Result<ProcessorOutcome, ProcessorError> {
    match answer {
        Ok(ProcessorOutcome::Declined {
            processor_reference,
            reason,
        }) => Ok(ProcessorOutcome::Declined {
            processor_reference,
            reason: redact(&reason, secrets),
        }),
        Ok(other) => Ok(other),
        Err(ProcessorError::Communication(text)) => {
            Err(ProcessorError::Communication(redact(&text, secrets)))
        }
        Err(ProcessorError::Controlled(text)) => {
            Err(ProcessorError::Controlled(redact(&text, secrets)))
        }
    }
}

#[async_trait]
impl CardProcessor for StripeProcessor {
    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let card = request.card;
        let answer = self.authorize_card(&request).await;
        let answer = scrubbed(
            answer,
            &[card.number.expose_digits(), card.cvv.expose_digits()],
        );
        match &answer {
            Ok(outcome) => {
                tracing::debug!(attempt = %request.attempt, ?outcome, "stripe authorisation")
            }
            Err(error) => {
                tracing::debug!(attempt = %request.attempt, %error, "stripe authorisation failed")
            }
        }
        answer
    }

    async fn complete_challenge(
        &self,
        processor_reference: &str,
        answer: ChallengeAnswer,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        check_reference(processor_reference)?;
        scrubbed(
            self.settle_challenge(processor_reference, answer).await,
            &[],
        )
    }

    async fn lookup(&self, attempt: AttemptId) -> Result<Option<ProcessorOutcome>, ProcessorError> {
        lookup::find(&self.client, attempt)
            .await
            .map_err(|e| match e {
                ProcessorError::Communication(text) => {
                    ProcessorError::Communication(redact(&text, &[]))
                }
                ProcessorError::Controlled(text) => ProcessorError::Controlled(redact(&text, &[])),
            })
    }
}
