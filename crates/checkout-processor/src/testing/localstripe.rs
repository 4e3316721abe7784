//! localstripe's dialect of the Stripe API, for tests against localstripe (1.15), a fake Stripe
//! server: [`LocalstripeProcessor`] is the Stripe adapter with the two differences localstripe
//! needs and real Stripe does not have.

use async_trait::async_trait;
use checkout_domain::card::CardDetails;
use checkout_domain::ports::{
    AuthorizationRequest, CaptureRequest, CardProcessor, DisputeReport, ProcessorError,
    ProcessorOutcome, RefundOutcome, RefundRequest,
};
use checkout_domain::values::AttemptId;
use rust_decimal::Decimal;

use crate::stripe::api::{IntentStatus, PaymentIntent};
use crate::stripe::client::{CallError, Form};
use crate::stripe::outcome::outcome_of;
use crate::stripe::{check_reference, failure_of, intent_form, scrubbed};
use crate::{StripeConfig, StripeProcessor};

/// The Stripe adapter speaking to localstripe. Every call is [`StripeProcessor`]'s, except two:
/// the intent create goes without `return_url` (localstripe refuses it with "Unexpected
/// return_url"), and a challenge, which localstripe never hosts, is answered through its
/// private `POST /v1/payment_intents/{id}/_authenticate`. Real Stripe has no such route.
#[derive(Debug)]
pub struct LocalstripeProcessor {
    stripe: StripeProcessor,
}

impl LocalstripeProcessor {
    /// Checks `config` as [`StripeProcessor::new`] does; its base URL is localstripe's.
    pub fn new(config: StripeConfig) -> anyhow::Result<Self> {
        Ok(LocalstripeProcessor {
            stripe: StripeProcessor::new(config)?,
        })
    }

    /// The payer's answer, given to localstripe in their place: the intent is read first, and
    /// only one still waiting for its challenge is authenticated (with its client secret).
    async fn authenticate(
        &self,
        reference: &str,
        passed: bool,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let client = self.stripe.client();
        let intent = client
            .get::<PaymentIntent>(
                "retrieve payment intent",
                &["v1", "payment_intents", reference],
                &[],
            )
            .await
            .map_err(failure_of)?;
        if intent.status != IntentStatus::RequiresAction {
            return outcome_of(&intent);
        }
        let client_secret = intent.client_secret.ok_or_else(|| {
            ProcessorError::Controlled(format!("payment intent {reference} has no client secret"))
        })?;
        let form: Form = vec![
            ("client_secret", client_secret),
            ("success", passed.to_string()),
        ];
        match client
            .post::<PaymentIntent>(
                "authenticate payment intent",
                &["v1", "payment_intents", reference, "_authenticate"],
                None,
                &form,
            )
            .await
        {
            Ok(intent) => outcome_of(&intent),
            // A decline at charge time, after a passed authentication.
            Err(CallError::Declined(error)) => Ok(ProcessorOutcome::Declined {
                processor_reference: Some(reference.to_owned()),
                reason: error.reason(),
            }),
            Err(e) => Err(failure_of(e)),
        }
    }
}

#[async_trait]
impl CardProcessor for LocalstripeProcessor {
    async fn tokenize(
        &self,
        attempt: AttemptId,
        card: &CardDetails,
    ) -> Result<String, ProcessorError> {
        self.stripe.tokenize(attempt, card).await
    }

    /// Stripe's intent create without `return_url`.
    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let mut form = intent_form(&request)?;
        form.retain(|(name, _)| *name != "return_url");
        self.stripe.send_authorization(&request, &form).await
    }

    async fn retrieve(
        &self,
        processor_reference: &str,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.stripe.retrieve(processor_reference).await
    }

    /// Through localstripe's `_authenticate`, as the payer would on Stripe's page.
    async fn answer_challenge(
        &self,
        processor_reference: &str,
        passed: bool,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        check_reference(processor_reference)?;
        scrubbed(self.authenticate(processor_reference, passed).await)
    }

    async fn cancel(&self, processor_reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        self.stripe.cancel(processor_reference).await
    }

    async fn capture(&self, request: CaptureRequest<'_>) -> Result<Decimal, ProcessorError> {
        self.stripe.capture(request).await
    }

    async fn refund(&self, request: RefundRequest<'_>) -> Result<RefundOutcome, ProcessorError> {
        self.stripe.refund(request).await
    }

    async fn refund_status(&self, refund_reference: &str) -> Result<RefundOutcome, ProcessorError> {
        self.stripe.refund_status(refund_reference).await
    }

    async fn dispute(&self, dispute_reference: &str) -> Result<DisputeReport, ProcessorError> {
        self.stripe.dispute(dispute_reference).await
    }
}
