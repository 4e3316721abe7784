//! Use case: the payer opens the hosted checkout page or a payment link.

use super::Checkout;
use crate::error::{CheckoutError, SvcCode};
use crate::session::{PaymentAttempt, PaymentSession, SessionFlow, SessionKind, SessionState};

/// What a hosted page shows.
#[derive(Debug, Clone)]
pub struct HostedPage {
    /// The session, as it stands now.
    pub session: PaymentSession,
    /// The merchant name to show.
    pub merchant_name: String,
    /// The latest attempt (for a pending challenge, or a result to show).
    pub latest_attempt: Option<PaymentAttempt>,
}

impl HostedPage {
    /// True when the card form should be shown.
    pub fn is_payable(&self) -> bool {
        self.session.state == SessionState::Pending
    }
}

impl Checkout {
    /// GET /pay/checkout-payment/{id} and GET /pay/link/{id}: the session behind the page.
    /// An unknown id, a session of the other flow, or an expired session is SVC_002.
    pub async fn open_page(
        &self,
        id: &str,
        flow: SessionFlow,
    ) -> Result<HostedPage, CheckoutError> {
        let Some(session) = self.find(id).await? else {
            return Err(CheckoutError::svc(SvcCode::Svc002));
        };
        let flow_matches = matches!(
            (&session.kind, flow),
            (
                SessionKind::IntegratedCheckout(_),
                SessionFlow::IntegratedCheckout
            ) | (SessionKind::PaymentLink, SessionFlow::PaymentLink)
        );
        if !flow_matches {
            return Err(CheckoutError::svc(SvcCode::Svc002));
        }
        let session = self.settle_expiry(session).await?;
        if session.state == SessionState::Expired {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc002,
                "The payment session has expired.",
            ));
        }
        let merchant_name = self
            .ports
            .terminals
            .get_terminal(&session.terminal)
            .await?
            .map(|t| t.display_name)
            .unwrap_or_else(|| session.terminal.to_string());
        let latest_attempt = self.ports.sessions.latest_attempt(session.id).await?;
        Ok(HostedPage {
            session,
            merchant_name,
            latest_attempt,
        })
    }
}
