//! Payment attempts: the ledger of card submissions at the processor boundary. One attempt per
//! card submission, with its own idempotency key (its id), its own state machine, and what a
//! replay needs (the processor's payment-method reference, never card data).

use time::OffsetDateTime;

use crate::card::CardBrand;
use crate::error::SvcCode;
use crate::terminal::CaptureMethod;
use crate::values::{AttemptId, SessionId};

/// Where one attempt stands at the processor, as far as the service knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptState {
    /// Recorded before the authorisation request was sent; the request is under way, or the
    /// process died before its answer was recorded. Reconciliation replays it when due.
    Sent,
    /// The processor asked for a 3-D Secure challenge; waiting for the payer.
    RequiresAction,
    /// Authorised and captured.
    Succeeded,
    /// Authorised, not captured.
    Authorized,
    /// Declined by the issuer or the processor (SVC_006): nothing charged.
    Declined,
    /// The processor refused the request or confirmed it holds nothing for it: nothing
    /// charged, with certainty.
    NothingCharged,
    /// The answer was lost (timeout, reset, 5xx, 409): the processor may hold a charge.
    /// Reconciliation replays the request with the same key when `next_check_at` comes.
    Unknown,
    /// The authorisation was cancelled at the processor (abandoned challenge, payer cancel,
    /// expiry), which confirmed it: nothing charged.
    Voided,
}

impl AttemptState {
    /// Every state.
    pub const ALL: [AttemptState; 8] = [
        AttemptState::Sent,
        AttemptState::RequiresAction,
        AttemptState::Succeeded,
        AttemptState::Authorized,
        AttemptState::Declined,
        AttemptState::NothingCharged,
        AttemptState::Unknown,
        AttemptState::Voided,
    ];

    /// The states whose outcome is not known yet and that reconciliation resolves.
    pub const UNRESOLVED: [AttemptState; 2] = [AttemptState::Sent, AttemptState::Unknown];

    /// The states reconciliation asks the processor about when their next check comes: the
    /// unresolved ones, and a challenge the payer may have finished at the processor without
    /// coming back.
    pub const CHECKED: [AttemptState; 3] = [
        AttemptState::Sent,
        AttemptState::Unknown,
        AttemptState::RequiresAction,
    ];

    /// A lower-case name, for storage.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptState::Sent => "sent",
            AttemptState::RequiresAction => "requires_action",
            AttemptState::Succeeded => "succeeded",
            AttemptState::Authorized => "authorized",
            AttemptState::Declined => "declined",
            AttemptState::NothingCharged => "nothing_charged",
            AttemptState::Unknown => "unknown",
            AttemptState::Voided => "voided",
        }
    }

    /// Parses a name written by [`AttemptState::as_str`].
    pub fn parse(s: &str) -> Option<AttemptState> {
        AttemptState::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// True when the attempt's outcome is final: the processor holds a charge
    /// (Succeeded, Authorized) or certainly none (Declined, NothingCharged, Voided).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            AttemptState::Succeeded
                | AttemptState::Authorized
                | AttemptState::Declined
                | AttemptState::NothingCharged
                | AttemptState::Voided
        )
    }

    /// True when the processor certainly holds no charge for the attempt.
    pub fn charged_nothing(self) -> bool {
        matches!(
            self,
            AttemptState::Declined | AttemptState::NothingCharged | AttemptState::Voided
        )
    }

    /// Whether the attempt state machine allows `self → to`. A final state never changes;
    /// `Unknown → Unknown` is a reschedule.
    pub fn can_become(self, to: AttemptState) -> bool {
        use AttemptState as A;
        match self {
            A::Sent | A::Unknown => matches!(
                to,
                A::RequiresAction
                    | A::Succeeded
                    | A::Authorized
                    | A::Declined
                    | A::NothingCharged
                    | A::Unknown
            ),
            A::RequiresAction => matches!(
                to,
                A::Sent | A::Succeeded | A::Authorized | A::Declined | A::Voided | A::Unknown
            ),
            A::Succeeded | A::Authorized | A::Declined | A::NothingCharged | A::Voided => false,
        }
    }
}

/// One card submission for a session. Holds the brand and last four digits only: never the
/// number, the expiry or the CVV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentAttempt {
    /// The attempt id, also the processor idempotency key.
    pub id: AttemptId,
    /// The session paid.
    pub session_id: SessionId,
    /// The card brand.
    pub card_brand: CardBrand,
    /// The card's last four digits.
    pub card_last4: String,
    /// The processor's payment-method reference the authorisation was asked for with: what a
    /// replay of the same request needs. Never card data.
    pub payment_method: String,
    /// Where a processor-hosted challenge sends the payer back: part of the authorisation
    /// request, kept so that a replay (even from an instance with another address) is the
    /// same request.
    pub return_url: String,
    /// Whether the authorisation asks for capture with it or a hold: fixed when the attempt
    /// begins (from its terminal), so that every send of the attempt is the same request.
    pub capture_method: CaptureMethod,
    /// The processor's reference for the authorisation, once known.
    pub processor_reference: Option<String>,
    /// Where a 3DS challenge happens, when the processor hosts it.
    pub challenge_url: Option<String>,
    /// Where the attempt stands.
    pub state: AttemptState,
    /// The service code the attempt ended with, if any.
    pub svc_code: Option<SvcCode>,
    /// How many times reconciliation asked the processor about it without an answer.
    pub checks: u32,
    /// When reconciliation should next ask the processor, while the attempt is Sent, Unknown
    /// or RequiresAction ([`AttemptState::CHECKED`]); `None` once final, or when it was given
    /// up for manual review.
    pub next_check_at: Option<OffsetDateTime>,
    /// When it was made (UTC).
    pub created_at: OffsetDateTime,
    /// When it last changed (UTC).
    pub updated_at: OffsetDateTime,
}

/// A move the attempt state machine refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal attempt move: {from:?} to {to:?}")]
pub struct IllegalAttemptMove {
    /// The state the attempt was in.
    pub from: AttemptState,
    /// The state it was to move to.
    pub to: AttemptState,
}

impl PaymentAttempt {
    /// The same attempt moved to `state` at `at`, with `next_check_at` cleared when the
    /// new state needs no more checks; refused unless
    /// [`can_become`](AttemptState::can_become) allows it, so that no use case moves an
    /// attempt around the state machine.
    pub fn moved(
        &self,
        state: AttemptState,
        at: OffsetDateTime,
    ) -> Result<PaymentAttempt, IllegalAttemptMove> {
        if !self.state.can_become(state) {
            return Err(IllegalAttemptMove {
                from: self.state,
                to: state,
            });
        }
        let mut next = self.clone();
        next.state = state;
        next.updated_at = at;
        if !AttemptState::CHECKED.contains(&state) {
            next.next_check_at = None;
        }
        Ok(next)
    }

    /// The same attempt, in the same state, touched at `at`: a reschedule of its next check.
    pub fn rescheduled(&self, at: OffsetDateTime) -> PaymentAttempt {
        PaymentAttempt {
            updated_at: at,
            ..self.clone()
        }
    }
}
