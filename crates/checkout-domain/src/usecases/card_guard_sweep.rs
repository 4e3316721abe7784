//! Use case: the card-testing guard's sweep. Lowers the alert of a terminal that calmed down
//! (announcing `terminal.card_testing_ended` even when no payer posts again), and forgets
//! the answers no window reads any more.

use time::Duration;

use super::Checkout;
use crate::error::CheckoutError;
use crate::guard::GuardSubject;

/// Answers are kept at least this long (a session's declines count over its whole life;
/// a payment link may live days), and at least the longest window.
pub const GUARD_ANSWERS_KEPT: Duration = Duration::days(7);

/// What one guard sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GuardSweep {
    /// Terminals whose alert was lowered (each announced once).
    pub alerts_ended: u32,
    /// Answers forgotten for their age.
    pub answers_forgotten: u64,
}

impl Checkout {
    /// One sweep of the card-testing guard (nothing when no guard is wired): every alerted
    /// terminal whose decline rate is no longer a spike has its alert lowered, with its event
    /// about the session that raised it (of racing sweeps on several instances one announces);
    /// then the answers older than every window and [`GUARD_ANSWERS_KEPT`] are deleted.
    pub async fn sweep_card_guard(&self) -> Result<GuardSweep, CheckoutError> {
        let Some(guard) = &self.guard else {
            return Ok(GuardSweep::default());
        };
        let now = self.now();
        let mut report = GuardSweep::default();
        for (terminal, session) in guard.store.alerted_terminals().await? {
            let subject = GuardSubject {
                terminal,
                session,
                address: None,
                card: None,
            };
            let counts = guard
                .store
                .counts(
                    &subject,
                    &guard.policy.windows,
                    &guard.policy.terminal_caps(),
                    now,
                )
                .await?;
            if !guard.policy.terminal_spiking(&counts)
                && guard
                    .store
                    .set_alert(&subject.terminal, false, session, now)
                    .await?
            {
                report.alerts_ended += 1;
            }
        }
        let windows = guard.policy.windows;
        let kept = GUARD_ANSWERS_KEPT
            .max(windows.address)
            .max(windows.card)
            .max(windows.terminal);
        report.answers_forgotten = guard.store.forget_answers_before(now - kept).await?;
        Ok(report)
    }
}
