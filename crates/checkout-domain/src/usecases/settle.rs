//! Recording what the processor said about an attempt: the one mapping from a processor
//! answer to the attempt's new state, its session's move and the payer's result. Every write
//! is a compare-and-set on (the attempt's expected states, the session's state, the session's
//! current attempt), so a stale answer is kept on its own attempt and never moves the session.

use time::{Duration, OffsetDateTime};

use super::{Checkout, PaymentOutcome, PaymentResult};
use crate::error::{CheckoutError, SvcCode};
use crate::ports::{
    AttemptChange, AuthorizationRequest, ProcessorError, ProcessorOutcome, Recorded,
};
use crate::session::{
    event_after_decline, AttemptState, PaymentAttempt, PaymentSession, SessionEvent,
};
use crate::values::MaxCardAttempts;

/// What is known about an attempt after a processor call.
#[derive(Debug, Clone)]
pub(super) enum Answer {
    /// The processor said what it holds.
    Holds(ProcessorOutcome),
    /// The processor refused the authorisation request: certainly nothing charged.
    NothingCharged(SvcCode),
    /// No usable answer: the processor may hold a charge.
    Unknown,
}

impl Answer {
    /// The answer to an authorisation request (or its replay).
    pub(super) fn of_authorization(answer: Result<ProcessorOutcome, ProcessorError>) -> Answer {
        match answer {
            Ok(outcome) => Answer::Holds(outcome),
            Err(ProcessorError::Controlled(_)) => Answer::NothingCharged(SvcCode::Svc004),
            Err(ProcessorError::Communication(_)) => Answer::Unknown,
        }
    }

    /// The answer to a read of an authorisation: a refused read says nothing about a charge.
    pub(super) fn of_read(answer: Result<ProcessorOutcome, ProcessorError>) -> Answer {
        match answer {
            Ok(outcome) => Answer::Holds(outcome),
            Err(_) => Answer::Unknown,
        }
    }
}

/// How one answer moves an attempt and its session.
struct Effect {
    state: AttemptState,
    svc_code: Option<SvcCode>,
    event: Option<SessionEvent>,
    result: PaymentResult,
}

fn effect_of(holding: &ProcessorOutcome) -> Effect {
    match holding {
        ProcessorOutcome::Approved { captured, .. } => Effect {
            state: if *captured {
                AttemptState::Succeeded
            } else {
                AttemptState::Authorized
            },
            svc_code: None,
            event: Some(if *captured {
                SessionEvent::Captured
            } else {
                SessionEvent::Authorized
            }),
            result: PaymentResult::Approved,
        },
        ProcessorOutcome::Declined { reason, .. } => Effect {
            state: AttemptState::Declined,
            svc_code: Some(SvcCode::Svc006),
            event: Some(SessionEvent::Declined),
            result: PaymentResult::Declined {
                reason: reason.clone(),
            },
        },
        ProcessorOutcome::ChallengeRequired { challenge_url, .. } => Effect {
            state: AttemptState::RequiresAction,
            svc_code: None,
            event: Some(SessionEvent::ChallengeIssued),
            result: PaymentResult::ChallengeRequired {
                challenge_url: challenge_url.clone(),
            },
        },
        ProcessorOutcome::Canceled { .. } => Effect {
            state: AttemptState::Voided,
            svc_code: Some(SvcCode::Svc003),
            event: Some(SessionEvent::AttemptVoided),
            result: PaymentResult::Retry {
                code: SvcCode::Svc003,
            },
        },
    }
}

impl Checkout {
    /// The authorisation request of `attempt` for `session`: the same, field for field, on
    /// every send, so that a replay is recognised by the processor.
    pub(super) async fn send_authorization(
        &self,
        session: &PaymentSession,
        attempt: &PaymentAttempt,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.ports
            .processor
            .authorize(AuthorizationRequest {
                attempt: attempt.id,
                session: session.id(),
                internal_reference: session.internal_reference(),
                amount: session.amount(),
                payment_method: &attempt.payment_method,
                return_url: &attempt.return_url,
                capture: attempt.capture_method,
            })
            .await
    }

    /// Records `answer` about `attempt` (stored in one of `expected`), whose session is
    /// `session` in the state the caller saw. Returns the session as it now stands and what
    /// the payer is told.
    /// Counts with the card-testing guard (when one is wired) a decline the processor gave
    /// after a 3DS challenge: the post that led to the challenge was recorded as answered,
    /// not declined. The payment is decided: a failed record must not hide its outcome.
    pub(super) async fn count_late_decline(&self, session: crate::values::SessionId) {
        if let Some(guard) = &self.guard {
            let _ = guard.store.record_late_decline(session, self.now()).await;
        }
    }

