//! The Stripe adapter: the public PaymentIntents API over HTTP, as real Stripe speaks it.
//! localstripe's dialect of it is `testing::localstripe`, behind the `testing` feature.

mod amount;
pub(crate) mod api;
pub(crate) mod client;
mod config;
mod events;
pub(crate) mod outcome;

use async_trait::async_trait;
use checkout_domain::card::CardDetails;
use checkout_domain::ports::{
    AuthorizationRequest, CaptureRequest, CardProcessor, DisputeReport, ProcessorError,
    ProcessorOutcome, RefundOutcome, RefundRequest,
};
use checkout_domain::session::DisputeStatus;
use checkout_domain::terminal::CaptureMethod;
use checkout_domain::values::{AttemptId, Currency};
use rust_decimal::Decimal;

pub use config::StripeConfig;
pub use events::{StripeEvents, DEFAULT_TOLERANCE};

use crate::redact::redact;
use api::{Dispute, IntentStatus, PaymentIntent, PaymentMethod, Refund};
use client::{CallError, Client, Form};
use config::{check_base_url, ApiKey};
use outcome::outcome_of;

/// A card processor speaking Stripe's PaymentIntents API (form-encoded, idempotency keys
/// derived from the attempt, one timeout per call). A lost answer is recovered by sending the
/// same request again with the same key; it never lists or searches, since Stripe's lists lag
/// behind its writes. Every intent create sends `return_url`: a challenge is hosted by Stripe,
/// which sends the payer back there.
pub struct StripeProcessor {
    client: Client,
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
        })
    }

    /// The HTTP client, for the localstripe dialect's own calls.
    #[cfg(feature = "testing")]
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    async fn create_payment_method(
        &self,
        attempt: AttemptId,
        card: &CardDetails,
    ) -> Result<String, ProcessorError> {
        let card_form: Form = vec![
            ("type", "card".into()),
            ("card[number]", card.number.expose_digits().to_owned()),
            ("card[exp_month]", card.expiry.month().to_string()),
            ("card[exp_year]", card.expiry.year().to_string()),
            ("card[cvc]", card.cvv.expose_digits().to_owned()),
            ("billing_details[name]", card.holder.as_str().to_owned()),
        ];
        let key = format!("{}-payment-method", attempt.idempotency_key());
        let created = self
            .client
            .post::<PaymentMethod>(
                "create payment method",
                &["v1", "payment_methods"],
                Some(&key),
                &card_form,
            )
            .await;
        drop(card_form);
        match created {
            Ok(pm) => Ok(pm.id),
            // A card the processor will not take (a 402 here): nothing was asked for.
            Err(CallError::Declined(error)) => Err(ProcessorError::Controlled(format!(
                "create payment method: HTTP 402: {}",
                error.describe()
            ))),
            Err(e) => Err(failure_of(e)),
        }
    }

    /// Sends `form`, the intent create of `request` (see [`intent_form`]), under the attempt's
    /// key, and reads the answer; what comes back is redacted and logged.
    pub(crate) async fn send_authorization(
        &self,
        request: &AuthorizationRequest<'_>,
        form: &Form,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let answer = scrubbed(self.authorize_payment(request, form).await);
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

    async fn authorize_payment(
        &self,
        request: &AuthorizationRequest<'_>,
        form: &Form,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let key = format!("{}-payment-intent", request.attempt.idempotency_key());
        match self.create_intent(&key, form).await {
            Ok(intent) => outcome_of(&intent),
            Err(CallError::Declined(error)) => Ok(ProcessorOutcome::Declined {
                processor_reference: error.reference(),
                reason: error.reason(),
            }),
            // A refusal that names an intent is about an intent that exists: what it holds
            // decides, read afresh.
            Err(CallError::Refused { error, .. }) if error.payment_intent.is_some() => {
                let id = error.payment_intent.map(|pi| pi.id).unwrap_or_default();
                self.read(&id).await
            }
            // A refusal naming no intent: the request was refused before anything was made.
            Err(e) => Err(failure_of(e)),
        }
    }

    async fn create_intent(&self, key: &str, form: &Form) -> Result<PaymentIntent, CallError> {
        self.client
            .post(
                "create payment intent",
                &["v1", "payment_intents"],
                Some(key),
                form,
            )
            .await
    }

    /// What the intent `reference` holds now (a retrieve: never behind the processor's
    /// writes). A refused read says nothing about a charge: a communication error.
    async fn read(&self, reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        // A reference that cannot be asked about says nothing about a charge.
        check_reference(reference).map_err(|_| {
            ProcessorError::Communication("a payment intent id that cannot be read".into())
        })?;
        match self
            .client
            .get::<PaymentIntent>(
                "retrieve payment intent",
                &["v1", "payment_intents", reference],
                &[],
            )
            .await
        {
            Ok(intent) => outcome_of(&intent),
            Err(CallError::Unreachable(text)) => Err(ProcessorError::Communication(text)),
            Err(e) => Err(ProcessorError::Communication(format!(
                "retrieve payment intent {reference}: {}",
                match failure_of(e) {
                    ProcessorError::Controlled(text) | ProcessorError::Communication(text) => text,
                }
            ))),
        }
    }

    async fn cancel_intent(&self, reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        check_reference(reference)?;
        let canceled = self
            .client
            .post::<PaymentIntent>(
                "cancel payment intent",
                &["v1", "payment_intents", reference, "cancel"],
                None,
                &Form::new(),
            )
            .await;
        match canceled {
            Ok(intent) => outcome_of(&intent),
            // Refused (already succeeded, or canceled): what it holds now decides.
            Err(CallError::Refused { .. }) => self.read(reference).await,
            Err(e) => Err(failure_of(e)),
        }
    }
}

