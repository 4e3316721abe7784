//! Use case: a delivery worker's run. Claims due deliveries, posts each, logs the attempt
//! and schedules the next one.

use super::Webhooks;
use crate::webhooks::{NextStep, WebhookBacklog};

/// What one run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryRun {
    /// Deliveries claimed (one attempt each).
    pub attempted: u32,
    /// Attempts answered 2xx.
    pub delivered: u32,
    /// Attempts that failed and will be retried.
    pub retrying: u32,
    /// Deliveries that failed for good (the schedule ran out).
    pub failed: u32,
    /// Results that changed nothing (the lease was lost, or the endpoint was deleted).
    pub stale: u32,
}

impl DeliveryRun {
    /// True when the run claimed a whole batch: more may be due at once.
    pub fn full(&self, batch: u32) -> bool {
        self.attempted >= batch
    }
}

impl Webhooks {
    /// Claims up to a batch of due deliveries (skipping those other workers hold) and makes
    /// one attempt at each, in turn. Every attempt is logged; a 2xx ends the delivery, any
    /// other outcome schedules the next attempt or, past the schedule, fails it.
    pub async fn deliver_due(&self) -> anyhow::Result<DeliveryRun> {
        let now = self.ports.clock.now();
        let due = self
            .ports
            .store
            .claim_due(now, now + self.policy.lease, self.policy.batch)
            .await?;
        let mut run = DeliveryRun::default();
        for delivery in due {
            run.attempted += 1;
            let body = self.ports.encoder.encode(&delivery.event);
            let result = self.ports.transport.send(&delivery, &body).await;
            let attempt = delivery.attempts_before + 1;
            let next = self.policy.schedule.next(
                delivery.id,
                attempt,
                result.delivered(),
                self.ports.clock.now(),
            );
            if !self
                .ports
                .store
                .record_attempt(&delivery, &result, next)
                .await?
            {
                run.stale += 1;
                continue;
            }
            match next {
                NextStep::Delivered => run.delivered += 1,
                NextStep::RetryAt(_) => run.retrying += 1,
                NextStep::GiveUp => run.failed += 1,
            }
        }
        Ok(run)
    }

    /// How many deliveries are due and not yet delivered, and since when the oldest.
    pub async fn backlog(&self) -> anyhow::Result<WebhookBacklog> {
        self.ports.store.backlog(self.ports.clock.now()).await
    }
}
