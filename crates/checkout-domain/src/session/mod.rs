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
    Amount, AmountError, AttemptId, CallbackUrl, Culture, Currency, DisplayText, Email,
    InternalReference, ItemCode, LineAmount, MerchantReference, Metadata, MovedAmount, SessionId,
    TerminalNumber,
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
/// Its fields are private to this module: a session is made only by
/// [`PaymentSession::restore`] (a new one by the create use cases, a stored one by the store
/// adapter reading its row), and afterwards its state moves only through
/// [`SessionState::apply`] ([`PaymentSession::moved`], [`PaymentSession::submitted`]) after
/// the repository's guarded write recorded the move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentSession {
    id: SessionId,
    terminal: TerminalNumber,
    reference: MerchantReference,
    internal_reference: InternalReference,
    kind: SessionKind,
    amount: Amount,
    description: Option<DisplayText>,
    email: Option<Email>,
    culture: Option<Culture>,
    items: Vec<Item>,
    charges: Vec<Charge>,
    metadata: Metadata,
    capture_method: Option<CaptureMethod>,
    state: SessionState,
    current_attempt: Option<AttemptId>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    money: SessionMoney,
    attempts: Vec<CardAttempt>,
    disputes: Vec<Dispute>,
}

/// A session as a store holds it, field by field: what [`PaymentSession::restore`] rebuilds
/// a session from and [`PaymentSession::into_record`] gives back. For store adapters reading
/// a row and for the create use cases (a new session is Pending, nothing moved); nothing else
/// builds one to change a session's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
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
    /// The attempt the session is waiting on or was settled by.
    pub current_attempt: Option<AttemptId>,
    /// When it was created (UTC).
    pub created_at: OffsetDateTime,
    /// When its state last changed (UTC).
    pub updated_at: OffsetDateTime,
    /// After this instant it can no longer be paid.
    pub expires_at: OffsetDateTime,
    /// What the merchant captured and refunded after the payment, in the session's currency.
    pub money: SessionMoney,
    /// The card attempts, oldest first, as the store read them.
    pub attempts: Vec<CardAttempt>,
    /// The disputes, oldest first, as the store read them.
    pub disputes: Vec<Dispute>,
}

/// The money a session moved after its authorisation, in the session's currency and at its
/// scale: what was captured and refunded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionMoney {
    captured: Option<Amount>,
    refunded: MovedAmount,
}

impl SessionMoney {
    /// Nothing captured by the merchant, nothing refunded, in `currency`.
    pub fn nothing(currency: Currency) -> SessionMoney {
        SessionMoney {
            captured: None,
            refunded: MovedAmount::zero(currency),
        }
    }

    /// The amounts a store holds, checked against `currency` (its scale; a capture above
    /// zero, a refunded sum zero or more).
    pub fn new(
        captured: Option<Decimal>,
        refunded: Decimal,
        currency: Currency,
    ) -> Result<SessionMoney, AmountError> {
        Ok(SessionMoney {
            captured: captured.map(|c| Amount::new(c, currency)).transpose()?,
            refunded: MovedAmount::new(refunded, currency)?,
        })
    }

    /// The amount the merchant captured (a partial capture is less than the session's
    /// amount); `None` when no capture of the merchant's was recorded (a payment captured
    /// with its authorisation captured the whole amount).
    pub fn captured(&self) -> Option<Amount> {
        self.captured
    }

    /// The sum of the refunds the processor confirmed.
    pub fn refunded(&self) -> MovedAmount {
        self.refunded
    }
}

impl PaymentSession {
    /// Rebuilds a session from what a store holds (or opens a new one from a record that is
    /// Pending with nothing moved): the one way to make a session.
    pub fn restore(record: SessionRecord) -> PaymentSession {
        let SessionRecord {
            id,
            terminal,
            reference,
            internal_reference,
            kind,
            amount,
            description,
            email,
            culture,
            items,
            charges,
            metadata,
            capture_method,
            state,
            current_attempt,
            created_at,
            updated_at,
            expires_at,
            money,
            attempts,
            disputes,
        } = record;
        PaymentSession {
            id,
            terminal,
            reference,
            internal_reference,
            kind,
            amount,
            description,
            email,
            culture,
            items,
            charges,
            metadata,
            capture_method,
            state,
            current_attempt,
            created_at,
            updated_at,
            expires_at,
            money,
            attempts,
            disputes,
        }
    }

    /// The session as a store would hold it (for store adapters writing it).
    pub fn into_record(self) -> SessionRecord {
        let PaymentSession {
            id,
            terminal,
            reference,
            internal_reference,
            kind,
            amount,
            description,
            email,
            culture,
            items,
            charges,
            metadata,
            capture_method,
            state,
            current_attempt,
            created_at,
            updated_at,
            expires_at,
            money,
            attempts,
            disputes,
        } = self;
        SessionRecord {
            id,
            terminal,
            reference,
            internal_reference,
            kind,
            amount,
            description,
            email,
            culture,
            items,
            charges,
            metadata,
            capture_method,
            state,
            current_attempt,
            created_at,
            updated_at,
            expires_at,
            money,
            attempts,
            disputes,
        }
    }

