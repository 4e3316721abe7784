//! How much of the delivery workers, and of redelivery, one merchant may take: the fair share
//! of the claim, the endpoints a terminal may register, and the redeliveries it may ask for.

use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// What a claim may hand out, counting every live lease of every instance: at most
/// `per_endpoint` attempts in flight to one endpoint (one while its last attempt failed) and
/// `per_terminal` to one terminal's endpoints together. Due deliveries are taken in turns,
/// one per endpoint and per terminal in each turn, the endpoint served longest ago first, so
/// that one endpoint's backlog or hang never holds back another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairShare {
    /// Attempts in flight to one healthy endpoint.
    pub per_endpoint: u32,
    /// Attempts in flight to one terminal's endpoints together.
    pub per_terminal: u32,
}

impl Default for FairShare {
    /// 4 to one endpoint, 8 to one terminal: half of one instance's 16 slots at most.
    fn default() -> Self {
        FairShare {
            per_endpoint: 4,
            per_terminal: 8,
        }
    }
}

/// How many redeliveries a terminal may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedeliveryLimits {
    /// The sliding window the requests are counted over.
    pub window: Duration,
    /// Requests for one event within the window.
    pub per_event: u32,
    /// Requests for any of the terminal's events within the window.
    pub per_terminal: u32,
}

impl Default for RedeliveryLimits {
    /// 5 an hour for one event, 100 an hour for a terminal.
    fn default() -> Self {
        RedeliveryLimits {
            window: Duration::hours(1),
            per_event: 5,
            per_terminal: 100,
        }
    }
}

/// What a redelivery request came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redelivered {
    /// Queued: the new deliveries (one per enabled endpoint that admits the type).
    Queued(Vec<Uuid>),
    /// The terminal has no such event.
    UnknownEvent,
    /// A limit is reached: nothing was queued. The oldest request counted against each limit
    /// that is reached (the window's end after it frees a place).
    OverLimit {
        /// The oldest request for this event in the window, when the event's limit is reached.
        event_oldest: Option<OffsetDateTime>,
        /// The oldest request of the terminal in the window, when the terminal's limit is
        /// reached.
        terminal_oldest: Option<OffsetDateTime>,
    },
}

impl RedeliveryLimits {
    /// When a refused request may be made again: when the oldest request counted against
    /// every reached limit has left the window.
    pub fn retry_at(
        &self,
        event_oldest: Option<OffsetDateTime>,
        terminal_oldest: Option<OffsetDateTime>,
        now: OffsetDateTime,
    ) -> OffsetDateTime {
        [event_oldest, terminal_oldest]
            .into_iter()
            .flatten()
            .map(|oldest| oldest + self.window)
            .max()
            .unwrap_or(now)
            .max(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn a_refused_request_may_come_again_when_every_reached_limit_frees_a_place() {
        let limits = RedeliveryLimits::default();
        let now = datetime!(2026-11-28 12:00 UTC);
        let early = now - Duration::minutes(50);
        let late = now - Duration::minutes(10);
        assert_eq!(
            limits.retry_at(Some(late), None, now),
            now + Duration::minutes(50)
        );
        assert_eq!(
            limits.retry_at(Some(late), Some(early), now),
            now + Duration::minutes(50)
        );
        assert_eq!(
            limits.retry_at(None, Some(early), now),
            now + Duration::minutes(10)
        );
        assert_eq!(limits.retry_at(None, None, now), now);
    }
}
