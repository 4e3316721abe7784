//! The hosted pages (spec 4.5): the checkout page, the payment link page, the card form post,
//! the sandbox 3DS challenge, the processor's return, and cancel; besides them the
//! accessibility statement every page links (`/pay/accessibility`) and `/favicon.ico`. Server-rendered with tera;
//! one first-party script enhances them (`templates/checkout.js`, allowed by its hash) and
//! every page works without it. Every use case is the domain's.

pub mod csrf;
pub mod i18n;
pub mod render;

mod browser;
mod cancel;
mod challenge;
mod error_page;
mod flash;
mod form;
mod icon;
mod load;
mod money;
mod navigate;
mod open;
mod process;

use actix_web::{web, HttpResponse};
use checkout_domain::session::PaymentSession;
use tera::Tera;

use self::csrf::CsrfKey;
use self::flash::FlashKey;

/// What the pages need besides the use cases.
pub struct PagesConfig {
    /// 32 secret bytes for the CSRF tokens and the re-shown forms' cookie.
    pub csrf_secret: [u8; 32],
    /// The public base URL (for the processor's return address).
    pub public_base_url: String,
    /// Whether the processor is the in-process sandbox, whose challenge page the service
    /// hosts itself (`/pay/challenge/{id}`).
    pub own_challenge_page: bool,
    /// Origins the browser may be redirected to after a form post besides the merchant's
    /// callbacks (the card processor's 3DS pages).
    pub processor_origins: Vec<String>,
    /// How long a card submission that lost the race to another one for the same session
    /// waits for the winner's outcome before showing "processing".
    pub processing_wait: std::time::Duration,
    /// The card-testing guard's proof of work (`None`: no guard, no challenge).
    pub proof_of_work: Option<crate::card_guard::ProofOfWork>,
}

/// The pages' state: templates, CSRF key, settings.
pub struct Pages {
    tera: Tera,
    csrf: CsrfKey,
    flash: FlashKey,
    public_base_url: String,
    own_origin: String,
    own_challenge_page: bool,
    processor_origins: Vec<String>,
    processing_wait: std::time::Duration,
    proof_of_work: Option<crate::card_guard::ProofOfWork>,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages")
            .field("public_base_url", &self.public_base_url)
            .finish_non_exhaustive()
    }
}

impl Pages {
    /// Compiles the templates once.
    pub fn new(config: PagesConfig) -> anyhow::Result<Pages> {
        Ok(Pages {
            tera: render::templates()?,
            csrf: CsrfKey::new(&config.csrf_secret),
            flash: FlashKey::new(&config.csrf_secret),
            own_origin: url::Url::parse(&config.public_base_url)
                .map(|u| u.origin().ascii_serialization())
                .unwrap_or_default(),
            public_base_url: config.public_base_url.trim_end_matches('/').to_owned(),
            own_challenge_page: config.own_challenge_page,
            processor_origins: config.processor_origins,
            processing_wait: config.processing_wait,
            proof_of_work: config.proof_of_work,
        })
    }

    /// The payer's URL of an integrated checkout session: its hosted payment page.
    pub fn checkout_page_url(&self, session: &PaymentSession) -> String {
        format!(
            "{}/pay/checkout-payment/{}",
            self.public_base_url,
            session.id()
        )
    }

    /// Whether cookies are `Secure`: only when the public base URL is https.
    pub fn cookies_secure(&self) -> bool {
        self.public_base_url.starts_with("https://")
    }

    /// The origin of the public base URL (`scheme://host[:port]`).
    pub fn own_origin(&self) -> &str {
        &self.own_origin
    }

    /// The CSP of pages about `session`: forms may lead to the merchant's callback origins
    /// and the processor's.
    fn csp_for(&self, session: Option<&PaymentSession>) -> String {
        let mut origins = self.processor_origins.clone();
        if let Some(session) = session {
            if let checkout_domain::session::SessionKind::IntegratedCheckout(callbacks) =
                &session.kind()
            {
                let urls = [
                    Some(&callbacks.success),
                    Some(&callbacks.fail),
                    callbacks.back.as_ref(),
                ];
                for url in urls.into_iter().flatten() {
                    let origin = url.url().origin().ascii_serialization();
                    if !origins.contains(&origin) {
                        origins.push(origin);
                    }
                }
            }
        }
        render::content_security_policy(&origins)
    }
}

/// A static asset of the pages.
fn asset(content_type: &'static str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("Cache-Control", "public, max-age=3600"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Cross-Origin-Resource-Policy", "same-origin"))
        .body(body)
}

async fn stylesheet() -> HttpResponse {
    asset("text/css; charset=utf-8", render::STYLESHEET)
}

async fn script() -> HttpResponse {
    asset("text/javascript; charset=utf-8", render::SCRIPT)
}

async fn favicon() -> HttpResponse {
    asset("image/svg+xml", render::FAVICON)
}

/// `/favicon.ico`, for the clients that ask for it whatever the page says.
async fn favicon_ico() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("image/x-icon")
        .insert_header(("Cache-Control", "public, max-age=86400"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(icon::favicon_ico())
}

/// GET /pay/accessibility: the accessibility statement (`?lg=es|en`), linked from every page.
async fn accessibility(
    state: web::Data<crate::AppState>,
    req: actix_web::HttpRequest,
    query: web::Query<form::LangQuery>,
) -> HttpResponse {
    let pages = &state.pages;
    let lang = i18n::Lang::choose(query.lg.as_deref(), None, browser::accept_language(&req));
    render::html(
        &pages.tera,
        actix_web::http::StatusCode::OK,
        "accessibility.html",
        &render::StatementView {
            frame: render::Frame::new(lang, ""),
        },
        &pages.csp_for(None),
    )
}

/// Registers the page routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route(
        "/pay/checkout-payment/{checkoutSessionId}",
        web::get().to(open::checkout_page),
    )
    .route(
        "/pay/link/{checkoutSessionId}",
        web::get().to(open::link_page),
    )
    .route(
        "/pay/process-payment",
        web::post().to(process::process_payment),
    )
    .route(
        "/pay/cancel-payment",
        web::post().to(cancel::cancel_payment),
    )
    .route(
        "/pay/challenge/{checkoutSessionId}",
        web::get().to(challenge::challenge_page),
    )
    .route(
        "/pay/challenge/{checkoutSessionId}",
        web::post().to(challenge::answer_challenge),
    )
    .route(
        "/pay/return/{checkoutSessionId}",
        web::get().to(challenge::processor_return),
    )
    .route("/pay/assets/checkout.css", web::get().to(stylesheet))
    .route("/pay/assets/checkout.js", web::get().to(script))
    .route("/pay/assets/favicon.svg", web::get().to(favicon))
    .route("/pay/accessibility", web::get().to(accessibility))
    .route("/favicon.ico", web::get().to(favicon_ico));
}
