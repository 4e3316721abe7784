//! A [`CardProcessor`] decorator that times every processor call and counts its outcome.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use checkout_domain::card::CardDetails;
use checkout_domain::ports::{
    AuthorizationRequest, CaptureRequest, CardProcessor, DisputeReport, ProcessorError,
    ProcessorOutcome, RefundOutcome, RefundRequest,
};
use checkout_domain::values::AttemptId;

/// Counter: processor calls, by `call` and `outcome`.
pub const CALLS_TOTAL: &str = "checkout_processor_calls_total";
/// Histogram: seconds a processor call took, by `call` and `outcome`.
pub const CALL_DURATION: &str = "checkout_processor_call_duration_seconds";

/// Wraps a processor; every call records [`CALLS_TOTAL`] and [`CALL_DURATION`] with `call`
/// one of `tokenize`, `authorize`, `retrieve`, `challenge`, `cancel`, `capture`, `refund`, `refund_status`, `dispute` and
/// `outcome` one of `tokenized`, `captured`, `authorized`, `declined`, `challenge_required`,
/// `canceled`, `refunded`, `refund_pending`, `refund_failed`, `dispute_read`, `unreachable` (no answer:
/// SVC_003) or `refused` (SVC_004). Nothing of the request (card,
/// references, amounts) becomes a label.
pub struct MeteredProcessor {
    inner: Arc<dyn CardProcessor>,
}

impl MeteredProcessor {
    /// Meters `inner`.
    pub fn new(inner: Arc<dyn CardProcessor>) -> MeteredProcessor {
        MeteredProcessor { inner }
    }
}

fn outcome_label(outcome: &ProcessorOutcome) -> &'static str {
    match outcome {
        ProcessorOutcome::Approved { captured: true, .. } => "captured",
        ProcessorOutcome::Approved {
            captured: false, ..
        } => "authorized",
        ProcessorOutcome::Declined { .. } => "declined",
        ProcessorOutcome::ChallengeRequired { .. } => "challenge_required",
        ProcessorOutcome::Canceled { .. } => "canceled",
    }
}

fn refund_label(result: &Result<RefundOutcome, ProcessorError>) -> &'static str {
    match result {
        Ok(RefundOutcome::Succeeded { .. }) => "refunded",
        Ok(RefundOutcome::Pending { .. }) => "refund_pending",
        Ok(RefundOutcome::Failed { .. }) => "refund_failed",
        Err(error) => error_label(error),
    }
}

fn error_label(error: &ProcessorError) -> &'static str {
    match error {
        ProcessorError::Communication(_) => "unreachable",
        ProcessorError::Controlled(_) => "refused",
    }
}

fn record(call: &'static str, outcome: &'static str, started: Instant) {
    let labels = [("call", call), ("outcome", outcome)];
    metrics::counter!(CALLS_TOTAL, &labels).increment(1);
    metrics::histogram!(CALL_DURATION, &labels).record(started.elapsed().as_secs_f64());
}

fn record_outcome(
    call: &'static str,
    started: Instant,
    result: Result<ProcessorOutcome, ProcessorError>,
) -> Result<ProcessorOutcome, ProcessorError> {
    let outcome = match &result {
        Ok(outcome) => outcome_label(outcome),
        Err(error) => error_label(error),
    };
    record(call, outcome, started);
    result
}

#[async_trait]
impl CardProcessor for MeteredProcessor {
    async fn tokenize(
        &self,
        attempt: AttemptId,
        card: &CardDetails,
    ) -> Result<String, ProcessorError> {
        let started = Instant::now();
        let result = self.inner.tokenize(attempt, card).await;
        let outcome = match &result {
            Ok(_) => "tokenized",
            Err(error) => error_label(error),
        };
        record("tokenize", outcome, started);
        result
    }

    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let started = Instant::now();
        record_outcome("authorize", started, self.inner.authorize(request).await)
    }

    async fn retrieve(
        &self,
        processor_reference: &str,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let started = Instant::now();
        record_outcome(
            "retrieve",
            started,
            self.inner.retrieve(processor_reference).await,
        )
    }

    async fn answer_challenge(
        &self,
        processor_reference: &str,
        passed: bool,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        let started = Instant::now();
        let result = self
            .inner
            .answer_challenge(processor_reference, passed)
            .await;
        record_outcome("challenge", started, result)
    }

    async fn cancel(&self, processor_reference: &str) -> Result<ProcessorOutcome, ProcessorError> {
        let started = Instant::now();
        record_outcome(
            "cancel",
            started,
            self.inner.cancel(processor_reference).await,
        )
    }

    async fn capture(
        &self,
        request: CaptureRequest<'_>,
    ) -> Result<rust_decimal::Decimal, ProcessorError> {
        let started = Instant::now();
        let result = self.inner.capture(request).await;
        let outcome = match &result {
            Ok(_) => "captured",
            Err(error) => error_label(error),
        };
        record("capture", outcome, started);
        result
    }

    async fn refund(&self, request: RefundRequest<'_>) -> Result<RefundOutcome, ProcessorError> {
        let started = Instant::now();
        let result = self.inner.refund(request).await;
        record("refund", refund_label(&result), started);
        result
    }

    async fn refund_status(&self, refund_reference: &str) -> Result<RefundOutcome, ProcessorError> {
        let started = Instant::now();
        let result = self.inner.refund_status(refund_reference).await;
        record("refund_status", refund_label(&result), started);
        result
    }

    async fn dispute(&self, dispute_reference: &str) -> Result<DisputeReport, ProcessorError> {
        let started = Instant::now();
        let result = self.inner.dispute(dispute_reference).await;
        let label = match &result {
            Ok(_) => "dispute_read",
            Err(e) => error_label(e),
        };
        record("dispute", label, started);
        result
    }
}