impl StripeProcessor {
    /// Captures an intent held with `requires_capture` (`amount_to_capture` in minor units),
    /// under a key derived from the capture's ledger row (its action). A refusal is read afresh: an intent already
    /// captured answers its captured amount.
    async fn capture_intent(
        &self,
        request: &CaptureRequest<'_>,
    ) -> Result<Decimal, ProcessorError> {
        check_reference(request.processor_reference)?;
        let currency = request.amount.currency();
        let minor = amount::minor_units(request.amount).ok_or_else(|| {
            ProcessorError::Controlled("the amount does not fit Stripe's minor units".into())
        })?;
        let key = format!("{}-capture", request.action.idempotency_key());
        let form: Form = vec![("amount_to_capture", minor.to_string())];
        let captured = self
            .client
            .post::<PaymentIntent>(
                "capture payment intent",
                &[
                    "v1",
                    "payment_intents",
                    request.processor_reference,
                    "capture",
                ],
                Some(&key),
                &form,
            )
            .await;
        let intent = match captured {
            Ok(intent) => intent,
            Err(CallError::Refused { .. } | CallError::Declined(_)) => {
                // Already captured, cancelled, or an amount refused: what it holds decides.
                self.client
                    .get::<PaymentIntent>(
                        "retrieve payment intent",
                        &["v1", "payment_intents", request.processor_reference],
                        &[],
                    )
                    .await
                    .map_err(|e| ProcessorError::Communication(describe(e)))?
            }
            Err(e) => {
                // No answer (or a 5xx Stripe may have saved under the key, which every
                // replay would repeat): the intent itself tells whether it is captured. An
                // intent is captured once, so a captured one holds this capture's amount.
                let failure = failure_of(e);
                if !matches!(failure, ProcessorError::Communication(_)) {
                    return Err(failure);
                }
                match self
                    .client
                    .get::<PaymentIntent>(
                        "retrieve payment intent",
                        &["v1", "payment_intents", request.processor_reference],
                        &[],
                    )
                    .await
                {
                    Ok(intent) if intent.status == IntentStatus::Succeeded => intent,
                    _ => return Err(failure),
                }
            }
        };
        match intent.status {
            IntentStatus::Succeeded => {
                Ok(amount::from_minor_units(intent.amount_received, currency))
            }
            IntentStatus::RequiresCapture => Err(ProcessorError::Controlled(format!(
                "payment intent {} was not captured",
                intent.id
            ))),
            IntentStatus::Canceled => Err(ProcessorError::Controlled(format!(
                "payment intent {} is canceled",
                intent.id
            ))),
            _ => Err(ProcessorError::Communication(format!(
                "payment intent {} cannot be told captured",
                intent.id
            ))),
        }
    }

