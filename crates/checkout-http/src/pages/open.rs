//! GET /pay/checkout-payment/{id} and GET /pay/link/{id}: the payment page.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::session::SessionFlow;
use checkout_domain::usecases::HostedPage;

use super::form::LangQuery;
use super::i18n::Lang;
use super::outcome::{browser_secret, error_page, session_id, show_state, with_cookie};
use super::render::{self, Banner, PayView, PurchaseView};
use super::Pages;
use crate::AppState;

/// The integrated checkout page.
pub async fn checkout_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LangQuery>,
) -> HttpResponse {
    open(
        &state,
        &req,
        &path,
        query.lg.as_deref(),
        SessionFlow::IntegratedCheckout,
    )
    .await
}

/// The payment link page (`?lg=es|en`).
pub async fn link_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LangQuery>,
) -> HttpResponse {
    open(
        &state,
        &req,
        &path,
        query.lg.as_deref(),
        SessionFlow::PaymentLink,
    )
    .await
}

async fn open(
    state: &AppState,
    req: &HttpRequest,
    id: &str,
    lg: Option<&str>,
    flow: SessionFlow,
) -> HttpResponse {
    let pages = &state.pages;
    let opened = match session_id(id) {
        Ok(id) => state.checkout.open_page(id, flow).await,
        Err(e) => Err(e),
    };
    match opened {
        Err(e) => error_page(pages, Lang::choose(lg, None), &e),
        Ok(page) => {
            let lang = Lang::choose(lg, page.session.culture);
            if page.is_payable() {
                pay_form(
                    pages,
                    req,
                    &page,
                    lang,
                    StatusCode::OK,
                    Vec::new(),
                    None,
                    "",
                )
            } else {
                show_state(pages, lang, &page.session, &page.merchant_name)
            }
        }
    }
}

/// The card form for `page`, with `errors` (input id, message; in form order) beside the
/// fields and an optional `banner`.
#[allow(clippy::too_many_arguments)]
pub fn pay_form(
    pages: &Pages,
    req: &HttpRequest,
    page: &HostedPage,
    lang: Lang,
    status: StatusCode,
    errors: Vec<(&'static str, &'static str)>,
    banner: Option<Banner>,
    holder: &str,
) -> HttpResponse {
    let session = &page.session;
    let (secret, cookie) = browser_secret(pages, req);
    let id = session.id.to_string();
    let view = PayView {
        t: lang.texts(),
        lang: lang.code(),
        purchase: PurchaseView::of(session, &page.merchant_name),
        csrf: pages.csrf.token(&secret, &id),
        session_id: id,
        can_cancel: matches!(
            session.kind,
            checkout_domain::session::SessionKind::IntegratedCheckout(_)
        ),
        summary: errors.iter().map(|(_, message)| *message).collect(),
        errors: errors.into_iter().collect(),
        banner,
        holder: holder.to_owned(),
    };
    let response = render::html(
        &pages.tera,
        status,
        "pay.html",
        &view,
        &pages.csp_for(Some(session)),
    );
    with_cookie(response, cookie)
}
