//! The retry schedule of a delivery: the waits between attempts, scaled for tests, with
//! jitter so that deliveries failing together do not retry together.

use std::time::Duration;

use time::OffsetDateTime;
use uuid::Uuid;

use super::delivery::NextStep;

/// The waits after each failed attempt; a delivery makes `waits.len() + 1` attempts at most.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrySchedule {
    waits: Vec<Duration>,
    time_scale: f64,
}

/// A schedule that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The time scale is not a positive finite number.
    #[error("the time scale must be a positive number")]
    TimeScale,
    /// The waits do not grow.
    #[error("each wait of the retry schedule must be longer than the one before")]
    NotGrowing,
}

/// How far a wait may move either way: ±20 %.
const JITTER: f64 = 0.2;

impl RetrySchedule {
    /// About three days: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 16 h, 32 h
    /// (63.7 hours in all, 12 attempts).
    pub fn standard() -> RetrySchedule {
        RetrySchedule {
            waits: [
                5, 30, 120, 600, 1_800, 3_600, 7_200, 14_400, 28_800, 57_600, 115_200,
            ]
            .into_iter()
            .map(Duration::from_secs)
            .collect(),
            time_scale: 1.0,
        }
    }

    /// A schedule of `waits`, each multiplied by `time_scale` (1.0 in production; tests run
    /// three days in seconds). Each wait must be more than 1.5 times the one before, so that
    /// the waits keep growing whatever the jitter.
    pub fn new(waits: Vec<Duration>, time_scale: f64) -> Result<RetrySchedule, ScheduleError> {
        if !(time_scale.is_finite() && time_scale > 0.0) {
            return Err(ScheduleError::TimeScale);
        }
        if waits
            .windows(2)
            .any(|w| w[1].as_secs_f64() <= w[0].as_secs_f64() * 1.5)
        {
            return Err(ScheduleError::NotGrowing);
        }
        Ok(RetrySchedule { waits, time_scale })
    }

    /// The most attempts one delivery makes.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.waits.len()).unwrap_or(u32::MAX - 1) + 1
    }

    /// The whole schedule's span, scaled, without jitter.
    pub fn span(&self) -> Duration {
        self.waits.iter().map(|w| w.mul_f64(self.time_scale)).sum()
    }

    /// What follows attempt number `attempt` (1 for the first) of delivery `delivery`, made at
    /// `now`, whose result was `delivered` or not. The jitter is derived from the delivery id
    /// and the attempt number: spread across deliveries, the same on every replay of the
    /// computation.
    pub fn next(
        &self,
        delivery: Uuid,
        attempt: u32,
        delivered: bool,
        now: OffsetDateTime,
    ) -> NextStep {
        if delivered {
            return NextStep::Delivered;
        }
        let Some(wait) = self.waits.get(attempt.saturating_sub(1) as usize) else {
            return NextStep::GiveUp;
        };
        let factor = 1.0 + JITTER * (2.0 * unit_noise(delivery, attempt) - 1.0);
        let wait = wait.mul_f64(self.time_scale * factor);
        NextStep::RetryAt(now + wait)
    }
}

/// A number in [0, 1) derived from the id and the attempt (SplitMix64 of their mix).
fn unit_noise(delivery: Uuid, attempt: u32) -> f64 {
    let (high, low) = delivery.as_u64_pair();
    let mut z = high ^ low.rotate_left(17) ^ u64::from(attempt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-11-24 12:00 UTC);

    fn wait_after(schedule: &RetrySchedule, id: Uuid, attempt: u32) -> Option<f64> {
        match schedule.next(id, attempt, false, NOW) {
            NextStep::RetryAt(at) => Some((at - NOW).as_seconds_f64()),
            _ => None,
        }
    }

    #[test]
    fn the_standard_schedule_spans_about_three_days() {
        let schedule = RetrySchedule::standard();
        let hours = schedule.span().as_secs_f64() / 3600.0;
        assert!((60.0..80.0).contains(&hours), "{hours}");
        assert_eq!(schedule.max_attempts(), 12);
    }

    #[test]
    fn waits_grow_and_stay_within_the_jitter() {
        let schedule = RetrySchedule::standard();
        for n in 0..200u128 {
            let id = Uuid::from_u128(n.wrapping_mul(0x1234_5678_9abc_def1_2345_6789));
            let mut last = 0.0;
            for attempt in 1..schedule.max_attempts() {
                let wait = wait_after(&schedule, id, attempt).unwrap_or_default();
                let nominal = schedule.waits[attempt as usize - 1].as_secs_f64();
                assert!(
                    wait >= nominal * 0.8 && wait <= nominal * 1.2,
                    "{wait} vs {nominal}"
                );
                assert!(wait > last, "attempt {attempt}: {wait} after {last}");
                last = wait;
            }
            assert_eq!(
                schedule.next(id, schedule.max_attempts(), false, NOW),
                NextStep::GiveUp
            );
        }
    }

    #[test]
    fn jitter_spreads_deliveries_that_fail_together() {
        let schedule = RetrySchedule::standard();
        let waits: Vec<f64> = (0..50u128)
            .filter_map(|n| wait_after(&schedule, Uuid::from_u128(n << 64 | n), 4))
            .collect();
        let min = waits.iter().cloned().fold(f64::MAX, f64::min);
        let max = waits.iter().cloned().fold(0.0, f64::max);
        assert!(
            max - min > 120.0,
            "{min}..{max}: a 10-minute wait spread over 2+ minutes"
        );
    }

    #[test]
    fn a_time_scale_shrinks_every_wait() {
        let schedule = RetrySchedule::new(RetrySchedule::standard().waits, 0.001)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(schedule.span() < Duration::from_secs(300));
        assert!(wait_after(&schedule, Uuid::nil(), 1).is_some_and(|w| w < 0.01));
    }

    #[test]
    fn delivered_ends_and_bad_schedules_are_refused() {
        let schedule = RetrySchedule::standard();
        assert_eq!(
            schedule.next(Uuid::nil(), 1, true, NOW),
            NextStep::Delivered
        );
        let secs = |s: &[u64]| s.iter().map(|s| Duration::from_secs(*s)).collect();
        assert_eq!(
            RetrySchedule::new(secs(&[5, 5]), 1.0),
            Err(ScheduleError::NotGrowing)
        );
        assert_eq!(
            RetrySchedule::new(secs(&[5]), 0.0),
            Err(ScheduleError::TimeScale)
        );
        assert_eq!(
            RetrySchedule::new(secs(&[5]), f64::NAN),
            Err(ScheduleError::TimeScale)
        );
    }
}
