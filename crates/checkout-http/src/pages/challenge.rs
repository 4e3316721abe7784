//! The 3DS challenge: the sandbox's own challenge page and its answer, and the return from a
//! challenge the processor hosted.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::ports::ChallengeAnswer;
use checkout_domain::session::SessionState;

use super::form::{self, ActionForm, LangQuery};
use super::i18n::Lang;
use super::outcome::{
    after_step, browser_secret, csrf_ok, csrf_refused, error_page, open_any, show_state,
    with_cookie,
};
use super::render::{self, ChallengeView, ErrorView, PurchaseView};
use crate::AppState;

/// GET /pay/challenge/{id}: the sandbox challenge page (only with the sandbox processor).
pub async fn challenge_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LangQuery>,
) -> HttpResponse {
    let pages = &state.pages;
    let lang = Lang::choose(query.lg.as_deref(), None);
    if !pages.own_challenge_page {
        return not_here(&state, lang);
    }
    let page = match open_any(&state.checkout, &path).await {
        Ok(page) => page,
        Err(e) => return error_page(pages, lang, &e),
    };
    let lang = Lang::choose(query.lg.as_deref(), page.session.culture);
    if page.session.state != SessionState::ChallengeRequired {
        return show_state(pages, lang, &page.session, &page.merchant_name);
    }
    let (secret, cookie) = browser_secret(&req);
    let id = page.session.id.to_string();
    let view = ChallengeView {
        t: lang.texts(),
        lang: lang.code(),
        purchase: PurchaseView::of(&page.session, &page.merchant_name),
        csrf: pages.csrf.token(&secret, &id),
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
    let lang = Lang::choose(form.lg.as_deref(), None);
    if !pages.own_challenge_page {
        return not_here(&state, lang);
    }
    if !csrf_ok(pages, &req, &path, form.csrf_token.as_deref()) {
        return csrf_refused(pages, lang);
    }
    let answer = match form.outcome.as_deref() {
        Some("pass") => ChallengeAnswer::Passed,
        _ => ChallengeAnswer::Failed,
    };
    finish(&state, &path, answer, form.lg.as_deref()).await
}

/// GET /pay/return/{id}: the payer is back from the processor's challenge page.
pub async fn processor_return(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<LangQuery>,
) -> HttpResponse {
    finish(
        &state,
        &path,
        ChallengeAnswer::Returned,
        query.lg.as_deref(),
    )
    .await
}

async fn finish(
    state: &AppState,
    id: &str,
    answer: ChallengeAnswer,
    lg: Option<&str>,
) -> HttpResponse {
    let pages = &state.pages;
    let lang = Lang::choose(lg, None);
    let outcome = match state.checkout.complete_challenge(id, answer).await {
        Ok(outcome) => outcome,
        Err(e) => return error_page(pages, lang, &e),
    };
    let lang = Lang::choose(lg, outcome.session.culture);
    let merchant = match open_any(&state.checkout, id).await {
        Ok(page) => page.merchant_name,
        Err(_) => outcome.session.terminal.to_string(),
    };
    after_step(pages, lang, &outcome.session, &merchant, &outcome.result)
}

fn not_here(state: &AppState, lang: Lang) -> HttpResponse {
    render::html(
        &state.pages.tera,
        StatusCode::NOT_FOUND,
        "error.html",
        &ErrorView::new(lang, "SVC_002", lang.texts().session_missing),
        &state.pages.csp_for(None),
    )
}
