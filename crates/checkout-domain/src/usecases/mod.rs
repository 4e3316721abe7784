//! The use cases, one module each, as methods of [`Checkout`] over the ports.

mod authenticate;
mod cancel_payment;
mod complete_challenge;
mod create_session;
mod expire_links;
mod get_status;
mod open_page;
mod process_payment;
mod reconcile;

pub use create_session::PaymentLink;
pub use open_page::HostedPage;
pub use process_payment::{PaymentOutcome, PaymentResult};
pub use reconcile::ReconcileReport;

use std::sync::Arc;

use time::{Duration, OffsetDateTime};
use url::Url;

use crate::error::{CheckoutError, SvcCode};
use crate::ports::{
    CardProcessor, Clock, IdGenerator, IdentityProvider, SessionRepository, TerminalDirectory,
};
use crate::session::{IllegalTransition, PaymentSession, SessionEvent, SessionState};
use crate::values::{CallbackRule, SessionId};

/// The adapters the use cases run over.
#[derive(Clone)]
pub struct Ports {
    /// Session storage.
    pub sessions: Arc<dyn SessionRepository>,
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
        Ok(CheckoutPolicy {
            link_validity,
            checkout_validity,
            payment_link_base,
            callback_rule: CallbackRule::HttpsOnly,
        })
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
}

impl Checkout {
    /// Wires the use cases to their adapters.
    pub fn new(ports: Ports, policy: CheckoutPolicy) -> Self {
        Checkout { ports, policy }
    }

    /// The business settings.
    pub fn policy(&self) -> &CheckoutPolicy {
        &self.policy
    }

    /// The current time, from the clock port.
    pub fn now(&self) -> OffsetDateTime {
        self.ports.clock.now()
    }

    /// Loads a session by the id as the caller wrote it; `None` for a malformed or unknown id.
    async fn find(&self, id: &str) -> Result<Option<PaymentSession>, CheckoutError> {
        let Ok(id) = id.parse::<SessionId>() else {
            return Ok(None);
        };
        Ok(self.ports.sessions.get(id).await?)
    }

    /// Writes a passed expiry: a Pending session past its expiry becomes Expired. Returns the
    /// session as it now stands.
    async fn settle_expiry(
        &self,
        mut session: PaymentSession,
    ) -> Result<PaymentSession, CheckoutError> {
        let now = self.now();
        if session.state == SessionState::Pending && session.is_past_expiry(now) {
            let to = session.state.apply(SessionEvent::ExpiryPassed)?;
            if self
                .ports
                .sessions
                .transition(session.id, session.state, to, now)
                .await?
            {
                session.state = to;
                session.updated_at = now;
            } else {
                return self.reload(session.id).await;
            }
        }
        Ok(session)
    }

    /// Reads a session again after a lost compare-and-set.
    async fn reload(&self, id: SessionId) -> Result<PaymentSession, CheckoutError> {
        self.ports
            .sessions
            .get(id)
            .await?
            .ok_or_else(|| CheckoutError::svc(SvcCode::Svc002))
    }
}

impl From<IllegalTransition> for CheckoutError {
    fn from(e: IllegalTransition) -> Self {
        CheckoutError::Unknown(anyhow::Error::new(e))
    }
}
