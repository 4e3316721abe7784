//! POST /pay/cancel-payment: the payer leaves an integrated checkout; the browser goes to
//! `callbackBackUrl` (or `callbackFailUrl` when none was given).

use actix_web::{web, HttpRequest, HttpResponse};

use super::form::{self, ActionForm};
use super::i18n::Lang;
use super::outcome::{csrf_ok, csrf_refused, error_page, open_any, show_state};
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
    let lang = Lang::choose(form.lg.as_deref(), None);
    if !csrf_ok(pages, &req, &id, form.csrf_token.as_deref()) {
        return csrf_refused(pages, lang);
    }
    let outcome = match state.checkout.cancel_payment(&id).await {
        Ok(outcome) => outcome,
        Err(e) => return error_page(pages, lang, &e),
    };
    let lang = Lang::choose(form.lg.as_deref(), outcome.session.culture);
    let merchant = match open_any(&state.checkout, &id).await {
        Ok(page) => page.merchant_name,
        Err(_) => outcome.session.terminal.to_string(),
    };
    show_state(pages, lang, &outcome.session, &merchant)
}