    /// The session after `event` at `at`, as the repository's guarded write recorded it: the
    /// state [`SessionState::apply`] decides, or [`IllegalTransition`].
    pub fn moved(
        self,
        event: SessionEvent,
        at: OffsetDateTime,
    ) -> Result<PaymentSession, IllegalTransition> {
        let state = self.state.apply(event)?;
        Ok(PaymentSession {
            state,
            updated_at: at,
            ..self
        })
    }

    /// The session after the payer submitted a card for `attempt` at `at`
    /// ([`SessionEvent::CardSubmitted`]): Processing, waiting on that attempt.
    pub fn submitted(
        self,
        attempt: AttemptId,
        at: OffsetDateTime,
    ) -> Result<PaymentSession, IllegalTransition> {
        let moved = self.moved(SessionEvent::CardSubmitted, at)?;
        Ok(PaymentSession {
            current_attempt: Some(attempt),
            ..moved
        })
    }

    /// The session without its items and charges, as the reads that leave them out return it.
    pub fn without_lines(self) -> PaymentSession {
        PaymentSession {
            items: Vec::new(),
            charges: Vec::new(),
            ..self
        }
    }

    /// Appends a card attempt the store read (reads list them oldest first).
    pub fn attach_attempt(&mut self, attempt: CardAttempt) {
        self.attempts.push(attempt);
    }

    /// Appends a dispute the store read (reads list them oldest first).
    pub fn attach_dispute(&mut self, dispute: Dispute) {
        self.disputes.push(dispute);
    }

    /// The `checkoutSessionId`.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// The terminal the session belongs to.
    pub fn terminal(&self) -> &TerminalNumber {
        &self.terminal
    }

    /// The merchant's `transactionReferenceNumber`.
    pub fn reference(&self) -> &MerchantReference {
        &self.reference
    }

    /// The service's `internalTransactionReferenceNumber`.
    pub fn internal_reference(&self) -> &InternalReference {
        &self.internal_reference
    }

    /// Integrated checkout (with callbacks) or payment link.
    pub fn kind(&self) -> &SessionKind {
        &self.kind
    }

    /// `totalTransactionAmount` and `currencyCode`.
    pub fn amount(&self) -> Amount {
        self.amount
    }

    /// `generalPurchaseDescription`.
    pub fn description(&self) -> &Option<DisplayText> {
        &self.description
    }

    /// `userEmail`.
    pub fn email(&self) -> &Option<Email> {
        &self.email
    }

    /// `culture`.
    pub fn culture(&self) -> Option<Culture> {
        self.culture
    }

    /// `items`.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// `additionalCharges`.
    pub fn charges(&self) -> &[Charge] {
        &self.charges
    }

    /// `metadata`: the merchant's own pairs, returned as given.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// `captureMethod` when the create asked for one; the terminal's applies when `None`.
    pub fn capture_method(&self) -> Option<CaptureMethod> {
        self.capture_method
    }

    /// Where the session stands.
    pub fn state(&self) -> SessionState {
        self.state
    }

    /// The attempt the session is waiting on or was settled by: only an answer about this
    /// attempt may move the session (`None` before the first card submission).
    pub fn current_attempt(&self) -> Option<AttemptId> {
        self.current_attempt
    }

    /// When it was created (UTC).
    pub fn created_at(&self) -> OffsetDateTime {
        self.created_at
    }

    /// When its state last changed (UTC).
    pub fn updated_at(&self) -> OffsetDateTime {
        self.updated_at
    }

    /// After this instant it can no longer be paid (for links: `expirationDateTime`).
    pub fn expires_at(&self) -> OffsetDateTime {
        self.expires_at
    }

    /// What the merchant captured and refunded after the payment.
    pub fn money(&self) -> SessionMoney {
        self.money
    }

    /// The card attempts, oldest first, as the store last read them (the status record
    /// lists them); empty before the first card.
    pub fn attempts(&self) -> &[CardAttempt] {
        &self.attempts
    }

    /// The disputes the processor reported, oldest first, as the store last read them (the
    /// status record lists them); only a captured session has any.
    pub fn disputes(&self) -> &[Dispute] {
        &self.disputes
    }

    /// The amount captured: the merchant's capture, else the whole amount once Successful;
    /// zero while nothing is captured.
    pub fn captured_amount(&self) -> MovedAmount {
        match self.state {
            SessionState::Successful => self.money.captured.unwrap_or(self.amount).into(),
            _ => MovedAmount::zero(self.amount.currency()),
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
