//! The payment session aggregate, its line items, charges and payment attempts.

mod attempt;
mod card_attempts;
mod dispute;
mod hold_action;
mod ledger;
mod refund;
mod request;
mod state;

pub use attempt::{AttemptState, IllegalAttemptMove, PaymentAttempt};
pub use card_attempts::{event_after_decline, CardAttempt};
pub use dispute::{Dispute, DisputeStatus};
pub use hold_action::{HoldAction, HoldActionKind};
pub use ledger::LedgerState;
pub use refund::Refund;
pub use request::{
    parse_transaction_reference, ChargeRequest, ItemRequest, NewSession, SessionFlow,
    SessionRequest, MAX_CHARGES, MAX_ITEMS,
};
pub use state::{IllegalTransition, SessionEvent, SessionState};

use rust_decimal::Decimal;
use time::OffsetDateTime;
use url::Url;

use crate::terminal::CaptureMethod;
use crate::values::{
    Amount, AttemptId, CallbackUrl, Culture, DisplayText, Email, InternalReference, ItemCode,
    LineAmount, MerchantReference, Metadata, SessionId, TerminalNumber,
};

/// Where the payer's browser goes after an integrated checkout (spec section 6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callbacks {
    /// After a successful payment.
    pub success: CallbackUrl,
    /// After a failed payment.
    pub fail: CallbackUrl,
    /// On cancel or back, when given.
    pub back: Option<CallbackUrl>,
}

/// How the payer reaches the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKind {
    /// Start payment: the merchant redirects the payer to the checkout page, and the service
    /// redirects back to the callbacks.
    IntegratedCheckout(Box<Callbacks>),
    /// Generate payment link: a shareable link; no redirect, the merchant polls.
    PaymentLink,
}

impl SessionKind {
    /// True when the session is reached through `flow`'s page.
    pub fn is_flow(&self, flow: SessionFlow) -> bool {
        matches!(
            (self, flow),
            (
                SessionKind::IntegratedCheckout(_),
                SessionFlow::IntegratedCheckout
            ) | (SessionKind::PaymentLink, SessionFlow::PaymentLink)
        )
    }
}

/// A line item shown on the checkout page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The merchant's item code.
    pub code: Option<ItemCode>,
    /// How many, at least 1.
    pub quantity: u32,
    /// What it is.
    pub description: Option<DisplayText>,
    /// Its amount, in the session's currency.
    pub amount: LineAmount,
}

/// An additional charge (shipping, fees) shown on the checkout page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    /// Its name.
    pub name: Option<DisplayText>,
    /// Its amount, in the session's currency.
    pub amount: LineAmount,
}

/// A payment session: what the merchant asked to collect, and where it stands.
///
/// Sessions are made by the start-payment and payment-link use cases from a validated
/// [`SessionRequest`]; afterwards only `state`, `updated_at` and the money moved after the
/// payment (`money`) change, and only through [`SessionState::apply`] and the repository's
/// guarded writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentSession {
    /// The `checkoutSessionId`.
    pub id: SessionId,
    /// The terminal the session belongs to.
    pub terminal: TerminalNumber,
    /// The merchant's `transactionReferenceNumber`.
    pub reference: MerchantReference,
    /// The service's `internalTransactionReferenceNumber`.
    pub internal_reference: InternalReference,
    /// Integrated checkout (with callbacks) or payment link.
    pub kind: SessionKind,
    /// `totalTransactionAmount` and `currencyCode`.
    pub amount: Amount,
    /// `generalPurchaseDescription`.
    pub description: Option<DisplayText>,
    /// `userEmail`.
    pub email: Option<Email>,
    /// `culture`.
    pub culture: Option<Culture>,
    /// `items`.
    pub items: Vec<Item>,
    /// `additionalCharges`.
    pub charges: Vec<Charge>,
    /// `metadata`: the merchant's own pairs, returned as given.
    pub metadata: Metadata,
    /// `captureMethod` when the create asked for one; the terminal's applies when `None`.
    pub capture_method: Option<CaptureMethod>,
    /// Where the session stands.
    pub state: SessionState,
    /// The attempt the session is waiting on or was settled by: only an answer about this
    /// attempt may move the session (`None` before the first card submission).
    pub current_attempt: Option<AttemptId>,
    /// When it was created (UTC).
    pub created_at: OffsetDateTime,
    /// When its state last changed (UTC).
    pub updated_at: OffsetDateTime,
    /// After this instant it can no longer be paid (for links: `expirationDateTime`).
    pub expires_at: OffsetDateTime,
    /// What the merchant captured and refunded after the payment.
    pub money: SessionMoney,
    /// The card attempts, oldest first, as the store last read them (the status record
    /// lists them); empty before the first card.
    pub attempts: Vec<CardAttempt>,
    /// The disputes the processor reported, oldest first, as the store last read them (the
    /// status record lists them); only a captured session has any.
    pub disputes: Vec<Dispute>,
}

