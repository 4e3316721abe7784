//! GET /pay/checkout-payment/{id} and GET /pay/link/{id}: the payment page.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::session::SessionFlow;
use checkout_domain::usecases::HostedPage;

use checkout_domain::card::CardField;
use checkout_domain::SvcCode;
use time::OffsetDateTime;

use super::browser::{accept_language, browser_nonce, with_cookie};
use super::error_page::error_page_about;
use super::flash::Notice;
use super::form::LangQuery;
use super::i18n::Lang;
use super::load::{context_of, session_id};
use super::navigate::show_state;
use super::render::{self, Banner, Frame, PayView, PurchaseView, SummaryItem};
use super::Pages;
use crate::AppState;

/// The integrated checkout page.
pub async fn checkout_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LangQuery>,
) -> HttpResponse {
    open(&state, &req, &path, &query, SessionFlow::IntegratedCheckout).await
}

/// The payment link page (`?lg=es|en`).
pub async fn link_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LangQuery>,
) -> HttpResponse {
    open(&state, &req, &path, &query, SessionFlow::PaymentLink).await
}

async fn open(
    state: &AppState,
    req: &HttpRequest,
    id: &str,
    query: &LangQuery,
    flow: SessionFlow,
) -> HttpResponse {
    let pages = &state.pages;
    let lg = query.lg.as_deref();
    let accept = accept_language(req);
    let opened = match session_id(id) {
        Ok(id) => state.checkout.open_page(id, flow).await,
        Err(e) => Err(e),
    };
    match opened {
        Err(e) => {
            // An expired session of this flow still names its merchant and the way back.
            let context = context_of(&state.checkout, id)
                .await
                .filter(|c| c.session.kind().is_flow(flow));
            let culture = context.as_ref().and_then(|c| c.session.culture());
            let lang = Lang::choose(lg, culture, accept);
            error_page_about(pages, lang, &e, "", context.as_ref())
        }
        Ok(page) => {
            let lang = Lang::choose(lg, page.session.culture(), accept);
            if page.is_payable() {
                let form = reshown_form(pages, req, &page, query, lang);
                pay_form(pages, req, &page, lang, form)
            } else {
                show_state(pages, lang, &page.session, &page.merchant_name)
            }
        }
    }
}

/// The state of the form on the session's GET page: the form a card post left (its signed
/// cookie, named by `form=`), or the notice a query parameter asks for (`declined=1` after a
/// declined card or a failed challenge when the terminal allows another card; `retype=1` after
/// a post whose token could not be used), else a clean form. A form the card-testing guard
/// challenged carries a fresh proof-of-work challenge for this session.
fn reshown_form(
    pages: &Pages,
    req: &HttpRequest,
    page: &HostedPage,
    query: &LangQuery,
    lang: Lang,
) -> FormState {
    let t = lang.texts();
    let id = page.session.id().to_string();
    if let Some(flash) = query
        .form
        .as_deref()
        .and_then(|form_id| pages.flash.read(req, &id, form_id))
    {
        let errors = flash
            .errors
            .iter()
            .map(|(field, error)| {
                let field = field.field();
                SummaryItem {
                    id: input_id(field),
                    label: t.field_label(field),
                    message: t.card_error(field, error.error()),
                }
            })
            .collect();
        // The card-testing guard asked for a proof of work (or the payer it challenged
        // mistyped): a fresh challenge bound to this session.
        let challenged = flash.challenge
            || flash.notice == Some(Notice::ChallengeRequired)
            || query.verify.is_some();
        let proof = pages
            .proof_of_work
            .as_ref()
            .filter(|_| challenged)
            .map(|pow| pow.issue(page.session.id(), OffsetDateTime::now_utc()));
        return FormState {
            errors,
            banner: flash.notice.map(|n| banner(n, lang)),
            holder: flash.holder,
            expiry: flash.expiry,
            form_id: Some(flash.id),
            proof,
        };
    }
    let notice = if query.verify.is_some() {
        Some(Notice::ChallengeRequired)
    } else if query.declined.is_some() {
        Some(Notice::DeclinedTryAnother)
    } else if query.retype.is_some() {
        Some(Notice::Retype)
    } else {
        None
    };
    // Asked for by the address (the form's cookie is gone): a fresh challenge all the same.
    let proof = pages
        .proof_of_work
        .as_ref()
        .filter(|_| query.verify.is_some())
        .map(|pow| pow.issue(page.session.id(), OffsetDateTime::now_utc()));
    FormState {
        banner: notice.map(|n| banner(n, lang)),
        proof,
        ..FormState::default()
    }
}

