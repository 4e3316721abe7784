//! POST /pay/process-payment: the card form. CSRF-checked; the card is checked on the server;
//! the domain makes sure at most one authorisation happens per session.

use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::card::{CardField, CardInput};
use checkout_domain::session::{PaymentSession, SessionState};
use checkout_domain::usecases::PaymentResult;
use checkout_domain::values::SessionId;
use checkout_domain::SvcCode;

use super::form::{self, PaymentForm};
use super::i18n::Lang;
use super::open::pay_form;
use super::outcome::{
    after_step, csrf_ok, csrf_refused, error_page, open_any, session_id, show_state,
};
use super::render::Banner;
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

/// Handles a card form submission: one use-case call, which reads the session once.
pub async fn process_payment(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let pages = &state.pages;
    let form: PaymentForm = form::parse(&body);
    drop(body);
    let raw_id = form.checkout_session_id.clone().unwrap_or_default();
    let lang = Lang::choose(form.lg.as_deref(), None);
    if !csrf_ok(pages, &req, &raw_id, form.csrf_token.as_deref()) {
        return csrf_refused(pages, lang);
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
    let post = state.checkout.process_payment(id, &input).await;
    drop(input);
    let post = match post {
        Ok(post) => post,
        Err(e) => return error_page(pages, lang, &e),
    };
    let page = post.page;
    let lang = Lang::choose(form.lg.as_deref(), page.session.culture);
    let t = lang.texts();
    // Nothing charged and the session payable again: the form, saying why.
    let banner = match &post.result {
        Ok(PaymentResult::Retry { code }) => Some(Banner {
            code: code.spec().code,
            text: if *code == SvcCode::Svc003 {
                t.processor_unreachable
            } else {
                t.processor_refused
            },
        }),
        // The terminal allows another card.
        Ok(PaymentResult::Declined { .. }) if page.session.state == SessionState::Pending => {
            Some(Banner {
                code: SvcCode::Svc006.spec().code,
                text: t.declined_try_another,
            })
        }
        _ => None,
    };
    if banner.is_some() {
        return pay_form(
            pages,
            &req,
            &page,
            lang,
            StatusCode::UNPROCESSABLE_ENTITY,
            Vec::new(),
            banner,
            &holder,
        );
    }
    match post.result {
        Err(field_errors) => {
            // A BTreeMap of CardField iterates in the form's order.
            let errors: Vec<(&'static str, &'static str)> = field_errors
                .into_iter()
                .map(|(field, error)| (input_id(field), t.card_error(field, error)))
                .collect();
            pay_form(
                pages,
                &req,
                &page,
                lang,
                StatusCode::UNPROCESSABLE_ENTITY,
                errors,
                None,
                &holder,
            )
        }
        Ok(PaymentResult::AlreadyHandled) => {
            let session = settled(&state, id, page.session).await;
            show_state(pages, lang, &session, &page.merchant_name)
        }
        Ok(result) => after_step(pages, lang, &page.session, &page.merchant_name, &result),
    }
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
