//! When and how long to wait before sending a request again.

use std::time::{Duration, SystemTime};

use time::format_description::well_known::Rfc2822;
use time::OffsetDateTime;

/// How calls are retried: on network errors and on 409 (the same `Idempotency-Key` still
/// running), 429 and 503 answers, with exponential backoff and jitter, or after the
/// `Retry-After` the service asked for.
///
/// ```
/// use std::time::Duration;
/// use checkout_client::RetryPolicy;
///
/// let patient = RetryPolicy::default()
///     .max_attempts(6)
///     .initial_backoff(Duration::from_millis(500));
/// assert_eq!(patient.attempts(), 6);
/// assert_eq!(RetryPolicy::none().attempts(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts; waits of about 200 ms, 400 ms, 800 ms (each doubled, at most 5 s, the
    /// upper half of it drawn at random); a `Retry-After` of up to 30 s is honoured.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// Send each request once.
    pub fn none() -> Self {
        RetryPolicy::default().max_attempts(1)
    }

    /// How many times a request may be sent in all (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The wait before the first retry; each later one doubles.
    pub fn initial_backoff(mut self, wait: Duration) -> Self {
        self.initial_backoff = wait;
        self
    }

    /// The longest wait between two attempts without a `Retry-After`.
    pub fn max_backoff(mut self, wait: Duration) -> Self {
        self.max_backoff = wait;
        self
    }

    /// The longest `Retry-After` honoured; a longer one ends the retries and returns the
    /// answer (its [`ApiError::retry_after`](crate::ApiError::retry_after) says how long).
    pub fn max_retry_after(mut self, wait: Duration) -> Self {
        self.max_retry_after = wait;
        self
    }

    /// How many times a request may be sent in all.
    pub fn attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait after failed attempt number `attempt` (1 for the first): the doubled backoff,
    /// capped, with its upper half drawn at random so that clients do not retry in step.
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let doubled = self
            .initial_backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
        let cap = doubled.min(self.max_backoff);
        let half = cap / 2;
        let random =
            (uuid::Uuid::new_v4().as_u128() & u128::from(u32::MAX)) as f64 / f64::from(u32::MAX);
        half + half.mul_f64(random)
    }

    /// The wait before the next attempt after an answer that asked for `retry_after`:
    /// `None` when it is beyond what this policy honours.
    pub(crate) fn wait_for(&self, attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
        match retry_after {
            Some(wait) if wait > self.max_retry_after => None,
            Some(wait) => Some(wait),
            None => Some(self.backoff(attempt)),
        }
    }
}

/// The wait a `Retry-After` value asks for: delay-seconds, or an HTTP date (a past date
/// is no wait).
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = OffsetDateTime::parse(value, &Rfc2822).ok()?;
    let now = OffsetDateTime::from(now);
    let wait = at - now;
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_its_cap_with_jitter() {
        let policy = RetryPolicy::default()
            .initial_backoff(Duration::from_millis(100))
            .max_backoff(Duration::from_millis(1000));
        for _ in 0..50 {
            let first = policy.backoff(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.backoff(3);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let late = policy.backoff(40);
            assert!(late >= Duration::from_millis(500) && late <= Duration::from_millis(1000));
        }
    }

    #[test]
    fn retry_after_is_read_and_bounded() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("1", now), Some(Duration::from_secs(1)));
        assert_eq!(
            parse_retry_after(" 12 ", now),
            Some(Duration::from_secs(12))
        );
        // 1_700_000_000 is Tue, 14 Nov 2023 22:13:20 GMT.
        assert_eq!(
            parse_retry_after("Tue, 14 Nov 2023 22:13:25 GMT", now),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            parse_retry_after("Tue, 14 Nov 2023 22:13:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        let policy = RetryPolicy::default().max_retry_after(Duration::from_secs(10));
        assert_eq!(
            policy.wait_for(1, Some(Duration::from_secs(3))),
            Some(Duration::from_secs(3))
        );
        assert_eq!(policy.wait_for(1, Some(Duration::from_secs(11))), None);
        assert!(policy.wait_for(1, None).is_some());
        assert_eq!(RetryPolicy::default().max_attempts(0).attempts(), 1);
    }
}
