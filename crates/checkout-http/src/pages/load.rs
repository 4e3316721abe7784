//! Reading the session a page's path or form names: the id parsed at the edge, the hosted
//! page, and what an error page may say about it.

use checkout_domain::usecases::HostedPage;
use checkout_domain::values::SessionId;
use checkout_domain::{Checkout, CheckoutError, SvcCode};

/// The session id of a page's path or form, parsed at the edge: a malformed id is an unknown
/// session (SVC_002).
pub fn session_id(raw: &str) -> Result<SessionId, CheckoutError> {
    raw.parse().map_err(|_| CheckoutError::svc(SvcCode::Svc002))
}

/// The hosted page of `id`, whichever kind of session it is.
pub async fn open_any(checkout: &Checkout, id: SessionId) -> Result<HostedPage, CheckoutError> {
    checkout.open_any_page(id).await
}

/// What an error page may say about the session a form or path named: the session and its
/// merchant when the id is one (read with no change), else `None`.
pub async fn context_of(checkout: &Checkout, raw_id: &str) -> Option<HostedPage> {
    let id = raw_id.parse::<SessionId>().ok()?;
    checkout.page_context(id).await.ok().flatten()
}
