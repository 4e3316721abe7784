//! What the periodic sweeps ask of the store: sessions whose expiry passed, attempts due for
//! reconciliation, and the reconciliation backlog.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::session::PaymentAttempt;
use crate::values::SessionId;

/// The store's side of the expiry and reconciliation sweeps.
#[async_trait]
pub trait Sweeps: Send + Sync {
    /// Moves every Pending session whose `expires_at` is at or before `now` to Expired;
    /// returns how many moved. (A session waiting for a challenge is expired by the use case,
    /// which cancels the authorisation at the processor first.)
    async fn expire_due(&self, now: OffsetDateTime) -> anyhow::Result<u64>;

    /// The sessions in ChallengeRequired whose `expires_at` is at or before `now`, soonest
    /// expired first, at most `limit`.
    async fn due_challenges(
        &self,
        now: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>>;

    /// Claims the attempts in a [checked state](crate::session::AttemptState::CHECKED) whose `next_check_at`
    /// is at or before `now`, oldest due first, at most `limit`, for reconciliation.
    ///
    /// MUST set each claimed attempt's `next_check_at` to `lease_until` in the same atomic
    /// step, and MUST skip attempts another caller is claiming at the same moment, so that
    /// two sweeps (two instances) never take the same attempt at once. Attempts whose
    /// `next_check_at` is `None` are never claimed.
    async fn claim_due_attempts(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentAttempt>>;

    /// Claims the held authorisations due for a check at the processor (did it expire
    /// there?): sessions in ApprovedTransaction since `held_since` or earlier whose
    /// authorised current attempt was never claimed for this check or whose last claim ran
    /// until `now` or earlier, longest held first, at most `limit`; returns their sessions.
    ///
    /// MUST push each claimed authorisation's next check (the authorised attempt's
    /// `next_check_at`) to `until` in the same atomic step, and MUST skip those another caller
    /// is claiming at the same moment, so that two sweeps (two instances) never check the
    /// same authorisation at once.
    async fn claim_due_holds(
        &self,
        held_since: OffsetDateTime,
        now: OffsetDateTime,
        until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>>;

    /// How many attempts are unresolved (Sent or Unknown), and the creation time of the
    /// oldest: the reconciliation backlog.
    async fn unresolved_attempts(&self) -> anyhow::Result<(u64, Option<OffsetDateTime>)>;
}
