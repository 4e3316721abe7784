//! POST /pay/cancel-payment: the payer leaves an integrated checkout; the browser goes to
//! `callbackBackUrl` (or `callbackFailUrl` when none was given).

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::usecases::PaymentResult;
use checkout_domain::SvcCode;

use super::browser::{accept_language, csrf_ok};
use super::error_page::{csrf_refused, error_page};
use super::form::{self, ActionForm};
use super::i18n::Lang;
use super::load::{context_of, session_id};
use super::navigate::go_to_state;
use super::render::{self, ErrorView};
use crate::AppState;

/// Handles the cancel button.
pub async fn cancel_payment(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let pages = &state.pages;
    let form: ActionForm = form::parse(&body);
    let id = form.checkout_session_id.clone().unwrap_or_default();
    let accept = accept_language(&req);
    let lang = Lang::choose(form.lg.as_deref(), None, accept);
    if !csrf_ok(pages, &req, &id, form.csrf_token.as_deref()) {
        let context = context_of(&state.checkout, &id).await;
        return csrf_refused(pages, lang, context.as_ref());
    }
    let cancelled = match session_id(&id) {
        Ok(id) => state.checkout.cancel_payment(id).await.map(|o| (id, o)),
        Err(e) => Err(e),
    };
    let (_, outcome) = match cancelled {
        Ok(cancelled) => cancelled,
        Err(e) => return error_page(pages, lang, &e),
    };
    let lang = Lang::choose(form.lg.as_deref(), outcome.session.culture(), accept);
    if outcome.result == PaymentResult::Unresolved {
        // The processor could not confirm the cancel of a pending challenge: nothing changed.
        let t = lang.texts();
        return render::html(
            &pages.tera,
            StatusCode::SERVICE_UNAVAILABLE,
            "error.html",
            &ErrorView::new(
                lang,
                &render::session_path(&outcome.session),
                SvcCode::Svc003.spec().code,
                t.cancel_unconfirmed,
            ),
            &pages.csp_for(Some(&outcome.session)),
        );
    }
    go_to_state(pages, lang, &outcome.session)
}
