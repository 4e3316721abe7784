//! What the browser sees after a payment step: a redirect to the merchant (integrated
//! checkout), a result page (payment link, or a session no longer payable), the challenge, or
//! an error page.

use actix_web::cookie::Cookie;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use checkout_domain::session::{PaymentSession, SessionState};
use checkout_domain::usecases::{HostedPage, PaymentResult};
use checkout_domain::values::SessionId;
use checkout_domain::{Checkout, CheckoutError, SvcCode};

use super::csrf;
use super::i18n::Lang;
use super::render::{self, ErrorView, PurchaseView, ResultView};
use super::Pages;

/// The session id of a page's path or form, parsed at the edge: a malformed id is an unknown
/// session (SVC_002).
pub fn session_id(raw: &str) -> Result<SessionId, CheckoutError> {
    raw.parse().map_err(|_| CheckoutError::svc(SvcCode::Svc002))
}

/// The hosted page of `id`, whichever kind of session it is.
pub async fn open_any(checkout: &Checkout, id: SessionId) -> Result<HostedPage, CheckoutError> {
    checkout.open_any_page(id).await
}

/// The browser's CSRF secret, and the cookie to set when it had none.
pub fn browser_secret(pages: &Pages, req: &HttpRequest) -> (String, Option<Cookie<'static>>) {
    match csrf::browser_secret(req) {
        Some(secret) => (secret, None),
        None => {
            let secret = csrf::new_browser_secret().unwrap_or_default();
            let cookie = csrf::cookie(&secret, pages.cookies_secure());
            (secret, Some(cookie))
        }
    }
}

/// Whether the request's CSRF token matches its cookie for `session_id`.
pub fn csrf_ok(pages: &Pages, req: &HttpRequest, session_id: &str, token: Option<&str>) -> bool {
    match (csrf::browser_secret(req), token) {
        (Some(secret), Some(token)) => pages.csrf.verify(&secret, session_id, token),
        _ => false,
    }
}

/// The page refusing a form whose CSRF token does not match.
pub fn csrf_refused(pages: &Pages, lang: Lang) -> HttpResponse {
    tracing::warn!("page form refused: CSRF token missing or wrong");
    render::html(
        &pages.tera,
        StatusCode::FORBIDDEN,
        "error.html",
        &ErrorView::new(lang, "CSRF", lang.texts().form_expired),
        &pages.csp_for(None),
    )
}

/// The error page for a use-case error.
pub fn error_page(pages: &Pages, lang: Lang, error: &CheckoutError) -> HttpResponse {
    let t = lang.texts();
    let (status, view) = match error {
        CheckoutError::Service {
            code: SvcCode::Svc002,
            ..
        } => (
            StatusCode::NOT_FOUND,
            ErrorView::new(lang, SvcCode::Svc002.spec().code, t.session_missing),
        ),
        CheckoutError::Service {
            code: SvcCode::Svc005,
            ..
        } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorView::new(lang, SvcCode::Svc005.spec().code, t.terminal_inactive),
        ),
        CheckoutError::Service { code, .. } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorView::new(lang, code.spec().code, t.unexpected),
        ),
        other if crate::problem::is_temporarily_unavailable(other) => {
            let view = ErrorView::new(lang, "ERROR", t.unexpected);
            tracing::warn!(instance = %view.instance, error = %other, "page error: dependency unavailable");
            (StatusCode::SERVICE_UNAVAILABLE, view)
        }
        other => {
            let view = ErrorView::new(lang, "ERROR", t.unexpected);
            tracing::error!(instance = %view.instance, error = %other, "page error");
            (StatusCode::INTERNAL_SERVER_ERROR, view)
        }
    };
    render::html(
        &pages.tera,
        status,
        "error.html",
        &view,
        &pages.csp_for(None),
    )
}

/// A 303 to `location` with the page headers.
pub fn see_other(pages: &Pages, session: Option<&PaymentSession>, location: &str) -> HttpResponse {
    let mut builder = HttpResponse::SeeOther();
    render::secure_headers(&mut builder, &pages.csp_for(session));
    builder.insert_header(("Location", location)).finish()
}

/// The challenge address for `session`: the processor's, else our own sandbox page.
fn own_challenge(pages: &Pages, session: &PaymentSession, lang: Lang) -> Option<String> {
    pages
        .own_challenge_page
        .then(|| format!("/pay/challenge/{}?lg={}", session.id, lang.code()))
}

/// Shows where `session` stands: a redirect to the merchant for a settled integrated
/// checkout, else a result page.
pub fn show_state(
    pages: &Pages,
    lang: Lang,
    session: &PaymentSession,
    merchant: &str,
) -> HttpResponse {
    if let Some(url) = session.redirect_url() {
        return see_other(pages, Some(session), url.as_str());
    }
    let t = lang.texts();
    let (message, success) = match session.state {
        SessionState::Successful | SessionState::ApprovedTransaction => (t.result_approved, true),
        SessionState::Failed => (t.result_declined, false),
        SessionState::Cancelled | SessionState::Voided => (t.result_cancelled, false),
        SessionState::ChallengeRequired => (t.result_challenge, false),
        SessionState::Expired => (t.session_missing, false),
        SessionState::Processing | SessionState::Pending => (t.result_processing, false),
    };
    let challenge_link = (session.state == SessionState::ChallengeRequired)
        .then(|| own_challenge(pages, session, lang))
        .flatten();
    let view = ResultView {
        t,
        lang: lang.code(),
        purchase: PurchaseView::of(session, merchant),
        state: session.state.name(),
        message,
        challenge_link,
        success,
    };
    render::html(
        &pages.tera,
        StatusCode::OK,
        "result.html",
        &view,
        &pages.csp_for(Some(session)),
    )
}

/// The answer to a finished payment step (anything but a retry, which re-shows the form).
pub fn after_step(
    pages: &Pages,
    lang: Lang,
    session: &PaymentSession,
    merchant: &str,
    result: &PaymentResult,
) -> HttpResponse {
    match result {
        PaymentResult::ChallengeRequired {
            challenge_url: Some(url),
        } => see_other(pages, Some(session), url),
        PaymentResult::ChallengeRequired {
            challenge_url: None,
        } => match own_challenge(pages, session, lang) {
            Some(url) => see_other(pages, Some(session), &url),
            None => show_state(pages, lang, session, merchant),
        },
        _ => show_state(pages, lang, session, merchant),
    }
}

/// Sets `cookie` on `response` when there is one.
pub fn with_cookie(mut response: HttpResponse, cookie: Option<Cookie<'static>>) -> HttpResponse {
    if let Some(cookie) = cookie {
        if let Err(e) = response.add_cookie(&cookie) {
            tracing::warn!(error = %e, "could not set the CSRF cookie");
        }
    }
    response
}
