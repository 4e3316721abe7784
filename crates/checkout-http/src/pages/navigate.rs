//! Where the browser goes after a payment step: a redirect to the merchant (integrated
//! checkout), the session's own page with its result (payment link, or a session no longer
//! payable), or the challenge.
//!
//! After a post the answer is a 303 to a GET ([`after_step`], [`go_to_state`]), so that
//! reloading a result re-reads the session and never posts the card again; [`show_state`]
//! renders that GET page. Its "confirming with the processor" state refreshes itself through
//! the page script (`data-refresh`) and offers a "Check again" link, not a
//! `<meta http-equiv="refresh">`: a timed refresh the payer cannot stop fails WCAG 2.2.1.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use checkout_domain::session::{PaymentSession, SessionState};
use checkout_domain::usecases::PaymentResult;

use super::i18n::Lang;
use super::render::{self, Frame, PurchaseView, ReceiptView, ResultView};
use super::Pages;

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
        .then(|| format!("/pay/challenge/{}?lg={}", session.id(), lang.code()))
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
    let (heading, message, next_step, success) = match session.state() {
        SessionState::Successful | SessionState::ApprovedTransaction => (
            t.heading_approved,
            t.result_approved,
            Some(t.approved_next),
            true,
        ),
        SessionState::Failed => (
            t.heading_declined,
            t.result_declined,
            Some(t.declined_next),
            false,
        ),
        SessionState::Cancelled | SessionState::Voided => (
            t.heading_cancelled,
            t.result_cancelled,
            Some(t.cancelled_next),
            false,
        ),
        SessionState::ChallengeRequired => (t.heading_challenge, t.result_challenge, None, false),
        SessionState::Expired => (
            t.heading_expired,
            t.expired_message,
            Some(t.expired_next),
            false,
        ),
        SessionState::Processing | SessionState::Pending => (
            t.heading_processing,
            t.result_processing,
            Some(t.processing_next),
            false,
        ),
    };
    let challenge_link = (session.state() == SessionState::ChallengeRequired)
        .then(|| own_challenge(pages, session, lang))
        .flatten();
    let purchase = PurchaseView::of(session, merchant, lang);
    let receipt = ReceiptView::of(session, &purchase.total, lang);
    let view = ResultView {
        frame: Frame::new(lang, ""),
        purchase,
        state: session.state().name(),
        heading,
        message,
        next_step,
        challenge_link,
        success,
        refresh: matches!(
            session.state(),
            SessionState::Processing | SessionState::Pending
        ),
        self_href: format!("?lg={}", lang.code()),
        receipt,
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
        PaymentResult::Declined { .. } if session.state() == SessionState::Pending => see_other(
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