/// The money a session moved after its authorisation: what was captured and refunded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionMoney {
    /// The amount the merchant captured (a partial capture is less than the session's
    /// amount); `None` when no capture of the merchant's was recorded (a payment captured
    /// with its authorisation captured the whole amount).
    pub captured: Option<Decimal>,
    /// The sum of the refunds the processor confirmed.
    pub refunded: Decimal,
}

impl PaymentSession {
    /// The amount captured: the merchant's capture, else the whole amount once Successful;
    /// zero while nothing is captured.
    pub fn captured_amount(&self) -> Decimal {
        match self.state {
            SessionState::Successful => self.money.captured.unwrap_or(self.amount.value()),
            _ => Decimal::ZERO,
        }
    }

    /// True when the expiry has passed at `now`.
    pub fn is_past_expiry(&self, now: OffsetDateTime) -> bool {
        now >= self.expires_at
    }

    /// The state the merchant should see at `now`: a pending session whose expiry passed is
    /// reported as Expired even before the sweep has written it.
    pub fn effective_state(&self, now: OffsetDateTime) -> SessionState {
        match self.state {
            SessionState::Pending if self.is_past_expiry(now) => SessionState::Expired,
            state => state,
        }
    }

    /// The merchant page a payer who cannot pay here may go back to, for an integrated
    /// checkout (error pages offer it as a link; nothing redirects to it): the back URL, else
    /// the fail URL, with the same three parameters as [`PaymentSession::redirect_url`] and
    /// the state as it stands. Payment links have none.
    pub fn return_url(&self) -> Option<Url> {
        let SessionKind::IntegratedCheckout(callbacks) = &self.kind else {
            return None;
        };
        let mut url = callbacks
            .back
            .as_ref()
            .unwrap_or(&callbacks.fail)
            .url()
            .clone();
        url.query_pairs_mut()
            .append_pair("checkoutSessionId", &self.id.to_string())
            .append_pair("transactionReferenceNumber", self.reference.as_str())
            .append_pair("state", self.state.name());
        Some(url)
    }

    /// Where to send the payer's browser now, for an integrated checkout in a final state
    /// (the one redirect rule of the service): the success URL after Successful or
    /// ApprovedTransaction, the fail URL after Failed, the back URL (else the fail URL) after
    /// Cancelled. The session id, the merchant reference and the state name are appended as
    /// `checkoutSessionId`, `transactionReferenceNumber` and `state`, after the merchant's own
    /// query. Payment links never redirect, and neither does a session in any other state
    /// (an expired session shows an error page): `None`.
    pub fn redirect_url(&self) -> Option<Url> {
        let SessionKind::IntegratedCheckout(callbacks) = &self.kind else {
            return None;
        };
        let target = match self.state {
            SessionState::Successful | SessionState::ApprovedTransaction => &callbacks.success,
            SessionState::Failed => &callbacks.fail,
            SessionState::Cancelled => callbacks.back.as_ref().unwrap_or(&callbacks.fail),
            _ => return None,
        };
        let mut url = target.url().clone();
        url.query_pairs_mut()
            .append_pair("checkoutSessionId", &self.id.to_string())
            .append_pair("transactionReferenceNumber", self.reference.as_str())
            .append_pair("state", self.state.name());
        Some(url)
    }
}
