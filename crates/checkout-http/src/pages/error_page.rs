//! The error pages: a use-case error (its status from the SVC table, its text from the
//! catalogue), and the refusal of a form whose CSRF token does not match.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use checkout_domain::usecases::HostedPage;
use checkout_domain::{CheckoutError, SvcCode};

use super::i18n::Lang;
use super::render::{self, ErrorView};
use super::Pages;

/// The page refusing a cancel or challenge form whose CSRF token does not match (the card
/// form's refusal is a 303 to the form asking to retype): its heading asks to try again,
/// and a way back to the session's page when the session is known. Shown in the body of the
/// refused post, which echoes nothing of the form.
pub fn csrf_refused(pages: &Pages, lang: Lang, context: Option<&HostedPage>) -> HttpResponse {
    tracing::warn!("page form refused: CSRF token missing or wrong");
    let t = lang.texts();
    let base = context.map(|c| render::session_path(&c.session));
    let mut view = ErrorView::new(lang, base.as_deref().unwrap_or(""), "CSRF", t.form_expired);
    view.title = t.form_expired_title;
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

/// The status of an error page about an SVC code: the SVC table's, as for the API (an unknown
/// or expired session, SVC_002, is 422 there and here).
fn svc_status(code: SvcCode) -> StatusCode {
    StatusCode::from_u16(code.spec().http_status).unwrap_or(StatusCode::UNPROCESSABLE_ENTITY)
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
        CheckoutError::Service { code, .. } => {
            let spec = code.spec();
            let mut view = ErrorView::new(lang, base, spec.code, t.unexpected);
            match code {
                SvcCode::Svc002 if context.is_some() => {
                    view.message = t.expired_message;
                    view.next_step = Some(t.expired_next);
                }
                SvcCode::Svc002 => {
                    view.message = t.session_missing;
                    view.next_step = Some(t.unknown_next);
                }
                SvcCode::Svc005 => view.message = t.terminal_inactive,
                _ => {}
            }
            (svc_status(*code), view)
        }
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
