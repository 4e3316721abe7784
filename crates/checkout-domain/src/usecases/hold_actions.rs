//! What the merchant's capture and void share: the action is recorded before the processor
//! is asked (one action holds the authorisation at a time), every processor call for it
//! carries its own key, and it settles by the processor's answer, by the merchant's retry,
//! or by the reconciliation sweep. The session moves only through
//! [`SessionState::apply`], in the same transaction as the action's success.

use rust_decimal::Decimal;

use super::cancel_payment::not_reversible;
use super::idempotent_create::AsItStands;
use super::Checkout;
use crate::error::{CheckoutError, IdempotencyConflict, SvcCode};
use crate::ports::{ActionBegun, CaptureRequest, ProcessorError, ProcessorOutcome, SessionMove};
use crate::session::{
    HoldAction, HoldActionKind, LedgerState, PaymentSession, SessionEvent, SessionState,
};
use crate::values::{Amount, IdempotencyKey, SessionId};

/// A capture or void as it stands after a request: the session and the action, in any state.
#[derive(Debug, Clone)]
pub struct ActionDone {
    /// The session (Successful after a capture, Voided after a void, once succeeded).
    pub session: PaymentSession,
    /// The action.
    pub action: HoldAction,
}

impl ActionDone {
    /// The merchant's answer: the session when the action succeeded with what was asked;
    /// otherwise the ProblemDetails of what holds.
    pub fn answer(self) -> Result<PaymentSession, CheckoutError> {
        let action = &self.action;
        match (action.kind, action.state) {
            (HoldActionKind::Capture, LedgerState::Succeeded) => {
                if action.captured == Some(action.amount) {
                    Ok(self.session)
                } else {
                    Err(CheckoutError::svc_with(
                        SvcCode::Svc008,
                        format!(
                            "The processor holds {} captured, not the {} asked; nothing else \
                             was captured.",
                            action.captured.unwrap_or_default(),
                            action.amount
                        ),
                    ))
                }
            }
            (HoldActionKind::Void, LedgerState::Succeeded) => Ok(self.session),
            (HoldActionKind::Capture, LedgerState::Failed)
                if self.session.state() == SessionState::Expired =>
            {
                Err(CheckoutError::svc_with(
                    SvcCode::Svc008,
                    "The authorisation expired at the processor uncaptured, so it cannot be \
                     captured; nothing was charged.",
                ))
            }
            (HoldActionKind::Capture, LedgerState::Failed) => Err(CheckoutError::svc_with(
                action.svc_code.unwrap_or(SvcCode::Svc004),
                "The processor refused the capture; nothing was captured.",
            )),
            (HoldActionKind::Void, LedgerState::Failed) => {
                Err(if action.svc_code == Some(SvcCode::Svc011) {
                    settled()
                } else {
                    CheckoutError::svc_with(
                        SvcCode::Svc009,
                        "The processor refused the void; nothing changed.",
                    )
                })
            }
            (HoldActionKind::Capture, LedgerState::Sent | LedgerState::Unknown) => {
                Err(CheckoutError::svc_with(
                    SvcCode::Svc003,
                    "The processor's answer to the capture was lost; it is recorded as pending \
                     and checked again automatically, and nothing is reported as captured until \
                     the processor confirms it. Send the same request again (with the same \
                     Idempotency-Key) to learn its outcome: it never captures twice.",
                ))
            }
            (HoldActionKind::Void, LedgerState::Sent | LedgerState::Unknown) => {
                Err(CheckoutError::svc_with(
                    SvcCode::Svc009,
                    "The processor did not confirm the void; it is recorded as pending and \
                     checked again automatically. Send the same request again to learn its \
                     outcome.",
                ))
            }
            // Never the merchant's request: only what holds the authorisation instead.
            (HoldActionKind::Expiry, _) => Err(CheckoutError::svc_with(
                SvcCode::Svc008,
                "The authorisation expired at the processor uncaptured; nothing was charged.",
            )),
        }
    }
}

impl AsItStands for ActionDone {
    type Answer = PaymentSession;

    fn is_settled(&self) -> bool {
        self.action.state.is_settled()
    }

