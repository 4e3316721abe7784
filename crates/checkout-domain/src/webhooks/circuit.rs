//! An endpoint's health, and the circuit that backs a failing endpoint off as a whole.
//!
//! Each delivery keeps its own retry schedule, but an endpoint that keeps failing is also
//! treated as one: after [`CircuitPolicy::failures_to_open`] failed attempts in a row its
//! circuit opens and none of its deliveries is attempted until the circuit's wait has passed
//! (each opening in the same run of failures waits twice as long as the one before, up to a
//! cap); then one attempt at a time probes it. A delivered attempt closes the circuit and ends
//! the run. An endpoint that has not had one attempt delivered for
//! [`CircuitPolicy::disable_after`] is disabled: it is sent nothing more until its merchant
//! enables it again. While its last attempt failed, an endpoint gets one attempt at a time
//! (see [`FairShare`](super::FairShare)).

use std::fmt;

use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

/// How an endpoint has been answering.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EndpointHealth {
    /// Failed attempts in a row; 0 when the last attempt was delivered (or none was made).
    pub consecutive_failures: u32,
    /// When the first of those failed attempts was made.
    pub failing_since: Option<OffsetDateTime>,
    /// While in the future, none of the endpoint's deliveries is attempted (the circuit is
    /// open).
    pub circuit_open_until: Option<OffsetDateTime>,
    /// How many times the circuit opened in this run of failures.
    pub circuit_openings: u32,
    /// When and why the endpoint was disabled; `None` while it is enabled.
    pub disabled: Option<Disabled>,
}

/// Why an endpoint gets nothing more until its merchant enables it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disabled {
    /// When it was disabled.
    pub at: OffsetDateTime,
    /// Why, for the merchant.
    pub reason: String,
}

/// Where an endpoint's circuit stands at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitState {
    /// Its last attempt was delivered (or none was made): deliveries go out as they fall due.
    Closed,
    /// Its last attempt failed: one attempt at a time.
    Probing,
    /// Nothing is attempted until this time.
    Open(OffsetDateTime),
    /// Nothing is sent until the merchant enables it.
    Disabled,
}

impl CircuitState {
    /// The wire name: `closed`, `probing`, `open`, `disabled`.
    pub fn as_str(self) -> &'static str {
        match self {
            CircuitState::Closed => "closed",
            CircuitState::Probing => "probing",
            CircuitState::Open(_) => "open",
            CircuitState::Disabled => "disabled",
        }
    }
}

impl EndpointHealth {
    /// True while the endpoint may be sent deliveries (it is not disabled).
    pub fn enabled(&self) -> bool {
        self.disabled.is_none()
    }

    /// The circuit's state at `now`.
    pub fn circuit(&self, now: OffsetDateTime) -> CircuitState {
        if self.disabled.is_some() {
            return CircuitState::Disabled;
        }
        match self.circuit_open_until {
            Some(until) if until > now => CircuitState::Open(until),
            _ if self.consecutive_failures > 0 => CircuitState::Probing,
            _ => CircuitState::Closed,
        }
    }
}

/// What an attempt changed in its endpoint's health, worth telling the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CircuitEvent {
    /// The circuit opened: nothing is attempted until `until`.
    Opened {
        /// When a probe may go.
        until: OffsetDateTime,
    },
    /// A delivered attempt ended a run of failures.
    Recovered,
    /// The endpoint was disabled.
    Disabled,
}

/// When an endpoint's circuit opens, for how long, and when the endpoint is disabled.
#[derive(Debug, Clone, PartialEq)]
pub struct CircuitPolicy {
    /// Failed attempts in a row that open the circuit (at least 1).
    pub failures_to_open: u32,
    /// How long the circuit stays open the first time in a run of failures; each later
    /// opening waits twice as long as the one before.
    pub first_open: Duration,
    /// The longest the circuit stays open at once.
    pub max_open: Duration,
    /// How long an endpoint may go without a delivered attempt, its attempts failing, before
    /// it is disabled.
    pub disable_after: Duration,
}

