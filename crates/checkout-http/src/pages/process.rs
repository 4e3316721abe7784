//! POST /pay/process-payment: the card form. CSRF-checked; the card is checked on the server;
//! the domain makes sure at most one authorisation happens per session.
//!
//! Every answer is a 303 to a GET page (`docs/decisions/0013-payer-forms-csrf-and-prg.md`).
//! A form shown again after a failed check keeps the cardholder name and a valid expiry,
//! never the card number or the CVV
//! (`docs/decisions/0009-pages-never-show-card-data-again.md`).

use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::card::{CardExpiry, CardInput};
use checkout_domain::guard::{GuardAction, ProofCheck};
use checkout_domain::session::{PaymentSession, SessionState};
use checkout_domain::usecases::{CardPost, GuardedPost, PaymentResult};
use checkout_domain::values::SessionId;
use checkout_domain::{CheckoutError, SvcCode};
use time::OffsetDateTime;

use super::browser::{accept_language, csrf_ok, with_cookie};
use super::error_page::error_page_about;
use super::flash::{ErrorCode, FieldCode, Flash, FlashKey, Notice};
use super::form::{self, PaymentForm};
use super::i18n::Lang;
use super::load::{context_of, open_any, session_id};
use super::navigate::{after_step, go_to_state, see_other};
use super::render;
use super::Pages;
use crate::card_guard::Solution;
use crate::AppState;