    fn answer(self) -> Result<PaymentSession, CheckoutError> {
        ActionDone::answer(self)
    }
}

/// SVC_011 for a void of a captured payment.
pub(super) fn settled() -> CheckoutError {
    CheckoutError::svc_with(
        SvcCode::Svc011,
        "The payment is captured (settled) and cannot be voided; refund it instead.",
    )
}

impl Checkout {
    /// The capture or void `kind` of `amount` on the caller's session `id` under `key`: the
    /// action the key already names, or a new one; asked at the processor unless settled.
    pub(super) async fn act_on_hold(
        &self,
        id: SessionId,
        kind: HoldActionKind,
        amount: Amount,
        key: Option<&IdempotencyKey>,
    ) -> Result<ActionDone, CheckoutError> {
        let now = self.now();
        let fresh = HoldAction {
            id: self.ports.ids.action_id(),
            session_id: id,
            kind,
            amount: amount.value(),
            state: LedgerState::Sent,
            captured: None,
            svc_code: None,
            key: key.cloned(),
            next_check_at: Some(now + self.policy.reconcile.first_check_after),
            created_at: now,
            updated_at: now,
        };
        let action = match self.ports.reversals.begin_action(&fresh).await? {
            ActionBegun::Begun => fresh,
            ActionBegun::Existing(stored) => {
                if stored.kind != kind || stored.amount != fresh.amount {
                    return Err(IdempotencyConflict::KeyReused.into());
                }
                stored
            }
            // The natural retry of a request whose answer was lost, sent without a key: the
            // same action, asked again with its own processor key.
            ActionBegun::Held(other)
                if key.is_none()
                    && other.kind == kind
                    && other.amount == fresh.amount
                    && !other.state.is_settled() =>
            {
                other
            }
            ActionBegun::Held(other) => return Err(self.held_by(id, kind, &other).await?),
            ActionBegun::NotHeld(_) => {
                let session = self.reload(id).await?;
                return Err(match (kind, session.state()) {
                    (HoldActionKind::Void, SessionState::Successful) => settled(),
                    _ => not_reversible(&session, verb(kind)),
                });
            }
        };
        let action = if action.state.is_settled() {
            action
        } else {
            let session = self.load(id).await?;
            let action = self.drive_action(&session, action).await?;
            if action.kind == HoldActionKind::Capture && action.state == LedgerState::Failed {
                // A refused capture may be an authorisation that expired at the processor.
                self.check_hold(&self.reload(id).await?).await?;
            }
            action
        };
        Ok(ActionDone {
            session: self.reload(id).await?,
            action,
        })
    }

    /// The ProblemDetails for a `kind` refused because `other` holds the authorisation.
    async fn held_by(
        &self,
        id: SessionId,
        kind: HoldActionKind,
        other: &HoldAction,
    ) -> Result<CheckoutError, CheckoutError> {
        let session = self.reload(id).await?;
        if other.state == LedgerState::Succeeded {
            return Ok(match (kind, other.kind) {
                (HoldActionKind::Void, HoldActionKind::Capture) => settled(),
                _ => not_reversible(&session, verb(kind)),
            });
        }
        let what = match other.kind {
            HoldActionKind::Capture => format!("a capture of {}", other.amount),
            HoldActionKind::Void => "a void".to_owned(),
            HoldActionKind::Expiry => "its expiry".to_owned(),
        };
        Ok(CheckoutError::svc_with(
            SvcCode::Svc008,
            format!(
                "The payment is {} (state code {}) with {what} pending at the processor; it \
                 cannot be {} until that is settled, and nothing changed.",
                session.state().name(),
                session.state().code(),
                verb(kind)
            ),
        ))
    }