impl Default for CircuitPolicy {
    /// Opens after 5 failures in a row, for 1 minute, then 2, 4… up to an hour; disables after
    /// 5 days of failures (longer than a delivery's whole retry schedule, about 64 hours).
    fn default() -> Self {
        CircuitPolicy {
            failures_to_open: 5,
            first_open: Duration::minutes(1),
            max_open: Duration::hours(1),
            disable_after: Duration::days(5),
        }
    }
}

/// What the attempt answered, in the words of the disabling reason.
#[derive(Debug, Clone, Copy)]
pub struct AttemptSummary<'a> {
    /// The HTTP status, if the receiver answered.
    pub status: Option<u16>,
    /// Why there was no answer, if there was none.
    pub error: Option<&'a str>,
}

impl fmt::Display for AttemptSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.status, self.error) {
            (Some(status), _) => write!(f, "HTTP {status}"),
            (None, Some(error)) => f.write_str(error),
            (None, None) => f.write_str("no answer"),
        }
    }
}

impl CircuitPolicy {
    /// How long the circuit stays open at its `opening`-th opening (0 for the first) in a run.
    pub fn open_for(&self, opening: u32) -> Duration {
        let factor = 2f64.powi(i32::try_from(opening.min(40)).unwrap_or(40));
        let wait = self.first_open.as_seconds_f64() * factor;
        Duration::seconds_f64(wait.min(self.max_open.as_seconds_f64()))
    }

