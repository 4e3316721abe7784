//! Use case: the payer opens the hosted checkout page or a payment link.

use super::Checkout;
use crate::error::CheckoutError;
use crate::session::{PaymentSession, SessionFlow, SessionState};
use crate::values::SessionId;

/// What a hosted page shows.
#[derive(Debug, Clone)]
pub struct HostedPage {
    /// The session, as it stands now.
    pub session: PaymentSession,
    /// The merchant name to show.
    pub merchant_name: String,
    /// How its payment is captured: the session's own method when its create asked for
    /// one, else its terminal's.
    pub capture_method: crate::terminal::CaptureMethod,
}

impl HostedPage {
    /// The page of `session`, with the name and capture method of its `terminal` (the
    /// terminal number and automatic capture when it was never provisioned); the session's
    /// own capture method, when it has one, comes first.
    pub fn of(session: PaymentSession, terminal: Option<crate::terminal::Terminal>) -> Self {
        let (merchant_name, terminal_method) = match terminal {
            Some(t) => (t.display_name, t.capture_method),
            None => (session.terminal().to_string(), Default::default()),
        };
        let capture_method = session.capture_method().unwrap_or(terminal_method);
        HostedPage {
            session,
            merchant_name,
            capture_method,
        }
    }

    /// True when the card form should be shown.
    pub fn is_payable(&self) -> bool {
        self.session.state() == SessionState::Pending
    }
}

impl Checkout {
    /// GET /pay/checkout-payment/{id} and GET /pay/link/{id}: the session behind the page.
    /// An unknown id, a session of the other flow, or an expired session is SVC_002; a session
    /// that could still be paid on a deactivated terminal is SVC_005.
    pub async fn open_page(
        &self,
        id: SessionId,
        flow: SessionFlow,
    ) -> Result<HostedPage, CheckoutError> {
        self.open_payable(id, Some(flow)).await
    }

    /// The page of session `id` whichever its flow (the result and challenge pages).
    pub async fn open_any_page(&self, id: SessionId) -> Result<HostedPage, CheckoutError> {
        self.open_payable(id, None).await
    }

    /// What an error page may say about session `id` when it cannot be paid (expired, or a
    /// form that expired): the session as stored and its merchant's name, with no checks and
    /// no change; `None` for an unknown id.
    pub async fn page_context(&self, id: SessionId) -> Result<Option<HostedPage>, CheckoutError> {
        let Some(session) = self.ports.sessions.get(id).await? else {
            return Ok(None);
        };
        let terminal = self
            .ports
            .terminals
            .get_terminal(session.terminal())
            .await?;
        Ok(Some(HostedPage::of(session, terminal)))
    }
}