    /// Creates a refund of the intent, under the refund's own key.
    async fn create_refund(
        &self,
        request: &RefundRequest<'_>,
    ) -> Result<RefundOutcome, ProcessorError> {
        check_reference(request.processor_reference)?;
        let minor = amount::minor_units(request.amount).ok_or_else(|| {
            ProcessorError::Controlled("the amount does not fit Stripe's minor units".into())
        })?;
        let form: Form = vec![
            ("payment_intent", request.processor_reference.to_owned()),
            ("amount", minor.to_string()),
            ("metadata[refund]", request.refund.to_string()),
        ];
        let created = self
            .client
            .post::<Refund>(
                "create refund",
                &["v1", "refunds"],
                Some(&request.refund.idempotency_key()),
                &form,
            )
            .await
            .map_err(failure_of)?;
        Ok(refund_outcome(created))
    }

    /// Reads the refund `reference` (a retrieve: never behind Stripe's own writes).
    async fn read_refund(&self, reference: &str) -> Result<RefundOutcome, ProcessorError> {
        check_reference(reference)?;
        let refund = self
            .client
            .get::<Refund>("retrieve refund", &["v1", "refunds", reference], &[])
            .await
            .map_err(|e| ProcessorError::Communication(describe(e)))?;
        Ok(refund_outcome(refund))
    }

    async fn read_dispute(&self, reference: &str) -> Result<DisputeReport, ProcessorError> {
        check_reference(reference)?;
        let dispute = self
            .client
            .get::<Dispute>("retrieve dispute", &["v1", "disputes", reference], &[])
            .await
            .map_err(failure_of)?;
        dispute_report(dispute)
    }
}

/// What the service keeps of a Stripe dispute.
fn dispute_report(dispute: Dispute) -> Result<DisputeReport, ProcessorError> {
    let status = match dispute.status.as_str() {
        "warning_needs_response" | "needs_response" => DisputeStatus::NeedsResponse,
        "warning_under_review" | "under_review" => DisputeStatus::UnderReview,
        "won" | "prevented" => DisputeStatus::Won,
        "lost" => DisputeStatus::Lost,
        "warning_closed" => DisputeStatus::InquiryClosed,
        other => {
            // A status this adapter does not know: the event is answered with an error, so
            // Stripe delivers it again, and the log names it.
            return Err(ProcessorError::Communication(format!(
                "retrieve dispute: unknown status {other:?}"
            )));
        }
    };
    let currency = Currency::parse(&dispute.currency.to_ascii_uppercase()).map_err(|_| {
        ProcessorError::Communication(format!(
            "retrieve dispute: unknown currency {:?}",
            dispute.currency
        ))
    })?;
    let payment_reference = dispute.payment_intent.ok_or_else(|| {
        ProcessorError::Communication("retrieve dispute: no payment_intent".into())
    })?;
    Ok(DisputeReport {
        reference: dispute.id,
        payment_reference,
        amount: amount::from_minor_units(dispute.amount, currency),
        reason: dispute.reason.chars().take(100).collect(),
        status,
    })
}

/// A refund's answer with its failure reason and any error text redacted.
fn redacted_refund(
    answer: Result<RefundOutcome, ProcessorError>,
) -> Result<RefundOutcome, ProcessorError> {
    match answer {
        Ok(RefundOutcome::Failed {
            refund_reference,
            reason,
        }) => Ok(RefundOutcome::Failed {
            refund_reference,
            reason: redact(&reason, &[]),
        }),
        Ok(other) => Ok(other),
        Err(e) => Err(scrub_error(e, &[])),
    }
}

/// What a Refund object says: `succeeded`, `failed` or `canceled` (nothing refunded), or not
/// final yet (`pending`, `requires_action`).
fn refund_outcome(refund: Refund) -> RefundOutcome {
    match refund.status.as_str() {
        "succeeded" => RefundOutcome::Succeeded {
            refund_reference: refund.id,
        },
        "failed" | "canceled" => RefundOutcome::Failed {
            refund_reference: Some(refund.id),
            reason: refund
                .failure_reason
                .unwrap_or_else(|| refund.status.clone()),
        },
        _ => RefundOutcome::Pending {
            refund_reference: refund.id,
        },
    }
}