    /// The health after an attempt made at `at` (its result known at `now`) that was
    /// `delivered` or not, and what changed. A disabled endpoint stays as it is (an attempt
    /// that was on its way when it was disabled changes nothing).
    pub fn after_attempt(
        &self,
        health: &EndpointHealth,
        delivered: bool,
        attempt: AttemptSummary<'_>,
        at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> (EndpointHealth, Option<CircuitEvent>) {
        if health.disabled.is_some() {
            return (health.clone(), None);
        }
        if delivered {
            let event = (health.consecutive_failures > 0).then_some(CircuitEvent::Recovered);
            return (EndpointHealth::default(), event);
        }
        let failures = health.consecutive_failures.saturating_add(1);
        let since = health.failing_since.unwrap_or(at).min(at);
        if now - since >= self.disable_after {
            let reason = format!(
                "No attempt was delivered since {} ({failures} failed in a row; the last: {attempt}). \
                 Enable the endpoint again once it answers 2xx.",
                since.format(&Rfc3339).unwrap_or_default()
            );
            let disabled = EndpointHealth {
                consecutive_failures: failures,
                failing_since: Some(since),
                circuit_open_until: None,
                circuit_openings: health.circuit_openings,
                disabled: Some(Disabled { at: now, reason }),
            };
            return (disabled, Some(CircuitEvent::Disabled));
        }
        let mut next = EndpointHealth {
            consecutive_failures: failures,
            failing_since: Some(since),
            circuit_open_until: health.circuit_open_until,
            circuit_openings: health.circuit_openings,
            disabled: None,
        };
        let open = health.circuit_open_until.is_some_and(|until| until > now);
        if failures >= self.failures_to_open.max(1) && !open {
            let until = now + self.open_for(health.circuit_openings);
            next.circuit_open_until = Some(until);
            next.circuit_openings = health.circuit_openings.saturating_add(1);
            return (next, Some(CircuitEvent::Opened { until }));
        }
        (next, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const T0: OffsetDateTime = datetime!(2026-11-28 12:00 UTC);

    fn policy() -> CircuitPolicy {
        CircuitPolicy {
            failures_to_open: 3,
            first_open: Duration::seconds(10),
            max_open: Duration::seconds(35),
            disable_after: Duration::hours(1),
        }
    }

    const TIMEOUT: AttemptSummary<'static> = AttemptSummary {
        status: None,
        error: Some("no answer within 15000 ms"),
    };

    /// Fails once at `at`; returns the new health and its event.
    fn fail(health: &EndpointHealth, at: OffsetDateTime) -> (EndpointHealth, Option<CircuitEvent>) {
        policy().after_attempt(health, false, TIMEOUT, at, at)
    }

    #[test]
    fn failures_in_a_row_open_the_circuit_then_one_probe_at_a_time() {
        let mut health = EndpointHealth::default();
        assert_eq!(health.circuit(T0), CircuitState::Closed);
        for n in 0..2 {
            let (next, event) = fail(&health, T0 + Duration::seconds(n));
            assert_eq!(event, None);
            assert_eq!(next.circuit(T0), CircuitState::Probing);
            health = next;
        }
        assert_eq!(health.failing_since, Some(T0));
        let (opened, event) = fail(&health, T0 + Duration::seconds(2));
        let until = T0 + Duration::seconds(12);
        assert_eq!(event, Some(CircuitEvent::Opened { until }));
        assert_eq!(
            opened.circuit(T0 + Duration::seconds(5)),
            CircuitState::Open(until)
        );
        // After the wait, a probe; it fails and the circuit opens twice as long.
        assert_eq!(opened.circuit(until), CircuitState::Probing);
        let (again, event) = fail(&opened, until);
        assert_eq!(
            event,
            Some(CircuitEvent::Opened {
                until: until + Duration::seconds(20)
            })
        );
        // Then up to the cap.
        let (third, _) = fail(&again, until + Duration::seconds(20));
        assert_eq!(
            third.circuit_open_until,
            Some(until + Duration::seconds(20 + 35))
        );
        assert_eq!(third.circuit_openings, 3);
    }

    #[test]
    fn an_attempt_that_ends_while_the_circuit_is_open_does_not_move_it() {
        let mut health = EndpointHealth::default();
        for n in 0..3 {
            health = fail(&health, T0 + Duration::seconds(n)).0;
        }
        let until = health.circuit_open_until;
        let (late, event) = fail(&health, T0 + Duration::seconds(4));
        assert_eq!(event, None);
        assert_eq!(late.circuit_open_until, until);
        assert_eq!(late.consecutive_failures, 4);
    }

    #[test]
    fn a_delivered_attempt_closes_the_circuit_and_ends_the_run() {
        let mut health = EndpointHealth::default();
        for n in 0..4 {
            health = fail(&health, T0 + Duration::seconds(n)).0;
        }
        let ok = AttemptSummary {
            status: Some(200),
            error: None,
        };
        let at = T0 + Duration::minutes(1);
        let (closed, event) = policy().after_attempt(&health, true, ok, at, at);
        assert_eq!(event, Some(CircuitEvent::Recovered));
        assert_eq!(closed, EndpointHealth::default());
        // A healthy endpoint's success changes nothing and tells nothing.
        assert_eq!(
            policy().after_attempt(&closed, true, ok, at, at),
            (EndpointHealth::default(), None)
        );
    }

    #[test]
    fn failing_for_the_whole_disable_span_disables_with_a_reason() {
        let (health, _) = fail(&EndpointHealth::default(), T0);
        let just_before = T0 + Duration::minutes(59);
        let (still, _) = fail(&health, just_before);
        assert!(still.enabled());
        let at = T0 + Duration::hours(1);
        let answered_500 = AttemptSummary {
            status: Some(500),
            error: None,
        };
        let (disabled, event) = policy().after_attempt(&still, false, answered_500, at, at);
        assert_eq!(event, Some(CircuitEvent::Disabled));
        assert_eq!(disabled.circuit(at), CircuitState::Disabled);
        let reason = &disabled
            .disabled
            .as_ref()
            .map(|d| d.reason.clone())
            .unwrap_or_default();
        assert!(reason.contains("2026-11-28T12:00:00Z"), "{reason}");
        assert!(reason.contains("3 failed in a row"), "{reason}");
        assert!(reason.contains("HTTP 500"), "{reason}");
        // Nothing moves a disabled endpoint but its merchant.
        let ok = AttemptSummary {
            status: Some(200),
            error: None,
        };
        assert_eq!(
            policy().after_attempt(&disabled, true, ok, at, at),
            (disabled.clone(), None)
        );
    }

    #[test]
    fn the_default_policy_disables_after_the_retry_schedule_has_run_out() {
        let policy = CircuitPolicy::default();
        let schedule = crate::webhooks::RetrySchedule::standard();
        let schedule_span = Duration::seconds_f64(schedule.span().as_secs_f64() * 1.2);
        assert!(policy.disable_after > schedule_span);
        assert_eq!(policy.open_for(0), Duration::minutes(1));
        assert_eq!(policy.open_for(6), Duration::hours(1));
        assert_eq!(policy.open_for(u32::MAX), Duration::hours(1));
    }
}