    pub(super) async fn record_answer(
        &self,
        session: PaymentSession,
        attempt: &PaymentAttempt,
        expected: &[AttemptState],
        answer: Answer,
    ) -> Result<PaymentOutcome, CheckoutError> {
        let now = self.now();
        let from = session.state();
        let (mut next, event, result) = match &answer {
            Answer::Holds(holding) => {
                let effect = effect_of(holding);
                if effect.state == attempt.state {
                    // Nothing new (a challenge still waiting for the payer).
                    return Ok(PaymentOutcome {
                        session,
                        result: effect.result,
                    });
                }
                let mut next = attempt.moved(effect.state, now)?;
                if effect.state == AttemptState::RequiresAction {
                    // Checked now and then, in case the payer finishes at the processor and
                    // never comes back.
                    next = self.with_next_check(next, attempt, now);
                }
                next.svc_code = effect.svc_code;
                if let Some(reference) = holding.processor_reference() {
                    next.processor_reference = Some(reference.to_owned());
                }
                if let ProcessorOutcome::ChallengeRequired { challenge_url, .. } = holding {
                    next.challenge_url.clone_from(challenge_url);
                }
                (next, effect.event, effect.result)
            }
            Answer::NothingCharged(code) => {
                let mut next = attempt.moved(AttemptState::NothingCharged, now)?;
                next.svc_code = Some(*code);
                (
                    next,
                    Some(SessionEvent::AttemptVoided),
                    PaymentResult::Retry { code: *code },
                )
            }
            Answer::Unknown => {
                let mut next =
                    self.with_next_check(attempt.moved(AttemptState::Unknown, now)?, attempt, now);
                next.svc_code = Some(SvcCode::Svc003);
                (next, None, PaymentResult::Unresolved)
            }
        };
        next.updated_at = now;
        let event = match event {
            Some(SessionEvent::Declined) => Some(self.decline_event(&session, attempt).await?),
            other => other,
        };
        let moving = event.filter(|&event| from.apply(event).is_ok());
        let session_move = moving
            .and_then(|event| from.apply(event).ok())
            .map(|to| (from, to));
        let recorded = self
            .ports
            .attempts
            .record_attempt(&AttemptChange {
                attempt: &next,
                expected,
                session_move,
            })
            .await?;
        if recorded == Recorded::Moved
            && attempt.state == AttemptState::RequiresAction
            && next.state == AttemptState::Declined
        {
            // Declined after its challenge (the payer back from the processor's page, a
            // sweep, a processor event): counted once, as the move is recorded once.
            self.count_late_decline(session.id()).await;
        }
        match (recorded, moving) {
            (Recorded::Moved, Some(event)) => Ok(PaymentOutcome {
                session: session.moved(event, now)?,
                result,
            }),
            (Recorded::Moved, None) if matches!(answer, Answer::Unknown) => {
                Ok(PaymentOutcome { session, result })
            }
            _ => Ok(PaymentOutcome {
                session: self.reload(session.id()).await?,
                result: PaymentResult::AlreadyHandled,
            }),
        }
    }

    /// The session's event for the processor's decline of `attempt`: Failed, or back to
    /// Pending while the terminal allows another card ([`event_after_decline`]). The other
    /// attempts of the session are final when its current attempt is answered (a new attempt
    /// starts only from Pending), so their count of declines cannot change under us; and the
    /// session move itself is a compare-and-set on the current attempt.
    async fn decline_event(
        &self,
        session: &PaymentSession,
        attempt: &PaymentAttempt,
    ) -> Result<SessionEvent, CheckoutError> {
        let limit = self
            .ports
            .terminals
            .get_terminal(session.terminal())
            .await?
            .map(|t| t.max_card_attempts)
            .unwrap_or_default();
        if limit == MaxCardAttempts::SPEC {
            return Ok(SessionEvent::Declined);
        }
        let earlier = self
            .ports
            .attempts
            .attempts(session.id())
            .await?
            .iter()
            .filter(|a| a.id != attempt.id && a.state == AttemptState::Declined)
            .count();
        Ok(event_after_decline(earlier + 1, limit))
    }

    /// `next` (the new standing of `previous`) with its next check: the policy's first delay
    /// when the state changed, else twice the last wait (up to the cap); none once the
    /// processor's idempotency window has passed (the attempt then waits for manual review).
    fn with_next_check(
        &self,
        mut next: PaymentAttempt,
        previous: &PaymentAttempt,
        now: OffsetDateTime,
    ) -> PaymentAttempt {
        let policy = &self.policy.reconcile;
        let delay = if previous.state == next.state {
            next.checks = previous.checks.saturating_add(1);
            backoff(policy.first_check_after, policy.max_backoff, next.checks)
        } else {
            next.checks = 0;
            policy.first_check_after
        };
        let at = now + delay + jitter(previous, delay);
        next.next_check_at = (at < previous.created_at + policy.give_up_after).then_some(at);
        next
    }