/// The intent create of `request`: the same form on every send, so that a replay with the same
/// key is recognised.
pub(crate) fn intent_form(request: &AuthorizationRequest<'_>) -> Result<Form, ProcessorError> {
    let minor_units = amount::minor_units(request.amount).ok_or_else(|| {
        ProcessorError::Controlled("the amount does not fit Stripe's minor units".into())
    })?;
    let mut form: Form = vec![
        ("amount", minor_units.to_string()),
        (
            "currency",
            request.amount.currency().code().to_ascii_lowercase(),
        ),
        ("payment_method", request.payment_method.to_owned()),
        ("payment_method_types[0]", "card".into()),
        ("confirm", "true".into()),
        ("metadata[attempt]", request.attempt.to_string()),
        ("metadata[session]", request.session.to_string()),
        (
            "metadata[internal_reference]",
            request.internal_reference.as_str().to_owned(),
        ),
        // Where Stripe sends the payer back after a challenge on its own page.
        ("return_url", request.return_url.to_owned()),
    ];
    // A held authorisation (`requires_capture`) for the merchant to capture or void. Only
    // sent when asked: automatic capture is Stripe's default, and leaving the field out keeps
    // the request of an attempt begun before this field existed the same on a replay.
    if request.capture == CaptureMethod::Manual {
        form.push(("capture_method", "manual".into()));
    }
    Ok(form)
}

/// The text of a failed call, whatever its kind.
fn describe(error: CallError) -> String {
    match failure_of(error) {
        ProcessorError::Controlled(text) | ProcessorError::Communication(text) => text,
    }
}

/// A failed call as a processor error (a decline where none is expected is a refusal).
pub(crate) fn failure_of(error: CallError) -> ProcessorError {
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

/// A processor reference goes into a URL path: Stripe ids are letters, digits and `_`.
pub(crate) fn check_reference(reference: &str) -> Result<(), ProcessorError> {
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

/// Redacts the text of an error (card number and CVV, any long digit group).
fn scrub_error(error: ProcessorError, secrets: &[&str]) -> ProcessorError {
    match error {
        ProcessorError::Communication(text) => {
            ProcessorError::Communication(redact(&text, secrets))
        }
        ProcessorError::Controlled(text) => ProcessorError::Controlled(redact(&text, secrets)),
    }
}

/// Redacts every text of an answer.
pub(crate) fn scrubbed(
    answer: Result<ProcessorOutcome, ProcessorError>,
) -> Result<ProcessorOutcome, ProcessorError> {
    match answer {
        Ok(ProcessorOutcome::Declined {
            processor_reference,
            reason,
        }) => Ok(ProcessorOutcome::Declined {
            processor_reference,
            reason: redact(&reason, &[]),
        }),
        Ok(other) => Ok(other),
        Err(e) => Err(scrub_error(e, &[])),
    }
}

#[async_trait]
impl CardProcessor for StripeProcessor {
    async fn tokenize(
        &self,
        attempt: AttemptId,
        card: &CardDetails,
    ) -> Result<String, ProcessorError> {
        let secrets = [card.number.expose_digits(), card.cvv.expose_digits()];
        self.create_payment_method(attempt, card)
            .await
            .map_err(|e| scrub_error(e, &secrets))
    }

    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let form = intent_form(&request)?;
        self.send_authorization(&request, &form).await
    }

    async fn retrieve(
        &self,
        processor_reference: &str,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        scrubbed(self.read(processor_reference).await)
    }

    /// Stripe hosts its challenges: the payer answers on Stripe's own page (the intent's
    /// `next_action.redirect_to_url`) and Stripe sends them back to `return_url`, where the
    /// service reads the intent with `retrieve`. Stripe's API takes no answer on the payer's
    /// behalf, so this sends nothing and answers `Controlled`, as the port allows for a
    /// processor that hosts its own challenges: the caller then reads the intent with
    /// `retrieve` and assumes nothing about a charge.
    async fn answer_challenge(
        &self,
        _processor_reference: &str,
        _passed: bool,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        Err(ProcessorError::Controlled(
            "Stripe hosts its challenges: the payer answers on Stripe's page, not through the API"
                .into(),
        ))
    }

    async fn cancel(&self, processor_reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        scrubbed(self.cancel_intent(processor_reference).await)
    }

    async fn capture(&self, request: CaptureRequest<'_>) -> Result<Decimal, ProcessorError> {
        self.capture_intent(&request)
            .await
            .map_err(|e| scrub_error(e, &[]))
    }

    async fn refund(&self, request: RefundRequest<'_>) -> Result<RefundOutcome, ProcessorError> {
        redacted_refund(self.create_refund(&request).await)
    }

    async fn refund_status(&self, refund_reference: &str) -> Result<RefundOutcome, ProcessorError> {
        redacted_refund(self.read_refund(refund_reference).await)
    }

    async fn dispute(&self, dispute_reference: &str) -> Result<DisputeReport, ProcessorError> {
        self.read_dispute(dispute_reference)
            .await
            .map_err(|e| scrub_error(e, &[]))
    }
}
