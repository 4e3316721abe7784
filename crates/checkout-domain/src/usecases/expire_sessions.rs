//! Use case: the periodic sweep that expires unpaid sessions, links and integrated checkouts
//! alike.
//!
//! Integrated checkouts expire too (after 60 minutes by default; links after 24 hours), so
//! that an abandoned checkout frees its merchant reference.

use super::Checkout;
use crate::error::CheckoutError;
use crate::session::SessionState;

/// Sessions waiting for a challenge looked at per sweep, at most (each costs a processor call).
const CHALLENGES_PER_SWEEP: u32 = 50;

/// What one expiry sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpiryReport {
    /// Pending sessions moved to Expired.
    pub expired: u64,
    /// Sessions waiting for a challenge past their expiry that were looked at.
    pub challenges_examined: usize,
    /// Of those, expired after the processor confirmed the cancel.
    pub challenges_expired: usize,
    /// Of those, found paid (or failed) at the processor and recorded so.
    pub challenges_settled: usize,
}

impl Checkout {
    /// Marks every Pending session whose expiry has passed as Expired, freeing its merchant
    /// reference; and for sessions waiting for a challenge past their expiry, cancels the
    /// authorisation at the processor first (at most a bounded number per sweep). Reads also
    /// expire sessions lazily, so the sweep keeps stored states current for reporting and
    /// frees references.
    pub async fn expire_due_sessions(&self) -> Result<ExpiryReport, CheckoutError> {
        let now = self.now();
        let mut report = ExpiryReport {
            expired: self.ports.sweeps.expire_due(now).await?,
            ..ExpiryReport::default()
        };
        let due = self
            .ports
            .sweeps
            .due_challenges(now, CHALLENGES_PER_SWEEP)
            .await?;
        for id in due {
            report.challenges_examined += 1;
            let session = self.load(id).await?;
            match self.settle_expiry(session).await?.state() {
                SessionState::Expired => report.challenges_expired += 1,
                SessionState::ChallengeRequired => {}
                _ => report.challenges_settled += 1,
            }
        }
        Ok(report)
    }
}