    /// Records that the processor still holds `attempt` as it was (a challenge still waiting),
    /// with its next check pushed back.
    pub(super) async fn reschedule(&self, attempt: &PaymentAttempt) -> Result<(), CheckoutError> {
        let now = self.now();
        let next = self.with_next_check(attempt.rescheduled(now), attempt, now);
        self.ports
            .attempts
            .record_attempt(&AttemptChange {
                attempt: &next,
                expected: &[attempt.state],
                session_move: None,
            })
            .await?;
        Ok(())
    }

    /// The session's current attempt; an error when the store holds none (a session in
    /// Processing or ChallengeRequired always has one).
    pub(super) async fn current_attempt(
        &self,
        session: &PaymentSession,
    ) -> Result<PaymentAttempt, CheckoutError> {
        let id = session.current_attempt().ok_or_else(|| {
            anyhow::anyhow!(
                "session {} in {} has no current attempt",
                session.id(),
                session.state()
            )
        })?;
        Ok(self.ports.attempts.attempt(id).await?.ok_or_else(|| {
            anyhow::anyhow!("attempt {id} of session {} is missing", session.id())
        })?)
    }

    /// The session's current attempt and the processor's reference of it; an error when it
    /// has none (a session that reached the processor always has one).
    pub(super) async fn processor_reference(
        &self,
        session: &PaymentSession,
    ) -> Result<(PaymentAttempt, String), CheckoutError> {
        let attempt = self.current_attempt(session).await?;
        let reference = attempt.processor_reference.clone().ok_or_else(|| {
            anyhow::anyhow!(
                "attempt {} of session {} has no processor reference",
                attempt.id,
                session.id()
            )
        })?;
        Ok((attempt, reference))
    }

    /// Ends a session that waits for a challenge, because the payer cancelled or its expiry
    /// passed (`event`): the authorisation is cancelled at the processor first, and the session
    /// ends only when the processor confirmed the cancel. If the processor says the challenge
    /// was already passed (or failed), that is recorded instead. When the processor cannot be
    /// reached nothing changes ([`PaymentResult::Unresolved`]).
    pub(super) async fn end_challenge(
        &self,
        session: PaymentSession,
        event: SessionEvent,
    ) -> Result<PaymentOutcome, CheckoutError> {
        let (attempt, reference) = self.processor_reference(&session).await?;
        let expected = [AttemptState::RequiresAction];
        match self.ports.processor.cancel(&reference).await {
            Ok(ProcessorOutcome::Canceled { .. }) => {
                let now = self.now();
                let mut next = attempt.moved(AttemptState::Voided, now)?;
                next.svc_code = None;
                let to = session.state().apply(event)?;
                let recorded = self
                    .ports
                    .attempts
                    .record_attempt(&AttemptChange {
                        attempt: &next,
                        expected: &expected,
                        session_move: Some((session.state(), to)),
                    })
                    .await?;
                if recorded == Recorded::Moved {
                    Ok(PaymentOutcome {
                        session: session.moved(event, now)?,
                        result: PaymentResult::Cancelled,
                    })
                } else {
                    Ok(PaymentOutcome {
                        session: self.reload(session.id()).await?,
                        result: PaymentResult::AlreadyHandled,
                    })
                }
            }
            Ok(holding) => {
                self.record_answer(session, &attempt, &expected, Answer::Holds(holding))
                    .await
            }
            Err(_) => Ok(PaymentOutcome {
                session,
                result: PaymentResult::Unresolved,
            }),
        }
    }
}

/// `first × 2^checks`, at most `cap`.
fn backoff(first: Duration, cap: Duration, checks: u32) -> Duration {
    let factor = 1_i32.checked_shl(checks.min(30)).unwrap_or(i32::MAX);
    first
        .checked_mul(factor)
        .map_or(cap, |d| if d > cap { cap } else { d })
}

/// Up to a fifth of `delay`, spread by the attempt's id and check count, so that attempts
/// that failed together are not all retried in the same sweep.
fn jitter(attempt: &PaymentAttempt, delay: Duration) -> Duration {
    let uuid = attempt.id.as_uuid();
    let bytes = uuid.as_bytes();
    let spread =
        u32::from(bytes[15] ^ bytes[7]).wrapping_add(attempt.checks.wrapping_mul(37)) % 256;
    delay * f64::from(spread) / (5.0 * 256.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let first = Duration::seconds(30);
        let cap = Duration::hours(1);
        assert_eq!(backoff(first, cap, 0), Duration::seconds(30));
        assert_eq!(backoff(first, cap, 1), Duration::seconds(60));
        assert_eq!(backoff(first, cap, 3), Duration::seconds(240));
        assert_eq!(backoff(first, cap, 10), cap);
        assert_eq!(backoff(first, cap, 200), cap);
    }
}
