//! POST /pay/process-payment: the card form. CSRF-checked; the card is checked on the server;
//! the domain makes sure at most one authorisation happens per session.
//!
//! A form shown again after a failed check keeps the cardholder name and a valid expiry,
//! never the card number or the CVV
//! (`docs/decisions/0009-pages-never-show-card-data-again.md`).

use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::card::{CardExpiry, CardField, CardInput};
use checkout_domain::guard::{GuardAction, ProofCheck};
use checkout_domain::session::{PaymentSession, SessionState};
use checkout_domain::usecases::{CardPost, GuardedPost, PaymentResult};
use checkout_domain::values::SessionId;
use checkout_domain::{CheckoutError, SvcCode};
use time::OffsetDateTime;

use super::browser::{accept_language, csrf_ok};
use super::error_page::{csrf_refused, error_page, error_page_about};
use super::form::{self, PaymentForm};
use super::i18n::Lang;
use super::load::{context_of, open_any, session_id};
use super::navigate::{after_step, go_to_state, see_other};
use super::open::pay_form;
use super::open::FormState;
use super::render::{self, Banner, SummaryItem};
use crate::card_guard::Solution;
use crate::AppState;

/// The input id of a card field, as in the form.
fn input_id(field: CardField) -> &'static str {
    match field {
        CardField::CardholderName => "cardholderName",
        CardField::CardNumber => "cardNumber",
        CardField::Expiry => "cardExpiry",
        CardField::Cvv => "cardCvv",
    }
}

/// Handles a card form submission: one use-case call, which reads the session once. Every
/// outcome is a 303 to a GET page (a reload never posts the card again), except a form to
/// correct (422, the form again with the valid name and expiry, never the number or the code)
/// and the refusals that keep the payer where they are (a bad token, a processor retry).
pub async fn process_payment(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let pages = &state.pages;
    let form: PaymentForm = form::parse(&body);
    drop(body);
    let raw_id = form.checkout_session_id.clone().unwrap_or_default();
    let accept = accept_language(&req);
    let lang = Lang::choose(form.lg.as_deref(), None, accept);
    if !csrf_ok(pages, &req, &raw_id, form.csrf_token.as_deref()) {
        let context = context_of(&state.checkout, &raw_id).await;
        return csrf_refused(pages, lang, context.as_ref());
    }
    let id = match session_id(&raw_id) {
        Ok(id) => id,
        Err(e) => return error_page(pages, lang, &e),
    };
    let holder = form.cardholder_name.clone().unwrap_or_default();
    let input = CardInput {
        cardholder_name: holder.clone(),
        card_number: form.card_number.unwrap_or_default(),
        expiry: form.card_expiry.unwrap_or_default(),
        cvv: form.card_cvv.unwrap_or_default(),
    };
    let solution = Solution {
        salt: form.pow_salt.unwrap_or_default(),
        challenge: form.pow_challenge.unwrap_or_default(),
        signature: form.pow_signature.unwrap_or_default(),
        number: form.pow_number.unwrap_or_default(),
    };
    let guarded = GuardedPost {
        address: state.trusted_proxies.client_of(&req),
        proof: pages
            .proof_of_work
            .as_ref()
            .map_or(ProofCheck::Absent, |pow| {
                pow.check(&solution, id, OffsetDateTime::now_utc())
            }),
    };
    let post = state.checkout.process_card(id, &input, &guarded).await;
    if let Ok(CardPost {
        guard: Some(action),
        ..
    }) = &post
    {
        metrics::counter!(
            crate::metrics::CARD_GUARD_DECISIONS_TOTAL,
            "rule" => action.rule(),
            "outcome" => action.outcome()
        )
        .increment(1);
    }
    let expiry = match &post {
        Ok(CardPost { result: Err(_), .. }) => {
            CardExpiry::parse(&input.expiry, OffsetDateTime::now_utc())
                .map(|e| e.form_value())
                .unwrap_or_default()
        }
        _ => String::new(),
    };
    drop(input);
    let post = match post {
        Ok(post) => post,
        Err(e) => {
            let Some(context) = context_of(&state.checkout, &raw_id).await else {
                return error_page(pages, lang, &e);
            };
            let lang = Lang::choose(form.lg.as_deref(), context.session.culture, accept);
            // A session that expired while its form was open: its page says so (a GET).
            if matches!(
                e,
                CheckoutError::Service {
                    code: SvcCode::Svc002,
                    ..
                }
            ) {
                return go_to_page(pages, lang, &context.session);
            }
            let base = render::session_path(&context.session);
            return error_page_about(pages, lang, &e, &base, Some(&context));
        }
    };
    let page = post.page;
    let lang = Lang::choose(form.lg.as_deref(), page.session.culture, accept);
    let t = lang.texts();
    match post.result {
        Err(field_errors) => {
            // A BTreeMap of CardField iterates in the form's order.
            let errors = field_errors
                .into_iter()
                .map(|(field, error)| SummaryItem {
                    id: input_id(field),
                    label: t.field_label(field),
                    message: t.card_error(field, error),
                })
                .collect();
            // A challenged payer who mistyped keeps a challenge (a fresh one: the form's
            // number was never checked against the guard).
            let proof = match guarded.proof {
                ProofCheck::Absent => None,
                _ => pages
                    .proof_of_work
                    .as_ref()
                    .map(|pow| pow.issue(id, OffsetDateTime::now_utc())),
            };
            let state = FormState {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                errors,
                banner: None,
                holder,
                expiry,
                proof,
            };
            pay_form(pages, &req, &page, lang, state)
        }
        Ok(PaymentResult::Retry { code }) => {
            let banner = Banner {
                code: code.spec().code,
                text: if code == SvcCode::Svc003 {
                    t.processor_unreachable
                } else {
                    t.processor_refused
                },
            };
            let state = FormState {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                banner: Some(banner),
                holder,
                ..FormState::default()
            };
            pay_form(pages, &req, &page, lang, state)
        }
        // The terminal allows another card: the form again, saying the card was declined.
        Ok(PaymentResult::Declined { .. }) if page.session.state == SessionState::Pending => {
            let state = FormState {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                banner: Some(Banner {
                    code: SvcCode::Svc006.spec().code,
                    text: t.declined_try_another,
                }),
                holder,
                ..FormState::default()
            };
            pay_form(pages, &req, &page, lang, state)
        }
        Ok(PaymentResult::Guarded(GuardAction::Refused(rule))) => {
            let retry_after = state
                .checkout
                .card_guard()
                .map_or(time::Duration::hours(1), |g| g.policy.refusal_lasts(rule));
            guard_refused(pages, lang, &page, retry_after)
        }
        Ok(PaymentResult::Guarded(_)) => {
            let proof = pages
                .proof_of_work
                .as_ref()
                .map(|pow| pow.issue(id, OffsetDateTime::now_utc()));
            let state = FormState {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                banner: Some(Banner {
                    code: "GUARD_CHECK",
                    text: t.guard_check,
                }),
                holder,
                expiry,
                proof,
                ..FormState::default()
            };
            pay_form(pages, &req, &page, lang, state)
        }
        Ok(PaymentResult::AlreadyHandled) => {
            let session = settled(&state, id, page.session).await;
            go_to_state(pages, lang, &session)
        }
        Ok(result) => after_step(pages, lang, &page.session, &result),
    }
}