    /// Asks the processor about an unsettled `action` of `session` once, with the action's own
    /// key, and records the answer (moving the session when it succeeded). Returns the action
    /// as stored afterwards.
    pub(super) async fn drive_action(
        &self,
        session: &PaymentSession,
        mut action: HoldAction,
    ) -> Result<HoldAction, CheckoutError> {
        let (_, reference) = self.processor_reference(session).await?;
        let (state, captured, code) = match action.kind {
            HoldActionKind::Capture => {
                let amount = Amount::new(action.amount, session.amount().currency())
                    .map_err(|e| anyhow::anyhow!("capture {}: {e:?}", action.id))?;
                let request = CaptureRequest {
                    action: action.id,
                    processor_reference: &reference,
                    amount,
                };
                match self.ports.processor.capture(request).await {
                    Ok(captured) => (LedgerState::Succeeded, Some(captured), None),
                    Err(ProcessorError::Controlled(_)) => {
                        (LedgerState::Failed, None, Some(SvcCode::Svc004))
                    }
                    Err(ProcessorError::Communication(_)) => (LedgerState::Unknown, None, None),
                }
            }
            HoldActionKind::Void => match self.ports.processor.cancel(&reference).await {
                Ok(ProcessorOutcome::Canceled { .. }) => (LedgerState::Succeeded, None, None),
                Ok(ProcessorOutcome::Approved { captured: true, .. }) => {
                    (LedgerState::Failed, None, Some(SvcCode::Svc011))
                }
                Err(ProcessorError::Controlled(_)) => {
                    (LedgerState::Failed, None, Some(SvcCode::Svc009))
                }
                Ok(_) | Err(ProcessorError::Communication(_)) => (LedgerState::Unknown, None, None),
            },
            // A read: the processor released the authorisation, or it still holds it.
            HoldActionKind::Expiry => match self.ports.processor.retrieve(&reference).await {
                Ok(ProcessorOutcome::Canceled { .. }) => (LedgerState::Succeeded, None, None),
                Ok(ProcessorOutcome::Approved { .. }) => (LedgerState::Failed, None, None),
                Ok(_) | Err(_) => (LedgerState::Unknown, None, None),
            },
        };
        let now = self.now();
        action.state = state;
        action.captured = captured;
        action.svc_code = code;
        action.updated_at = now;
        action.next_check_at = match state {
            LedgerState::Unknown | LedgerState::Sent => {
                Some(now + self.ledger_wait(action.created_at))
            }
            LedgerState::Succeeded | LedgerState::Failed => None,
        };
        let session_move = match state {
            LedgerState::Succeeded => {
                let event = match action.kind {
                    HoldActionKind::Capture => SessionEvent::MerchantCaptured,
                    HoldActionKind::Void => SessionEvent::MerchantVoided,
                    HoldActionKind::Expiry => SessionEvent::AuthorizationExpired,
                };
                let from = SessionState::ApprovedTransaction;
                Some(SessionMove {
                    from,
                    to: from.apply(event)?,
                })
            }
            _ => None,
        };
        if self
            .ports
            .reversals
            .settle_action(&action, session_move)
            .await?
        {
            return Ok(action);
        }
        // Settled meanwhile by another request or the sweep: its word stands.
        let stored = self.ports.reversals.actions(session.id()).await?;
        stored
            .into_iter()
            .find(|a| a.id == action.id)
            .ok_or_else(|| anyhow::anyhow!("action {} vanished", action.id).into())
    }

    /// How long after now an unsettled ledger row created at `created_at` is next checked:
    /// its age, at least the first wait and at most the longest (so the waits roughly double).
    pub(super) fn ledger_wait(&self, created_at: time::OffsetDateTime) -> time::Duration {
        let policy = self.policy.reconcile;
        let age = self.now() - created_at;
        age.min(policy.max_backoff).max(policy.first_check_after)
    }
}

/// The past participle the SVC_008 detail uses for `kind`.
fn verb(kind: HoldActionKind) -> &'static str {
    match kind {
        HoldActionKind::Capture => "captured",
        HoldActionKind::Void => "voided",
        HoldActionKind::Expiry => "expired",
    }
}

/// `value`, or the session's whole amount when `None`, for a capture.
pub(super) fn capture_amount(
    checkout: &Checkout,
    session: &PaymentSession,
    value: Option<Decimal>,
) -> Result<Amount, CheckoutError> {
    match value {
        Some(value) => checkout.amount_of(session, value),
        None => Ok(session.amount()),
    }
}
