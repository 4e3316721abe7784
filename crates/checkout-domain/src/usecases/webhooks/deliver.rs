//! Use case: the delivery workers. A worker claims due deliveries fairly (no endpoint or
//! terminal past its share, none of an open circuit's), makes one attempt at each, logs it,
//! schedules the next one and moves the endpoint's circuit.
//!
//! The attempts of one claim are independent: the caller runs them at once (each its own
//! task), so that an attempt that hangs until its time-out holds one slot, never the others.

use super::Webhooks;
use crate::webhooks::{
    AttemptOutcome, AttemptReport, AttemptSummary, CircuitEvent, DueDelivery, NextStep,
    WebhookBacklog,
};

/// How many times an attempt's circuit update is tried against racing attempts of the same
/// endpoint before it is given up (the next attempt's update carries on).
const HEALTH_RETRIES: usize = 8;

/// What a worker's attempts did, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryRun {
    /// Attempts made.
    pub attempted: u32,
    /// Attempts answered 2xx.
    pub delivered: u32,
    /// Attempts that failed and will be retried.
    pub retrying: u32,
    /// Deliveries that failed for good (the schedule ran out).
    pub failed: u32,
    /// Results that changed nothing (the lease was lost, or the endpoint was deleted or
    /// disabled).
    pub stale: u32,
    /// Circuits that opened.
    pub circuits_opened: u32,
    /// Endpoints that were disabled.
    pub disabled: u32,
}

impl DeliveryRun {
    /// Counts one attempt.
    pub fn add(&mut self, report: &AttemptReport) {
        self.attempted += 1;
        match report.outcome {
            AttemptOutcome::Delivered => self.delivered += 1,
            AttemptOutcome::Retrying => self.retrying += 1,
            AttemptOutcome::Failed => self.failed += 1,
            AttemptOutcome::Stale => self.stale += 1,
        }
        match report.circuit {
            Some(CircuitEvent::Opened { .. }) => self.circuits_opened += 1,
            Some(CircuitEvent::Disabled) => self.disabled += 1,
            Some(CircuitEvent::Recovered) | None => {}
        }
    }
}

impl Webhooks {
    /// Claims at most `limit` due deliveries (no more than the policy's batch), fairly across
    /// endpoints and terminals, each leased for one attempt.
    pub async fn claim_due(&self, limit: u32) -> anyhow::Result<Vec<DueDelivery>> {
        let limit = limit.min(self.policy.batch);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let now = self.ports.clock.now();
        self.ports
            .store
            .claim_due(now, now + self.policy.lease, limit, self.policy.share)
            .await
    }

    /// Gives back a claimed delivery without attempting it (a worker stopping): it stays
    /// due, and another worker may claim it at once. Returns whether the claim still held it.
    pub async fn release(&self, delivery: &DueDelivery) -> anyhow::Result<bool> {
        self.ports.store.release_claim(delivery).await
    }

    /// Makes one attempt at a claimed delivery. The attempt is logged whatever happens; a 2xx
    /// ends the delivery, any other outcome schedules the next attempt or, past the schedule,
    /// fails it; and the endpoint's circuit moves (see
    /// [`CircuitPolicy`](crate::webhooks::CircuitPolicy)).
    pub async fn attempt(&self, delivery: &DueDelivery) -> anyhow::Result<AttemptReport> {
        let body = self.ports.encoder.encode(&delivery.event);
        let result = self.ports.transport.send(delivery, &body).await;
        let delivered = result.delivered();
        let attempt = delivery.attempts_before + 1;
        let now = self.ports.clock.now();
        let next = self
            .policy
            .schedule
            .next(delivery.id, attempt, delivered, now);
        let changed = self
            .ports
            .store
            .record_attempt(delivery, &result, next)
            .await?;
        let outcome = match next {
            _ if !changed => AttemptOutcome::Stale,
            NextStep::Delivered => AttemptOutcome::Delivered,
            NextStep::RetryAt(_) => AttemptOutcome::Retrying,
            NextStep::GiveUp => AttemptOutcome::Failed,
        };
        let summary = AttemptSummary {
            status: result.status,
            error: result.error.as_deref(),
        };
        let mut health = delivery.health.clone();
        let mut circuit = None;
        for _ in 0..HEALTH_RETRIES {
            let (new, event) = self.policy.circuit.after_attempt(
                &health,
                delivered,
                summary,
                result.attempted_at,
                now,
            );
            if new == health {
                break;
            }
            if self
                .ports
                .store
                .set_endpoint_health(delivery.endpoint_id, &health, &new, now)
                .await?
            {
                circuit = event;
                break;
            }
            // Another attempt of the endpoint moved it meanwhile: start from what it did.
            match self
                .ports
                .store
                .endpoint_health(delivery.endpoint_id)
                .await?
            {
                Some(current) => health = current,
                None => break,
            }
        }
        Ok(AttemptReport {
            delivery: delivery.id,
            endpoint: delivery.endpoint_id,
            outcome,
            circuit,
        })
    }

    /// How many deliveries are due and not yet delivered, and since when the oldest.
    pub async fn backlog(&self) -> anyhow::Result<WebhookBacklog> {
        self.ports.store.backlog(self.ports.clock.now()).await
    }
}