/// The card-testing guard's refusal: a 429 page with `Retry-After` (the most the refusal can
/// last), saying nothing was charged and the card was not sent.
fn guard_refused(
    pages: &super::Pages,
    lang: Lang,
    page: &checkout_domain::usecases::HostedPage,
    retry_after: time::Duration,
) -> HttpResponse {
    let t = lang.texts();
    let base = render::session_path(&page.session);
    let mut view = render::ErrorView::new(lang, &base, "GUARD_REFUSED", t.guard_refused);
    view.next_step = Some(t.guard_refused_next);
    view.merchant = Some(page.merchant_name.clone());
    view.return_url = page.session.return_url().map(|u| u.to_string());
    tracing::warn!(instance = %view.instance, "card post refused by the card-testing guard");
    let mut response = render::html(
        &pages.tera,
        StatusCode::TOO_MANY_REQUESTS,
        "error.html",
        &view,
        &pages.csp_for(Some(&page.session)),
    );
    if let Ok(value) = actix_web::http::header::HeaderValue::from_str(
        &retry_after.whole_seconds().max(1).to_string(),
    ) {
        response
            .headers_mut()
            .insert(actix_web::http::header::RETRY_AFTER, value);
    }
    response
}

/// A 303 to the session's own page, whatever its state (it shows why it cannot be paid).
fn go_to_page(pages: &super::Pages, lang: Lang, session: &PaymentSession) -> HttpResponse {
    see_other(
        pages,
        Some(session),
        &format!("{}?lg={}", render::session_path(session), lang.code()),
    )
}

/// A submission that lost the race to another one for the same session (a double click, a
/// second tab) waits for the winner's outcome while the session is Processing, at most the
/// configured wait, so that every answer shows the same final state. Returns the session as
/// it then stands.
async fn settled(state: &AppState, id: SessionId, mut session: PaymentSession) -> PaymentSession {
    let deadline = Instant::now() + state.pages.processing_wait;
    while session.state == SessionState::Processing && Instant::now() < deadline {
        actix_web::rt::time::sleep(SETTLE_POLL).await;
        match open_any(&state.checkout, id).await {
            Ok(page) => session = page.session,
            Err(_) => break,
        }
    }
    session
}

/// How often a waiting submission reads the session again.
const SETTLE_POLL: Duration = Duration::from_millis(50);
