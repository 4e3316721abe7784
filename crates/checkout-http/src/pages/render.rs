//! Rendering: the embedded tera templates, the view models they receive, and the security
//! headers every page carries.

use std::collections::BTreeMap;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, HttpResponseBuilder};
use checkout_domain::session::PaymentSession;
use checkout_domain::values::Currency;
use rust_decimal::Decimal;
use serde::Serialize;
use tera::Tera;

use super::i18n::{Lang, Texts};

/// The templates, compiled into the binary from the top-level `templates/` folder.
const TEMPLATES: [(&str, &str); 5] = [
    (
        "layout.html",
        include_str!("../../../../templates/layout.html"),
    ),
    ("pay.html", include_str!("../../../../templates/pay.html")),
    (
        "result.html",
        include_str!("../../../../templates/result.html"),
    ),
    (
        "challenge.html",
        include_str!("../../../../templates/challenge.html"),
    ),
    (
        "error.html",
        include_str!("../../../../templates/error.html"),
    ),
];

/// The page stylesheet, served at `/pay/assets/checkout.css`.
pub const STYLESHEET: &str = include_str!("../../../../templates/checkout.css");

/// Builds the template engine (autoescaping on for `.html`).
pub fn templates() -> anyhow::Result<Tera> {
    let mut tera = Tera::default();
    tera.add_raw_templates(TEMPLATES.to_vec())?;
    tera.autoescape_on(vec![".html"]);
    Ok(tera)
}

/// An amount at its currency's scale, e.g. `42.50` or `15000.00`.
pub fn money(value: Decimal, currency: Currency) -> String {
    let mut v = value;
    v.rescale(currency.minor_units());
    v.to_string()
}

/// A line of the items table.
#[derive(Debug, Serialize)]
pub struct ItemView {
    /// Item code.
    pub code: String,
    /// Description.
    pub description: String,
    /// Quantity.
    pub quantity: u32,
    /// Amount.
    pub amount: String,
}

/// A line of the charges table.
#[derive(Debug, Serialize)]
pub struct ChargeView {
    /// Name.
    pub name: String,
    /// Amount.
    pub amount: String,
}

/// What every page shows about the purchase.
#[derive(Debug, Serialize)]
pub struct PurchaseView {
    /// Merchant name.
    pub merchant: String,
    /// Purchase description.
    pub description: Option<String>,
    /// Items.
    pub items: Vec<ItemView>,
    /// Additional charges.
    pub charges: Vec<ChargeView>,
    /// Total.
    pub total: String,
    /// Currency code.
    pub currency: &'static str,
    /// The merchant's reference.
    pub reference: String,
}

impl PurchaseView {
    /// The purchase of `session` sold by `merchant`.
    pub fn of(session: &PaymentSession, merchant: &str) -> Self {
        let currency = session.amount.currency();
        PurchaseView {
            merchant: merchant.to_owned(),
            description: session.description.as_ref().map(|d| d.as_str().to_owned()),
            items: session
                .items
                .iter()
                .map(|i| ItemView {
                    code: i
                        .code
                        .as_ref()
                        .map(|c| c.as_str().to_owned())
                        .unwrap_or_default(),
                    description: i
                        .description
                        .as_ref()
                        .map(|d| d.as_str().to_owned())
                        .unwrap_or_default(),
                    quantity: i.quantity,
                    amount: money(i.amount.value(), currency),
                })
                .collect(),
            charges: session
                .charges
                .iter()
                .map(|c| ChargeView {
                    name: c
                        .name
                        .as_ref()
                        .map(|n| n.as_str().to_owned())
                        .unwrap_or_default(),
                    amount: money(c.amount.value(), currency),
                })
                .collect(),
            total: money(session.amount.value(), currency),
            currency: currency.code(),
            reference: session.reference.to_string(),
        }
    }
}

