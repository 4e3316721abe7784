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
use super::render::{self, ErrorView, Frame, PurchaseView, ResultView};
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

/// The browser's `Accept-Language` header, for [`Lang::choose`].
pub fn accept_language(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(actix_web::http::header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
}

/// What an error page may say about the session a form or path named: the session and its
/// merchant when the id is one (read with no change), else `None`.
pub async fn context_of(checkout: &Checkout, raw_id: &str) -> Option<HostedPage> {
    let id = raw_id.parse::<SessionId>().ok()?;
    checkout.page_context(id).await.ok().flatten()
}

/// The page refusing a form whose CSRF token does not match ("form expired"): what happened,
/// and a way back to the session's page when the session is known. Shown in the body of the
/// refused post, which echoes nothing of the form.
pub fn csrf_refused(pages: &Pages, lang: Lang, context: Option<&HostedPage>) -> HttpResponse {
    tracing::warn!("page form refused: CSRF token missing or wrong");
    let t = lang.texts();
    let base = context.map(|c| render::session_path(&c.session));
    let mut view = ErrorView::new(lang, base.as_deref().unwrap_or(""), "CSRF", t.form_expired);
    view.next_step = Some(t.form_expired_next);
    if let Some(context) = context {
        view.merchant = Some(context.merchant_name.clone());
        view.reopen_url = base.map(|b| format!("{b}?lg={}", lang.code()));
    }
    render::html(
        &pages.tera,
        StatusCode::FORBIDDEN,
        "error.html",
        &view,
        &pages.csp_for(context.map(|c| &c.session)),
    )
}

/// The error page for a use-case error on a page whose language switch leads to `base`.
pub fn error_page(pages: &Pages, lang: Lang, error: &CheckoutError) -> HttpResponse {
    error_page_about(pages, lang, error, "", None)
}

/// The error page for a use-case error, saying what the payer can do next; `context` (the
/// session the page was about, when known) names the merchant and, for an integrated
/// checkout, offers the merchant's back (else fail) URL.
pub fn error_page_about(
    pages: &Pages,
    lang: Lang,
    error: &CheckoutError,
    base: &str,
    context: Option<&HostedPage>,
) -> HttpResponse {
    let t = lang.texts();
    let (status, mut view) = match error {
        CheckoutError::Service {
            code: SvcCode::Svc002,
            ..
        } => {
            let mut view =
                ErrorView::new(lang, base, SvcCode::Svc002.spec().code, t.session_missing);
            view.next_step = Some(t.unknown_next);
            if context.is_some() {
                view.message = t.expired_message;
                view.next_step = Some(t.expired_next);
            }
            (StatusCode::NOT_FOUND, view)
        }
        CheckoutError::Service {
            code: SvcCode::Svc005,
            ..
        } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorView::new(lang, base, SvcCode::Svc005.spec().code, t.terminal_inactive),
        ),
        CheckoutError::Service { code, .. } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorView::new(lang, base, code.spec().code, t.unexpected),
        ),
        other if crate::problem::is_temporarily_unavailable(other) => {
            let view = ErrorView::new(lang, base, "ERROR", t.unexpected);
            tracing::warn!(instance = %view.instance, error = %other, "page error: dependency unavailable");
            (StatusCode::SERVICE_UNAVAILABLE, view)
        }
        other => {
            let view = ErrorView::new(lang, base, "ERROR", t.unexpected);
            tracing::error!(instance = %view.instance, error = %other, "page error");
            (StatusCode::INTERNAL_SERVER_ERROR, view)
        }
    };
    if let Some(context) = context {
        view.merchant = Some(context.merchant_name.clone());
        view.return_url = context.session.return_url().map(|u| u.to_string());
    }
    render::html(
        &pages.tera,
        status,
        "error.html",
        &view,
        &pages.csp_for(context.map(|c| &c.session)),
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

/// Shows where `session` stands (the GET pages): a redirect to the merchant for a settled
/// integrated checkout, else a result page saying what happened and what to do.
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
    let (message, next_step, success) = match session.state {
        SessionState::Successful | SessionState::ApprovedTransaction => {
            (t.result_approved, Some(t.approved_next), true)
        }
        SessionState::Failed => (t.result_declined, Some(t.declined_next), false),
        SessionState::Cancelled | SessionState::Voided => {
            (t.result_cancelled, Some(t.cancelled_next), false)
        }
        SessionState::ChallengeRequired => (t.result_challenge, None, false),
        SessionState::Expired => (t.expired_message, Some(t.expired_next), false),
        SessionState::Processing | SessionState::Pending => {
            (t.result_processing, Some(t.processing_next), false)
        }
    };
    let challenge_link = (session.state == SessionState::ChallengeRequired)
        .then(|| own_challenge(pages, session, lang))
        .flatten();
    let view = ResultView {
        frame: Frame::new(lang, ""),
        purchase: PurchaseView::of(session, merchant, lang),
        state: session.state.name(),
        message,
        next_step,
        challenge_link,
        success,
        refresh: matches!(
            session.state,
            SessionState::Processing | SessionState::Pending
        ),
        self_href: format!("?lg={}", lang.code()),
    };
    render::html(
        &pages.tera,
        StatusCode::OK,
        "result.html",
        &view,
        &pages.csp_for(Some(session)),
    )
}

/// After a post: a 303 to where `session` now stands, so that a reload never posts again:
/// the merchant's URL for a settled integrated checkout, else the session's own page (which
/// shows the result), in `lang`.
pub fn go_to_state(pages: &Pages, lang: Lang, session: &PaymentSession) -> HttpResponse {
    match session.redirect_url() {
        Some(url) => see_other(pages, Some(session), url.as_str()),
        None => see_other(
            pages,
            Some(session),
            &format!("{}?lg={}", render::session_path(session), lang.code()),
        ),
    }
}

/// The answer to a finished payment step (anything but a retry, which re-shows the form): a
/// 303 to the challenge, the merchant or the session's page.
pub fn after_step(
    pages: &Pages,
    lang: Lang,
    session: &PaymentSession,
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
            None => go_to_state(pages, lang, session),
        },
        // The terminal allows another card: the form again, saying the card was declined.
        PaymentResult::Declined { .. } if session.state == SessionState::Pending => see_other(
            pages,
            Some(session),
            &format!(
                "{}?lg={}&declined=1",
                render::session_path(session),
                lang.code()
            ),
        ),
        _ => go_to_state(pages, lang, session),
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
