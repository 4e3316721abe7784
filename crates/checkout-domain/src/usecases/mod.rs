//! The use cases, one module each, as methods of [`Checkout`] over the ports.

mod authenticate;
mod cancel_payment;
mod capture_payment;
mod card_guard_sweep;
mod complete_challenge;
mod create_session;
mod expire_sessions;
mod find_by_reference;
mod get_status;
mod hold_actions;
mod idempotent_create;
mod list_events;
mod open_page;
mod process_payment;
mod processor_notices;
mod receipts;
mod reconcile;
mod reconcile_reversals;
mod refund_payment;
mod sandbox_clock;
mod settle;
mod void_payment;
mod webhooks;

pub use card_guard_sweep::{GuardSweep, GUARD_ANSWERS_KEPT};
pub use create_session::PaymentLink;
pub use expire_sessions::ExpiryReport;
pub use find_by_reference::{
    parse_internal_reference, INTERNAL_REFERENCE_FIELD, MAX_SESSIONS_BY_REFERENCE,
};
pub use hold_actions::ActionDone;
pub use idempotent_create::{Finality, IdempotencyPolicy, IdempotentAnswer, IdempotentRequest};
pub use list_events::{EventPage, MAX_EVENTS_PER_PAGE};
pub use open_page::HostedPage;
pub use process_payment::{CardPost, GuardedPost, PaymentOutcome, PaymentResult};
pub use processor_notices::{NoticeOutcome, NOTICE_MEMORY};
pub use receipts::{ReceiptPolicy, Receipts};
pub use reconcile::{ReconcilePolicy, ReconcileReport};
pub use refund_payment::RefundDone;
pub use webhooks::{
    CreatedEndpoint, DeliveryRun, RotatedSecret, WebhookPolicy, WebhookPorts, Webhooks,
    MAX_DELIVERIES_LOGGED,
};

use std::sync::Arc;

use rust_decimal::Decimal;
use time::{Duration, OffsetDateTime};
use url::Url;

use crate::error::{CheckoutError, SvcCode, ValidationErrors};
use crate::guard::GuardPolicy;
use crate::ports::{
    AttemptLedger, CardGuard, CardProcessor, Clock, DisputeLedger, EventLog, GuardKeys,
    IdGenerator, IdempotencyStore, IdentityProvider, NoticeStore, ProcessorNotices, ReversalLedger,
    SessionRepository, Sweeps, TerminalDirectory,
};
use crate::session::{IllegalTransition, PaymentSession, SessionEvent, SessionState};
use crate::values::{Amount, AmountError, CallbackRule, SessionId};

/// The adapters the use cases run over.
#[derive(Clone)]
pub struct Ports {
    /// Session storage.
    pub sessions: Arc<dyn SessionRepository>,
    /// The card attempts of sessions.
    pub attempts: Arc<dyn AttemptLedger>,
    /// What the expiry and reconciliation sweeps ask of the store.
    pub sweeps: Arc<dyn Sweeps>,
    /// The ledger of captures, voids and refunds.
    pub reversals: Arc<dyn ReversalLedger>,
    /// The merchant event feed (written with every session change it reports).
    pub events: Arc<dyn EventLog>,
    /// Terminal registry.
    pub terminals: Arc<dyn TerminalDirectory>,
    /// Card processor.
    pub processor: Arc<dyn CardProcessor>,
    /// Identity provider.
    pub identity: Arc<dyn IdentityProvider>,
    /// Clock.
    pub clock: Arc<dyn Clock>,
    /// Id generator.
    pub ids: Arc<dyn IdGenerator>,
    /// Idempotency keys of the create routes.
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// The processor's events: verified and read by its adapter.
    pub processor_events: Arc<dyn ProcessorNotices>,
    /// What is kept of the processor's events, and the rows they name.
    pub notices: Arc<dyn NoticeStore>,
    /// The disputes the processor reports.
    pub disputes: Arc<dyn DisputeLedger>,
}

/// Business settings of the service.
#[derive(Debug, Clone)]
pub struct CheckoutPolicy {
    /// How long a payment link stays payable.
    pub link_validity: Duration,
    /// How long an integrated checkout session stays payable.
    pub checkout_validity: Duration,
    /// `BaseUrlPaymentLink`: the base of every `paymentLink`, ending in `/pay/link`.
    pub payment_link_base: Url,
    /// Which callback URLs are accepted (https only unless set otherwise).
    pub callback_rule: CallbackRule,
    /// The base of the address a processor-hosted challenge sends the payer back to:
    /// `<base>/<checkoutSessionId>`. The same for every send of one attempt, so that a replay
    /// is the same request.
    pub processor_return_base: Url,
    /// How unresolved attempts are reconciled.
    pub reconcile: ReconcilePolicy,
    /// How long idempotency keys replay, and how long a running request holds its key.
    pub idempotency: IdempotencyPolicy,
    /// The earliest and latest `expirationDateTime` a request may ask for, per kind.
    pub expiry_bounds: ExpiryBounds,
}