/// The input id of a card field, as in the form.
pub fn input_id(field: CardField) -> &'static str {
    match field {
        CardField::CardholderName => "cardholderName",
        CardField::CardNumber => "cardNumber",
        CardField::Expiry => "cardExpiry",
        CardField::Cvv => "cardCvv",
    }
}

/// The banner of `notice` in `lang`.
fn banner(notice: Notice, lang: Lang) -> Banner {
    let t = lang.texts();
    let (code, heading, text) = match notice {
        Notice::ProcessorUnreachable => {
            (SvcCode::Svc003.spec().code, None, t.processor_unreachable)
        }
        Notice::ProcessorRefused => (SvcCode::Svc004.spec().code, None, t.processor_refused),
        Notice::DeclinedTryAnother => (
            SvcCode::Svc006.spec().code,
            Some(t.heading_declined),
            t.declined_try_another,
        ),
        Notice::Retype => ("CSRF", Some(t.retype_heading), t.retype_text),
        Notice::Unexpected => ("ERROR", None, t.unexpected),
        Notice::ChallengeRequired => ("GUARD_CHECK", None, t.guard_check),
    };
    Banner {
        code,
        heading,
        text,
    }
}

/// What a re-shown card form keeps and says: the field errors (input id, message; in form
/// order), a banner, and the values safe to show again.
#[derive(Debug, Default)]
pub struct FormState {
    /// Input id, field label and message of each field that failed the checks.
    pub errors: Vec<SummaryItem>,
    /// A message above the form (processor errors).
    pub banner: Option<Banner>,
    /// The cardholder name, always kept.
    pub holder: String,
    /// The expiry as `MM/YY` when it was valid; never the card number or the code.
    pub expiry: String,
    /// The id of the re-shown form (the language switch keeps it).
    pub form_id: Option<String>,
    /// The card-testing guard's challenge the post must answer.
    pub proof: Option<crate::card_guard::Challenge>,
}

/// The card form for `page` in the state `form`.
pub fn pay_form(
    pages: &Pages,
    req: &HttpRequest,
    page: &HostedPage,
    lang: Lang,
    form: FormState,
) -> HttpResponse {
    let session = &page.session;
    let (nonce, cookie) = browser_nonce(pages, req);
    let id = session.id().to_string();
    let mut frame = Frame::new(lang, "");
    if let Some(form_id) = &form.form_id {
        frame.switch_href.push_str(&format!("&form={form_id}"));
    }
    let t = lang.texts();
    let title_prefix = if !form.errors.is_empty() {
        Some(t.error_prefix)
    } else {
        form.banner.and_then(|b| b.heading)
    };
    let view = PayView {
        frame,
        purchase: PurchaseView::of(session, &page.merchant_name, lang),
        csrf: pages.csrf.token(&nonce, &id),
        session_id: id,
        can_cancel: matches!(
            session.kind(),
            checkout_domain::session::SessionKind::IntegratedCheckout(_)
        ),
        errors: form.errors.iter().map(|e| (e.id, e.message)).collect(),
        summary: form.errors,
        banner: form.banner,
        holder: form.holder,
        expiry: form.expiry,
        proof: form.proof,
        title_prefix,
    };
    let response = render::html(
        &pages.tera,
        StatusCode::OK,
        "pay.html",
        &view,
        &pages.csp_for(Some(session)),
    );
    with_cookie(response, cookie)
}
