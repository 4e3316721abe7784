//! The 3DS challenge: the sandbox's own challenge page and its answer, and the return from a
//! challenge the processor hosted.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::session::SessionState;
use checkout_domain::usecases::{HostedPage, PaymentOutcome};
use checkout_domain::{CheckoutError, SvcCode};

use super::browser::{accept_language, browser_nonce, csrf_ok, with_cookie};
use super::error_page::{csrf_refused, error_page};
use super::form::{self, ActionForm, LangQuery};
use super::i18n::Lang;
use super::load::{context_of, open_any, session_id};
use super::navigate::{after_step, show_state};
use super::render::{self, ChallengeView, Frame, PurchaseView};
use crate::AppState;

/// GET /pay/challenge/{id}: the sandbox challenge page (only with the sandbox processor).
pub async fn challenge_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LangQuery>,
) -> HttpResponse {
    let pages = &state.pages;
    let accept = accept_language(&req);
    let lang = Lang::choose(query.lg.as_deref(), None, accept);
    if !pages.own_challenge_page {
        return not_here(&state, lang);
    }
    let page = match session_id(&path) {
        Ok(id) => open_any(&state.checkout, id).await,
        Err(e) => Err(e),
    };
    let page = match page {
        Ok(page) => page,
        Err(e) => return error_page(pages, lang, &e),
    };
    let lang = Lang::choose(query.lg.as_deref(), page.session.culture(), accept);
    if page.session.state() != SessionState::ChallengeRequired {
        return show_state(pages, lang, &page.session, &page.merchant_name);
    }
    let (nonce, cookie) = browser_nonce(pages, &req);
    let id = page.session.id().to_string();
    let view = ChallengeView {
        frame: Frame::new(lang, ""),
        purchase: PurchaseView::of(&page.session, &page.merchant_name, lang),
        csrf: pages.csrf.token(&nonce, &id),
        session_id: id,
    };
    let response = render::html(
        &pages.tera,
        StatusCode::OK,
        "challenge.html",
        &view,
        &pages.csp_for(Some(&page.session)),
    );
    with_cookie(response, cookie)
}

/// POST /pay/challenge/{id}: the payer's answer on the sandbox challenge page.
pub async fn answer_challenge(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let pages = &state.pages;
    let form: ActionForm = form::parse(&body);
    let accept = accept_language(&req);
    let lang = Lang::choose(form.lg.as_deref(), None, accept);
    if !pages.own_challenge_page {
        return not_here(&state, lang);
    }
    if !csrf_ok(pages, &req, &path, form.csrf_token.as_deref()) {
        let context = context_of(&state.checkout, &path).await;
        return csrf_refused(pages, lang, context.as_ref());
    }
    let passed = form.outcome.as_deref() == Some("pass");
    let answered = match session_id(&path) {
        Ok(id) => state.checkout.answer_challenge(id, passed).await,
        Err(e) => Err(e),
    };
    show_answer(&state, answered, form.lg.as_deref(), accept)
}

/// GET /pay/return/{id}: the payer is back from the processor's challenge page. It only
/// records what the processor says it holds, so an anonymous request moves nothing the
/// processor has not moved.
pub async fn processor_return(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LangQuery>,
) -> HttpResponse {
    let returned = match session_id(&path) {
        Ok(id) => state.checkout.challenge_returned(id).await,
        Err(e) => Err(e),
    };
    show_answer(&state, returned, query.lg.as_deref(), accept_language(&req))
}

/// What the browser sees after a challenge step.
fn show_answer(
    state: &AppState,
    answered: Result<(HostedPage, PaymentOutcome), CheckoutError>,
    lg: Option<&str>,
    accept: Option<&str>,
) -> HttpResponse {
    let pages = &state.pages;
    let (_, outcome) = match answered {
        Ok(answered) => answered,
        Err(e) => return error_page(pages, Lang::choose(lg, None, accept), &e),
    };
    let lang = Lang::choose(lg, outcome.session.culture(), accept);
    after_step(pages, lang, &outcome.session, &outcome.result)
}

fn not_here(state: &AppState, lang: Lang) -> HttpResponse {
    error_page(&state.pages, lang, &CheckoutError::svc(SvcCode::Svc002))
}