/// Handles a card form submission: one use-case call, which reads the session once. Every
/// answer is a 303 to a GET page, so that a reload or Back never posts the card again and
/// never meets a browser's resubmission page: the merchant, the challenge, the session's
/// result page, or its form shown again with what [`super::flash`] keeps (the name, a valid
/// expiry, the failed fields, the notice; never the number or the code).
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
        // Nothing of the post is kept: a forged post must not fill the payer's form.
        tracing::warn!("card form refused: CSRF token missing or wrong, or another site");
        let context = context_of(&state.checkout, &raw_id).await;
        return match context {
            Some(context) => {
                let lang = Lang::choose(form.lg.as_deref(), context.session.culture(), accept);
                see_other(
                    pages,
                    Some(&context.session),
                    &format!(
                        "{}?lg={}&retype=1",
                        render::session_path(&context.session),
                        lang.code()
                    ),
                )
            }
            None => go_to_unknown(pages, lang, &raw_id),
        };
    }
    let id = match session_id(&raw_id) {
        Ok(id) => id,
        Err(_) => return go_to_unknown(pages, lang, &raw_id),
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
    let mut kept = FlashKey::start(&raw_id);
    kept.holder = holder;
    let post = match post {
        Ok(post) => post,
        // Fail closed: the store (and with it the card-testing guard's counts) could not be
        // read, so nothing was processed. A direct 503 page: a redirect would only meet the
        // same outage, and there is nothing to keep a reload from repeating.
        Err(e) if crate::problem::is_temporarily_unavailable(&e) => {
            tracing::warn!(error = %e, "card post: dependency unavailable, nothing processed");
            let context = context_of(&state.checkout, &raw_id).await;
            let lang = Lang::choose(
                form.lg.as_deref(),
                context.as_ref().and_then(|c| c.session.culture()),
                accept,
            );
            let base = context
                .as_ref()
                .map(|c| render::session_path(&c.session))
                .unwrap_or_default();
            return error_page_about(pages, lang, &e, &base, context.as_ref());
        }
        Err(e) => {
            let Some(context) = context_of(&state.checkout, &raw_id).await else {
                tracing::warn!(error = %e, "card post about no known session");
                return go_to_unknown(pages, lang, &raw_id);
            };
            let lang = Lang::choose(form.lg.as_deref(), context.session.culture(), accept);
            // A session that expired while its form was open: its page says so. An
            // inactive terminal: its page says so too.
            if matches!(
                e,
                CheckoutError::Service {
                    code: SvcCode::Svc002 | SvcCode::Svc005,
                    ..
                }
            ) {
                return go_to_page(pages, lang, &context.session);
            }
            tracing::error!(error = %e, "card post failed");
            kept.notice = Some(Notice::Unexpected);
            return go_to_form(pages, lang, &context.session, &kept);
        }
    };
    let page = post.page;
    let lang = Lang::choose(form.lg.as_deref(), page.session.culture(), accept);
    match post.result {
        Err(field_errors) => {
            // A BTreeMap of CardField iterates in the form's order.
            kept.errors = field_errors
                .into_iter()
                .map(|(field, error)| (FieldCode::of(field), ErrorCode::of(error)))
                .collect();
            kept.expiry = expiry;
            // A challenged payer who mistyped keeps a challenge (a fresh one, issued by the
            // form's GET: the form's number was never checked against the guard).
            kept.challenge = !matches!(guarded.proof, ProofCheck::Absent);
            go_to_form(pages, lang, &page.session, &kept)
        }
        Ok(PaymentResult::Retry { code }) => {
            kept.notice = Some(if code == SvcCode::Svc003 {
                Notice::ProcessorUnreachable
            } else {
                Notice::ProcessorRefused
            });
            go_to_form(pages, lang, &page.session, &kept)
        }
        // The terminal allows another card: the form again, saying the card was declined.
        Ok(PaymentResult::Declined { .. }) if page.session.state() == SessionState::Pending => {
            kept.notice = Some(Notice::DeclinedTryAnother);
            go_to_form(pages, lang, &page.session, &kept)
        }
        Ok(PaymentResult::Guarded(GuardAction::Refused(rule))) => {
            let retry_after = state
                .checkout
                .card_guard()
                .map_or(time::Duration::hours(1), |g| g.policy.refusal_lasts(rule));
            guard_refused(pages, lang, &page, retry_after)
        }
        // A challenge: the form again (303, PRG), whose GET issues a fresh proof-of-work
        // challenge for this session; the name and a valid expiry are kept.
        Ok(PaymentResult::Guarded(_)) => {
            kept.expiry = expiry;
            kept.notice = Some(Notice::ChallengeRequired);
            go_to_form(pages, lang, &page.session, &kept)
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
fn go_to_page(pages: &Pages, lang: Lang, session: &PaymentSession) -> HttpResponse {
    see_other(
        pages,
        Some(session),
        &format!("{}?lg={}", render::session_path(session), lang.code()),
    )
}

/// A 303 to the session's form shown again with `kept`, which the answer's cookie carries.
fn go_to_form(pages: &Pages, lang: Lang, session: &PaymentSession, kept: &Flash) -> HttpResponse {
    // A challenged form says so in its address too, so that losing the cookie (another tab,
    // its ten minutes) never loses the challenge.
    let verify = if kept.challenge || kept.notice == Some(Notice::ChallengeRequired) {
        "&verify=1"
    } else {
        ""
    };
    let response = see_other(
        pages,
        Some(session),
        &format!(
            "{}?lg={}&form={}{verify}",
            render::session_path(session),
            lang.code(),
            kept.id
        ),
    );
    with_cookie(
        response,
        Some(pages.flash.cookie(kept, pages.cookies_secure())),
    )
}

/// A 303 to the page of a session the post named but that does not exist, which says so (an
/// id that is no session id at all becomes `-`, so nothing of it is echoed).
fn go_to_unknown(pages: &Pages, lang: Lang, raw_id: &str) -> HttpResponse {
    let shown = session_id(raw_id)
        .map(|id| id.to_string())
        .unwrap_or_else(|_| "-".to_owned());
    see_other(
        pages,
        None,
        &format!("/pay/link/{shown}?lg={}", lang.code()),
    )
}

/// A submission that lost the race to another one for the same session (a double click, a
/// second tab) waits for the winner's outcome while the session is Processing, at most the
/// configured wait, so that every answer shows the same final state. Returns the session as
/// it then stands.
async fn settled(state: &AppState, id: SessionId, mut session: PaymentSession) -> PaymentSession {
    let deadline = Instant::now() + state.pages.processing_wait;
    while session.state() == SessionState::Processing && Instant::now() < deadline {
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
