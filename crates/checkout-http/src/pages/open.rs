//! GET /pay/checkout-payment/{id} and GET /pay/link/{id}: the payment page.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::session::SessionFlow;
use checkout_domain::usecases::HostedPage;

use super::browser::{accept_language, browser_secret, with_cookie};
use super::error_page::error_page_about;
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
                .filter(|c| c.session.kind.is_flow(flow));
            let culture = context.as_ref().and_then(|c| c.session.culture);
            let lang = Lang::choose(lg, culture, accept);
            error_page_about(pages, lang, &e, "", context.as_ref())
        }
        Ok(page) => {
            let lang = Lang::choose(lg, page.session.culture, accept);
            if page.is_payable() {
                // Back after a declined card, the terminal allowing another: say so.
                let banner = query.declined.is_some().then(|| Banner {
                    code: checkout_domain::SvcCode::Svc006.spec().code,
                    text: lang.texts().declined_try_another,
                });
                pay_form(
                    pages,
                    req,
                    &page,
                    lang,
                    FormState {
                        banner,
                        ..FormState::default()
                    },
                )
            } else {
                show_state(pages, lang, &page.session, &page.merchant_name)
            }
        }
    }
}

/// What a re-shown card form keeps and says: the field errors (input id, message; in form
/// order), a banner, and the values safe to show again.
#[derive(Debug)]
pub struct FormState {
    /// The status of the answer.
    pub status: StatusCode,
    /// Input id, field label and message of each field that failed the checks.
    pub errors: Vec<SummaryItem>,
    /// A message above the form (processor errors).
    pub banner: Option<Banner>,
    /// The cardholder name, always kept.
    pub holder: String,
    /// The expiry as `MM/YY` when it was valid; never the card number or the code.
    pub expiry: String,
    /// The card-testing guard's challenge the post must answer.
    pub proof: Option<crate::card_guard::Challenge>,
}

impl Default for FormState {
    fn default() -> Self {
        FormState {
            status: StatusCode::OK,
            errors: Vec::new(),
            banner: None,
            holder: String::new(),
            expiry: String::new(),
            proof: None,
        }
    }
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
    let (secret, cookie) = browser_secret(pages, req);
    let id = session.id.to_string();
    // A form re-shown in a post's answer switches language on the session's own page.
    let base = if req.method() == actix_web::http::Method::GET {
        String::new()
    } else {
        render::session_path(session)
    };
    let view = PayView {
        frame: Frame::new(lang, &base),
        purchase: PurchaseView::of(session, &page.merchant_name, lang),
        csrf: pages.csrf.token(&secret, &id),
        session_id: id,
        can_cancel: matches!(
            session.kind,
            checkout_domain::session::SessionKind::IntegratedCheckout(_)
        ),
        errors: form.errors.iter().map(|e| (e.id, e.message)).collect(),
        summary: form.errors,
        banner: form.banner,
        holder: form.holder,
        expiry: form.expiry,
        proof: form.proof,
    };
    let response = render::html(
        &pages.tera,
        form.status,
        "pay.html",
        &view,
        &pages.csp_for(Some(session)),
    );
    with_cookie(response, cookie)
}