/// How far from now a requested `expirationDateTime` may be: `[min, max]` after the request,
/// for payment links and for integrated checkouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpiryBounds {
    /// Links: at least this far ahead.
    pub link_min: Duration,
    /// Links: at most this far ahead.
    pub link_max: Duration,
    /// Integrated checkouts: at least this far ahead.
    pub checkout_min: Duration,
    /// Integrated checkouts: at most this far ahead.
    pub checkout_max: Duration,
}

impl Default for ExpiryBounds {
    /// Links 5 minutes to 30 days; integrated checkouts 5 minutes to 24 hours (a payer is
    /// being redirected to the page: a day covers any browser session).
    fn default() -> Self {
        ExpiryBounds {
            link_min: Duration::minutes(5),
            link_max: Duration::days(30),
            checkout_min: Duration::minutes(5),
            checkout_max: Duration::hours(24),
        }
    }
}

/// Why a policy was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A validity that is not positive.
    #[error("validity periods must be positive")]
    NonPositiveValidity,
    /// A link base that does not end in `/pay/link`.
    #[error("BaseUrlPaymentLink must be an http(s) URL ending in /pay/link")]
    BadLinkBase,
}

impl CheckoutPolicy {
    /// Checks the settings.
    pub fn new(
        link_validity: Duration,
        checkout_validity: Duration,
        payment_link_base: Url,
    ) -> Result<Self, PolicyError> {
        if !link_validity.is_positive() || !checkout_validity.is_positive() {
            return Err(PolicyError::NonPositiveValidity);
        }
        let base_ok = matches!(payment_link_base.scheme(), "http" | "https")
            && payment_link_base
                .path()
                .trim_end_matches('/')
                .ends_with("/pay/link");
        if !base_ok {
            return Err(PolicyError::BadLinkBase);
        }
        let mut processor_return_base = payment_link_base.clone();
        let link_path = payment_link_base.path().trim_end_matches('/');
        let return_path = format!(
            "{}/pay/return",
            &link_path[..link_path.len() - "/pay/link".len()]
        );
        processor_return_base.set_path(&return_path);
        Ok(CheckoutPolicy {
            link_validity,
            checkout_validity,
            payment_link_base,
            callback_rule: CallbackRule::HttpsOnly,
            processor_return_base,
            reconcile: ReconcilePolicy::default(),
            idempotency: IdempotencyPolicy::default(),
            expiry_bounds: ExpiryBounds::default(),
        })
    }

    /// The same policy with another processor return base (`<public base>/pay/return`).
    pub fn with_processor_return_base(mut self, base: Url) -> Self {
        self.processor_return_base = base;
        self
    }

    /// The same policy with other reconciliation settings.
    pub fn with_reconcile(mut self, reconcile: ReconcilePolicy) -> Self {
        self.reconcile = reconcile;
        self
    }

    /// The same policy with other bounds for a requested `expirationDateTime`.
    pub fn with_expiry_bounds(mut self, bounds: ExpiryBounds) -> Self {
        self.expiry_bounds = bounds;
        self
    }

    /// The same policy with other idempotency settings.
    pub fn with_idempotency(mut self, idempotency: IdempotencyPolicy) -> Self {
        self.idempotency = idempotency;
        self
    }

    /// Where a processor-hosted challenge of session `id` sends the payer back.
    pub fn processor_return_url(&self, id: SessionId) -> String {
        format!(
            "{}/{}",
            self.processor_return_base.as_str().trim_end_matches('/'),
            id
        )
    }

    /// The same policy with another callback URL rule.
    pub fn with_callback_rule(mut self, rule: CallbackRule) -> Self {
        self.callback_rule = rule;
        self
    }

    /// The payment link of a session: the base, `/`, the id.
    pub fn payment_link(&self, id: SessionId) -> String {
        format!(
            "{}/{}",
            self.payment_link_base.as_str().trim_end_matches('/'),
            id
        )
    }
}

/// The hosted checkout service: every use case, over the ports.
#[derive(Clone)]
pub struct Checkout {
    ports: Ports,
    policy: CheckoutPolicy,
    guard: Option<CardGuardSetup>,
}

/// The card-testing guard's adapters and rules.
#[derive(Clone)]
pub struct CardGuardSetup {
    /// The shared counts.
    pub store: Arc<dyn CardGuard>,
    /// The keyed hashes of cards and addresses.
    pub keys: Arc<dyn GuardKeys>,
    /// Thresholds and windows.
    pub policy: GuardPolicy,
}