/// The card form page.
#[derive(Debug, Serialize)]
pub struct PayView {
    /// Texts.
    pub t: &'static Texts,
    /// Language code.
    pub lang: &'static str,
    /// The purchase.
    pub purchase: PurchaseView,
    /// Session id.
    pub session_id: String,
    /// Form token.
    pub csrf: String,
    /// Integrated checkout (shows cancel).
    pub can_cancel: bool,
    /// Input id → error message.
    pub errors: BTreeMap<&'static str, &'static str>,
    /// The same messages in the order of the form's fields, for the error summary.
    pub summary: Vec<&'static str>,
    /// A message above the form (processor errors).
    pub banner: Option<Banner>,
    /// The cardholder name to keep (never the card data).
    pub holder: String,
}

/// A message above the card form, with the service code it stands for.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Banner {
    /// The SVC code (`data-code` of the banner), for support and tests.
    pub code: &'static str,
    /// The message, in the page's language.
    pub text: &'static str,
}

/// A result or session-state page.
#[derive(Debug, Serialize)]
pub struct ResultView {
    /// Texts.
    pub t: &'static Texts,
    /// Language code.
    pub lang: &'static str,
    /// The purchase.
    pub purchase: PurchaseView,
    /// State name (`data-state`).
    pub state: &'static str,
    /// The message.
    pub message: &'static str,
    /// Where to continue a pending challenge.
    pub challenge_link: Option<String>,
    /// The payment form again, after a decline that allows another card.
    pub retry_link: Option<String>,
    /// Whether the outcome is good news.
    pub success: bool,
}

/// The sandbox challenge page.
#[derive(Debug, Serialize)]
pub struct ChallengeView {
    /// Texts.
    pub t: &'static Texts,
    /// Language code.
    pub lang: &'static str,
    /// The purchase.
    pub purchase: PurchaseView,
    /// Session id.
    pub session_id: String,
    /// Form token.
    pub csrf: String,
}

/// An error page.
#[derive(Debug, Serialize)]
pub struct ErrorView {
    /// Texts.
    pub t: &'static Texts,
    /// Language code.
    pub lang: &'static str,
    /// `data-code`: the SVC code or a short name.
    pub code: &'static str,
    /// The message.
    pub message: &'static str,
    /// The request's instance id, for support.
    pub instance: String,
}

impl ErrorView {
    /// An error page in `lang`.
    pub fn new(lang: Lang, code: &'static str, message: &'static str) -> Self {
        ErrorView {
            t: lang.texts(),
            lang: lang.code(),
            code,
            message,
            instance: crate::request_context::instance_id(),
        }
    }
}

/// The Content-Security-Policy of a page: nothing but our own stylesheet, no scripts, no
/// framing, and forms that may post only to us and be redirected only to `redirect_origins`
/// (Chrome applies `form-action` to the redirects that follow a form post).
pub fn content_security_policy(redirect_origins: &[String]) -> String {
    let mut form_action = String::from("'self'");
    for origin in redirect_origins {
        form_action.push(' ');
        form_action.push_str(origin);
    }
    format!(
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action {form_action}; \
         frame-ancestors 'none'; base-uri 'none'"
    )
}

/// Adds the headers every page and page redirect carries.
pub fn secure_headers(builder: &mut HttpResponseBuilder, csp: &str) {
    if let Ok(value) = HeaderValue::from_str(csp) {
        builder.insert_header((header::CONTENT_SECURITY_POLICY, value));
    }
    builder
        .insert_header((
            header::STRICT_TRANSPORT_SECURITY,
            "max-age=63072000; includeSubDomains",
        ))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::CACHE_CONTROL, "no-store"));
}

/// Renders `template` with `view`; a rendering failure becomes a plain 500 page.
pub fn html<V: Serialize>(
    tera: &Tera,
    status: StatusCode,
    template: &str,
    view: &V,
    csp: &str,
) -> HttpResponse {
    let body =
        tera::Context::from_serialize(view).and_then(|context| tera.render(template, &context));
    let mut builder = HttpResponse::build(status);
    secure_headers(&mut builder, csp);
    match body {
        Ok(body) => builder.content_type("text/html; charset=utf-8").body(body),
        Err(e) => {
            tracing::error!(template, error = %e, "page rendering failed");
            HttpResponse::InternalServerError()
                .content_type("text/plain; charset=utf-8")
                .body("The page could not be shown.")
        }
    }
}
