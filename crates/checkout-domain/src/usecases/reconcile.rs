//! Use case: settle sessions whose processor answer was lost.

use time::Duration;

use super::{Checkout, PaymentOutcome, PaymentResult};
use crate::error::{CheckoutError, SvcCode};
use crate::session::{AttemptOutcome, SessionState};

/// What one reconciliation sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    /// Sessions found stale in Processing.
    pub examined: usize,
    /// Of those, settled: an outcome recorded, or the session Pending again.
    pub settled: usize,
    /// Of those, still unresolved because the processor could not be asked.
    pub unresolved: usize,
}

/// Sessions looked at per sweep, at most; the rest wait for the next sweep.
const SWEEP_BATCH: u32 = 100;

impl Checkout {
    /// Looks up, through its idempotency key, the latest attempt of a session left in
    /// Processing with an unresolved or unanswered attempt, and records what the processor
    /// says: the charge's outcome, or, when it holds none, the session is Pending again.
    /// Sessions in any other state get [`PaymentResult::AlreadyHandled`].
    pub async fn reconcile(&self, id: &str) -> Result<PaymentOutcome, CheckoutError> {
        let Some(session) = self.find(id).await? else {
            return Err(CheckoutError::svc(SvcCode::Svc002));
        };
        let attempt = match self.ports.sessions.latest_attempt(session.id).await? {
            Some(a)
                if session.state == SessionState::Processing
                    && matches!(a.outcome, AttemptOutcome::Sent | AttemptOutcome::Unresolved) =>
            {
                a
            }
            _ => {
                return Ok(PaymentOutcome {
                    session,
                    result: PaymentResult::AlreadyHandled,
                })
            }
        };
        match self.ports.processor.lookup(attempt.id).await {
            Ok(Some(outcome)) => self.record_outcome(attempt, outcome).await,
            Ok(None) => {
                self.void_attempt(attempt, AttemptOutcome::Voided, SvcCode::Svc003)
                    .await
            }
            Err(_) => Ok(PaymentOutcome {
                session,
                result: PaymentResult::Unresolved,
            }),
        }
    }

    /// The periodic sweep: reconciles every session that has been in Processing for at least
    /// `older_than`.
    ///
    /// `older_than` must exceed the longest time a live card submission can spend waiting for
    /// the processor (every call's timeout), so that the sweep never settles a submission that
    /// is still in flight: the server checks this at start. Racing sweeps (two instances) are
    /// safe: each settlement is a compare-and-set from Processing, so one wins.
    pub async fn reconcile_stale(
        &self,
        older_than: Duration,
    ) -> Result<ReconcileReport, CheckoutError> {
        let before = self.now() - older_than;
        let stale = self
            .ports
            .sessions
            .stale_processing(before, SWEEP_BATCH)
            .await?;
        let mut report = ReconcileReport {
            examined: stale.len(),
            ..ReconcileReport::default()
        };
        for id in stale {
            match self.reconcile(&id.to_string()).await?.result {
                PaymentResult::Unresolved => report.unresolved += 1,
                _ => report.settled += 1,
            }
        }
        Ok(report)
    }
}