impl Checkout {
    /// Wires the use cases to their adapters.
    pub fn new(ports: Ports, policy: CheckoutPolicy) -> Self {
        Checkout {
            ports,
            policy,
            guard: None,
        }
    }

    /// Screens every card post of the pages with the card-testing guard `guard`.
    pub fn with_card_guard(mut self, guard: CardGuardSetup) -> Self {
        self.guard = Some(guard);
        self
    }

    /// The card-testing guard, when one is wired.
    pub fn card_guard(&self) -> Option<&CardGuardSetup> {
        self.guard.as_ref()
    }

    /// The operator's view of `terminal`'s guard state; `None` when no guard is wired.
    pub async fn terminal_guard_state(
        &self,
        terminal: &crate::values::TerminalNumber,
    ) -> anyhow::Result<Option<crate::guard::TerminalGuardState>> {
        let Some(guard) = &self.guard else {
            return Ok(None);
        };
        let state = guard
            .store
            .terminal_state(terminal, &guard.policy.windows, self.now())
            .await?;
        Ok(Some(state))
    }

    /// The operator's clear of `terminal`: forgets its recorded answers and lowers its flag.
    /// Returns how many answers were forgotten (0 when no guard is wired).
    pub async fn clear_terminal_guard(
        &self,
        terminal: &crate::values::TerminalNumber,
    ) -> anyhow::Result<u64> {
        match &self.guard {
            Some(guard) => guard.store.clear_terminal(terminal).await,
            None => Ok(0),
        }
    }

    /// The business settings.
    pub fn policy(&self) -> &CheckoutPolicy {
        &self.policy
    }

    /// The current time, from the clock port.
    pub fn now(&self) -> OffsetDateTime {
        self.ports.clock.now()
    }

    /// Loads a session; SVC_002 when there is none.
    async fn load(&self, id: SessionId) -> Result<PaymentSession, CheckoutError> {
        self.ports
            .sessions
            .get(id)
            .await?
            .ok_or_else(|| CheckoutError::svc(SvcCode::Svc002))
    }

    /// Writes a passed expiry: a Pending session past its expiry becomes Expired; a session
    /// waiting for a challenge past its expiry has its authorisation cancelled at the
    /// processor first, and becomes Expired only when the processor confirms the cancel (if
    /// the processor says the payment already went through, that is recorded instead).
    /// Returns the session as it now stands.
    async fn settle_expiry(
        &self,
        session: PaymentSession,
    ) -> Result<PaymentSession, CheckoutError> {
        let now = self.now();
        if !session.is_past_expiry(now) {
            return Ok(session);
        }
        match session.state() {
            SessionState::Pending => {
                let to = session.state().apply(SessionEvent::ExpiryPassed)?;
                if self
                    .ports
                    .sessions
                    .transition(session.id(), session.state(), to, now)
                    .await?
                {
                    Ok(session.moved(SessionEvent::ExpiryPassed, now)?)
                } else {
                    self.reload(session.id()).await
                }
            }
            SessionState::ChallengeRequired => Ok(self
                .end_challenge(session, SessionEvent::ExpiryPassed)
                .await?
                .session),
            _ => Ok(session),
        }
    }

    /// `value` as an amount of `session`'s currency; a 400 naming `Amount` when it is not
    /// greater than 0, has more decimals than the currency or is too large.
    fn amount_of(&self, session: &PaymentSession, value: Decimal) -> Result<Amount, CheckoutError> {
        let currency = session.amount().currency();
        Amount::new(value, currency).map_err(|e| {
            let message = match e {
                AmountError::NotPositive | AmountError::Negative => {
                    "Amount must be greater than 0.".to_owned()
                }
                AmountError::TooPrecise(n) => {
                    format!("Amount must have at most {n} decimal places for {currency}.")
                }
                AmountError::TooLarge => "Amount is too large.".to_owned(),
            };
            let mut errors = ValidationErrors::new();
            errors.add("Amount", message);
            CheckoutError::Validation(errors)
        })
    }

    /// Reads a session again after a lost compare-and-set.
    async fn reload(&self, id: SessionId) -> Result<PaymentSession, CheckoutError> {
        self.load(id).await
    }
}

impl From<crate::session::IllegalAttemptMove> for CheckoutError {
    fn from(e: crate::session::IllegalAttemptMove) -> Self {
        CheckoutError::Unknown(anyhow::Error::new(e))
    }
}

impl From<IllegalTransition> for CheckoutError {
    fn from(e: IllegalTransition) -> Self {
        CheckoutError::Unknown(anyhow::Error::new(e))
    }
}
