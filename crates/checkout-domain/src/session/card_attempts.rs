//! Another card after a decline: the rule that decides whether a declined card fails the
//! session or leaves it payable, and the attempts as the status record lists them.

use time::OffsetDateTime;

use super::{AttemptState, PaymentAttempt, SessionEvent};
use crate::card::CardBrand;
use crate::error::SvcCode;
use crate::values::MaxCardAttempts;

/// The session's event after the processor declined a card, when `declines` cards of the
/// session (this one included) were declined and its terminal allows `limit`:
/// [`SessionEvent::Declined`] (Failed) once the limit is reached, else
/// [`SessionEvent::DeclinedRetryable`] (back to Pending, for another card). With the default
/// limit of 1 every decline is Failed, as spec 7.4.4 says.
///
/// Only declines count: a refused request or a lost answer is not a card the issuer declined.
pub fn event_after_decline(declines: usize, limit: MaxCardAttempts) -> SessionEvent {
    if declines >= usize::from(limit.get()) {
        SessionEvent::Declined
    } else {
        SessionEvent::DeclinedRetryable
    }
}

/// One card submission as the merchant sees it in the status record: when, which card
/// (brand and last four digits only), and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardAttempt {
    /// When the card was submitted (UTC).
    pub at: OffsetDateTime,
    /// The card brand.
    pub brand: CardBrand,
    /// The card's last four digits.
    pub last4: String,
    /// Where the attempt stands.
    pub state: AttemptState,
    /// The service code it ended with (SVC_006 for a decline), if any.
    pub code: Option<SvcCode>,
}

impl CardAttempt {
    /// The outcome's name in the status record: `Processing` (sent, no answer yet),
    /// `ChallengeRequired`, `Successful`, `ApprovedTransaction`, `Declined`, `NothingCharged`
    /// (the processor refused the request), `Unknown` (the answer was lost; being
    /// reconciled) or `Cancelled` (cancelled at the processor).
    pub fn outcome(&self) -> &'static str {
        Self::outcome_of(self.state)
    }

    /// The outcome's name of an attempt in `state` (see [`outcome`](Self::outcome)).
    pub fn outcome_of(state: AttemptState) -> &'static str {
        match state {
            AttemptState::Sent => "Processing",
            AttemptState::RequiresAction => "ChallengeRequired",
            AttemptState::Succeeded => "Successful",
            AttemptState::Authorized => "ApprovedTransaction",
            AttemptState::Declined => "Declined",
            AttemptState::NothingCharged => "NothingCharged",
            AttemptState::Unknown => "Unknown",
            AttemptState::Voided => "Cancelled",
        }
    }
}

impl From<&PaymentAttempt> for CardAttempt {
    fn from(attempt: &PaymentAttempt) -> Self {
        CardAttempt {
            at: attempt.created_at,
            brand: attempt.card_brand,
            last4: attempt.card_last4.clone(),
            state: attempt.state,
            code: attempt.svc_code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(n: i64) -> MaxCardAttempts {
        MaxCardAttempts::new(n).unwrap_or_else(|_| unreachable!())
    }

    #[test]
    fn the_default_fails_the_first_decline() {
        assert_eq!(
            event_after_decline(1, MaxCardAttempts::SPEC),
            SessionEvent::Declined
        );
    }

    #[test]
    fn a_decline_before_the_last_allowed_card_reopens() {
        assert_eq!(
            event_after_decline(1, limit(3)),
            SessionEvent::DeclinedRetryable
        );
        assert_eq!(
            event_after_decline(2, limit(3)),
            SessionEvent::DeclinedRetryable
        );
        assert_eq!(event_after_decline(3, limit(3)), SessionEvent::Declined);
        assert_eq!(event_after_decline(4, limit(3)), SessionEvent::Declined);
    }

    #[test]
    fn every_attempt_state_has_an_outcome_name() {
        let names: std::collections::HashSet<_> = AttemptState::ALL
            .into_iter()
            .map(|state| {
                CardAttempt {
                    at: OffsetDateTime::UNIX_EPOCH,
                    brand: CardBrand::Visa,
                    last4: "4242".into(),
                    state,
                    code: None,
                }
                .outcome()
            })
            .collect();
        assert_eq!(names.len(), AttemptState::ALL.len());
    }
}
