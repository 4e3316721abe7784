//! Use case: settle attempts whose processor answer was lost, by asking again with the same
//! idempotency key. Never by listing or searching: a list that does not show a charge yet
//! proves nothing.

use time::Duration;

use super::settle::Answer;
use super::{Checkout, PaymentResult};
use crate::error::CheckoutError;
use crate::ports::ProcessorOutcome;
use crate::session::{AttemptState, PaymentAttempt, SessionState};

/// How unresolved attempts are reconciled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconcilePolicy {
    /// How long after an attempt is sent, or found Unknown, it is first checked.
    pub first_check_after: Duration,
    /// The longest wait between two checks of one attempt (the wait doubles up to it).
    pub max_backoff: Duration,
    /// Attempts checked per sweep, at most: each costs one processor call.
    pub batch: u32,
    /// How long a claimed attempt is reserved for the sweep that claimed it.
    pub lease: Duration,
    /// After this age an attempt is no longer replayed (the processor forgets idempotency
    /// keys: Stripe after 24 hours) and waits for manual review.
    pub give_up_after: Duration,
    /// How long an authorisation is held uncaptured before the sweep asks the processor
    /// whether it expired there (Stripe releases one after 7 days); then again every
    /// `max_backoff` while it stays held.
    pub hold_check_after: Duration,
}

impl Default for ReconcilePolicy {
    fn default() -> Self {
        ReconcilePolicy {
            first_check_after: Duration::seconds(30),
            max_backoff: Duration::hours(1),
            batch: 50,
            lease: Duration::minutes(10),
            give_up_after: Duration::hours(23),
            hold_check_after: Duration::days(7),
        }
    }
}

/// What one reconciliation sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    /// Due attempts claimed.
    pub examined: usize,
    /// Processor calls made (one per examined attempt).
    pub processor_calls: usize,
    /// Of those, settled: the outcome recorded, or nothing charged as the processor said.
    pub settled: usize,
    /// Of those, still unknown (or a challenge still waiting for the payer) and rescheduled
    /// with a longer wait.
    pub rescheduled: usize,
    /// Of those, still unknown past the processor's idempotency window: left for review.
    pub given_up: usize,
    /// Due captures, voids and refunds claimed.
    pub reversals_examined: usize,
    /// Of those, settled by the processor's answer (succeeded or failed).
    pub reversals_settled: usize,
    /// Of those, still not final and rescheduled with a longer wait.
    pub reversals_rescheduled: usize,
    /// Of those, refunds without a processor reference past the processor's key lifetime:
    /// left for review, never replayed (a replay could refund anew).
    pub reversals_given_up: usize,
    /// Of those, not asked about because of a fault (the store, a session that cannot be
    /// read): each is asked again once its lease is over, and never stops the others.
    pub reversals_failed: usize,
    /// The first such fault, for the log.
    pub first_reversal_error: Option<String>,
    /// Held authorisations older than the policy's `hold_check_after` claimed and read at
    /// the processor.
    pub holds_examined: usize,
    /// Of those, found expired at the processor and recorded (the session Expired,
    /// `payment.authorization_expired` announced).
    pub holds_expired: usize,
    /// Of those, not read because of a fault (the processor or the store): each is read
    /// again at its next check, and never stops the others.
    pub holds_failed: usize,
}

impl Checkout {
    /// The periodic sweep: claims the attempts that are due for a check (unresolved ones, and
    /// challenges the payer may have finished at the processor without coming back; oldest
    /// due first, at most the policy's batch, each reserved so that another instance's sweep
    /// skips it), asks the processor about each once, and records what it says. An attempt
    /// with a known processor reference is read; one without is replayed with the same
    /// idempotency key (the processor answers what the first request did). What stays unknown
    /// is rescheduled with a doubling wait, so a backlog never starves newer attempts: each
    /// sweep takes the ones due first.
    pub async fn reconcile_due(&self) -> Result<ReconcileReport, CheckoutError> {
        let now = self.now();
        let policy = self.policy.reconcile;
        let claimed = self
            .ports
            .sweeps
            .claim_due_attempts(now, now + policy.lease, policy.batch)
            .await?;
        let mut report = ReconcileReport::default();
        for attempt in claimed {
            report.examined += 1;
            report.processor_calls += 1;
            match self.resolve(&attempt).await? {
                PaymentResult::Unresolved => {
                    let stored = self.ports.attempts.attempt(attempt.id).await?;
                    if stored.is_some_and(|a| a.next_check_at.is_none()) {
                        report.given_up += 1;
                    } else {
                        report.rescheduled += 1;
                    }
                }
                _ => report.settled += 1,
            }
        }
        self.reconcile_reversals(&mut report).await?;
        self.check_held_authorisations(&mut report).await?;
        Ok(report)
    }

    /// The sweep's share for held authorisations: claims those held uncaptured longer than
    /// the policy's `hold_check_after` (each reserved until its next check, so another
    /// instance's sweep skips it), reads each at the processor, and records one the processor
    /// released (it expired there) as the processor-event path does: an expiry row of the
    /// ledger, which moves the session ApprovedTransaction → Expired through its
    /// compare-and-set and announces `payment.authorization_expired`.
    async fn check_held_authorisations(
        &self,
        report: &mut ReconcileReport,
    ) -> Result<(), CheckoutError> {
        let now = self.now();
        let policy = self.policy.reconcile;
        let held = self
            .ports
            .sweeps
            .claim_due_holds(
                now - policy.hold_check_after,
                now,
                now + policy.max_backoff.max(policy.lease),
                policy.batch,
            )
            .await?;
        for id in held {
            report.holds_examined += 1;
            let checked = async {
                let session = self.load(id).await?;
                if session.state() != SessionState::ApprovedTransaction {
                    return Ok(false);
                }
                self.check_hold(&session).await?;
                Ok::<_, CheckoutError>(self.load(id).await?.state() == SessionState::Expired)
            };
            match checked.await {
                Ok(true) => report.holds_expired += 1,
                Ok(false) => {}
                Err(e) => {
                    report.holds_failed += 1;
                    if report.first_reversal_error.is_none() {
                        report.first_reversal_error = Some(e.to_string());
                    }
                }
            }
        }
        Ok(())
    }

    /// Asks the processor once about a claimed `attempt` and records the answer.
    pub(super) async fn resolve(
        &self,
        attempt: &PaymentAttempt,
    ) -> Result<PaymentResult, CheckoutError> {
        let session = self.load(attempt.session_id).await?;
        let answer = match &attempt.processor_reference {
            Some(reference) => Answer::of_read(self.ports.processor.retrieve(reference).await),
            None => Answer::of_authorization(self.send_authorization(&session, attempt).await),
        };
        if attempt.state == AttemptState::RequiresAction
            && matches!(
                answer,
                Answer::Holds(ProcessorOutcome::ChallengeRequired { .. })
            )
        {
            // The payer has not finished the challenge yet: ask again later.
            self.reschedule(attempt).await?;
            return Ok(PaymentResult::Unresolved);
        }
        let outcome = self
            .record_answer(session, attempt, &[attempt.state], answer)
            .await?;
        Ok(outcome.result)
    }
}
