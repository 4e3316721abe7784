//! Rendering: the embedded tera templates, the view models they receive, and the security
//! headers every page carries.

use std::collections::BTreeMap;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, HttpResponseBuilder};
use checkout_domain::session::{PaymentSession, SessionKind};
use rust_decimal::Decimal;
use serde::Serialize;
use tera::Tera;

use super::i18n::{Lang, Texts};
use super::money;

/// The templates, compiled into the binary from the top-level `templates/` folder.
const TEMPLATES: [(&str, &str); 6] = [
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
    (
        "accessibility.html",
        include_str!("../../../../templates/accessibility.html"),
    ),
];

/// The page stylesheet, served at `/pay/assets/checkout.css`.
pub const STYLESHEET: &str = include_str!("../../../../templates/checkout.css");

/// The pages' one script (progressive enhancement), served at `/pay/assets/checkout.js`.
pub const SCRIPT: &str = include_str!("../../../../templates/checkout.js");

/// The favicon, served at `/pay/assets/favicon.svg`.
pub const FAVICON: &str = include_str!("../../../../templates/favicon.svg");

/// The script's Subresource Integrity value, `sha384-<base64>`: the `integrity` attribute of
/// its `<script>` tag and the one script source the CSP allows.
pub fn script_integrity() -> &'static str {
    static INTEGRITY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    INTEGRITY.get_or_init(|| {
        use base64::Engine;
        let digest = ring::digest::digest(&ring::digest::SHA384, SCRIPT.as_bytes());
        format!(
            "sha384-{}",
            base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
        )
    })
}

/// Builds the template engine (autoescaping on for `.html`).
pub fn templates() -> anyhow::Result<Tera> {
    let mut tera = Tera::default();
    tera.add_raw_templates(TEMPLATES.to_vec())?;
    tera.autoescape_on(vec![".html"]);
    Ok(tera)
}

/// What every page's frame needs: its words and language, the language switch and the
/// script's integrity.
#[derive(Debug, Serialize)]
pub struct Frame {
    /// Texts.
    pub t: &'static Texts,
    /// Language code (`lang` of the page).
    pub lang: &'static str,
    /// The other language's code.
    pub other_lang: &'static str,
    /// The other language's name, in itself.
    pub other_name: &'static str,
    /// Where the language switch leads: this page (or the session's page) in the other
    /// language.
    pub switch_href: String,
    /// The script's integrity value.
    pub script_integrity: &'static str,
}

impl Frame {
    /// The frame of a page in `lang` whose switch leads to `base` (a path, or `""` for the
    /// page itself) with `?lg=` the other language.
    pub fn new(lang: Lang, base: &str) -> Self {
        let other = lang.other();
        Frame {
            t: lang.texts(),
            lang: lang.code(),
            other_lang: other.code(),
            other_name: other.texts().lang_name,
            switch_href: format!("{base}?lg={}", other.code()),
            script_integrity: script_integrity(),
        }
    }
}

/// The GET page of `session`: its checkout page or its link page.
pub fn session_path(session: &PaymentSession) -> String {
    match session.kind() {
        SessionKind::IntegratedCheckout(_) => format!("/pay/checkout-payment/{}", session.id()),
        SessionKind::PaymentLink => format!("/pay/link/{}", session.id()),
    }
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
    /// Unit price, formatted.
    pub unit_price: String,
    /// Quantity × unit price, formatted.
    pub line_total: String,
}

/// A line of the charges table.
#[derive(Debug, Serialize)]
pub struct ChargeView {
    /// Name.
    pub name: String,
    /// Amount, formatted.
    pub amount: String,
}

/// When a payment link stops being payable.
#[derive(Debug, Serialize)]
pub struct ExpiryView {
    /// RFC 3339, for `<time datetime>`.
    pub iso: String,
    /// In words, in UTC, in the page's language.
    pub text: String,
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
    /// Total, formatted with its currency.
    pub total: String,
    /// Currency code.
    pub currency: &'static str,
    /// The merchant's reference.
    pub reference: String,
    /// A payment link's expiry.
    pub expires: Option<ExpiryView>,
}

impl PurchaseView {
    /// The purchase of `session` sold by `merchant`, in `lang`.
    pub fn of(session: &PaymentSession, merchant: &str, lang: Lang) -> Self {
        let currency = session.amount().currency();
        let text = |t: Option<&str>| t.map(str::to_owned).unwrap_or_default();
        PurchaseView {
            merchant: merchant.to_owned(),
            description: session
                .description()
                .as_ref()
                .map(|d| d.as_str().to_owned()),
            items: session
                .items()
                .iter()
                .map(|i| ItemView {
                    code: text(i.code.as_ref().map(|c| c.as_str())),
                    description: text(i.description.as_ref().map(|d| d.as_str())),
                    quantity: i.quantity,
                    unit_price: money::format(i.amount.value(), currency, lang),
                    line_total: money::format(
                        i.amount.value() * Decimal::from(i.quantity),
                        currency,
                        lang,
                    ),
                })
                .collect(),
            charges: session
                .charges()
                .iter()
                .map(|c| ChargeView {
                    name: text(c.name.as_ref().map(|n| n.as_str())),
                    amount: money::format(c.amount.value(), currency, lang),
                })
                .collect(),
            total: money::format(session.amount().value(), currency, lang),
            currency: currency.code(),
            reference: session.reference().to_string(),
            expires: matches!(session.kind(), SessionKind::PaymentLink).then(|| ExpiryView {
                iso: session
                    .expires_at()
                    .format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default(),
                text: money::utc_date_time(session.expires_at(), lang),
            }),
        }
    }
}

/// One line of the error summary: the field's label and message, linking to the field.
#[derive(Debug, Serialize)]
pub struct SummaryItem {
    /// The input's id (the link's target).
    pub id: &'static str,
    /// The field's label.
    pub label: &'static str,
    /// What is wrong.
    pub message: &'static str,
}

/// The card form page.
#[derive(Debug, Serialize)]
pub struct PayView {
    /// The frame.
    #[serde(flatten)]
    pub frame: Frame,
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
    /// The same messages with their fields' labels, in the form's order, for the summary.
    pub summary: Vec<SummaryItem>,
    /// A message above the form (processor errors).
    pub banner: Option<Banner>,
    /// The cardholder name to keep.
    pub holder: String,
    /// The expiry to keep (`MM/YY`), when it was valid; never the number or the code.
    pub expiry: String,
    /// The card-testing guard's proof-of-work challenge, when the post must carry one.
    pub proof: Option<crate::card_guard::Challenge>,
    /// Before the title: what went wrong (errors, a declined card), when something did.
    pub title_prefix: Option<&'static str>,
}

/// A message above the card form, with the service code it stands for.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Banner {
    /// The SVC code (`data-code` of the banner), for support and tests.
    pub code: &'static str,
    /// A heading naming what the payer must do, when the banner asks for something.
    pub heading: Option<&'static str>,
    /// The message, in the page's language.
    pub text: &'static str,
}

/// A result or session-state page.
#[derive(Debug, Serialize)]
pub struct ResultView {
    /// The frame.
    #[serde(flatten)]
    pub frame: Frame,
    /// The purchase.
    pub purchase: PurchaseView,
    /// State name (`data-state`).
    pub state: &'static str,
    /// The heading and title: the outcome in words.
    pub heading: &'static str,
    /// What happened.
    pub message: &'static str,
    /// What the payer can do now.
    pub next_step: Option<&'static str>,
    /// Where to continue a pending challenge.
    pub challenge_link: Option<String>,
    /// Whether the outcome is good news.
    pub success: bool,
    /// Whether the page reloads itself (the processor is still confirming): the script
    /// reloads it; without the script a "check again" link does.
    pub refresh: bool,
    /// This page in its language (the "check again" link).
    pub self_href: String,
    /// The receipt of an approved payment.
    pub receipt: Option<ReceiptView>,
}

/// The receipt on an approved payment's page: what a payer keeps and quotes. The card is its
/// brand and last four digits, never more.
#[derive(Debug, Serialize)]
pub struct ReceiptView {
    /// When the card was paid with, RFC 3339 (`<time datetime>`).
    pub paid_at_iso: String,
    /// The same in words, in UTC, in the page's language.
    pub paid_at: String,
    /// The amount with its currency's symbol and, when the symbol does not name it, its
    /// ISO code (`$42.50 USD`).
    pub amount: String,
    /// The card's brand (or "card" in the page's language).
    pub card_brand: &'static str,
    /// The card's last four digits.
    pub card_last4: String,
    /// `internalTransactionReferenceNumber`.
    pub internal_reference: String,
    /// `checkoutSessionId`.
    pub session_id: String,
}

impl ReceiptView {
    /// The receipt of `session` in `lang` when it was paid (Successful or
    /// ApprovedTransaction) with a card whose attempt it holds; `None` otherwise.
    pub fn of(session: &PaymentSession, total: &str, lang: Lang) -> Option<Self> {
        use checkout_domain::session::{AttemptState, SessionState};
        if !matches!(
            session.state(),
            SessionState::Successful | SessionState::ApprovedTransaction
        ) {
            return None;
        }
        let paid = session
            .attempts()
            .iter()
            .rev()
            .find(|a| matches!(a.state, AttemptState::Succeeded | AttemptState::Authorized))?;
        let code = session.amount().currency().code();
        Some(ReceiptView {
            paid_at_iso: paid
                .at
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            paid_at: money::utc_date_time(paid.at, lang),
            amount: if total.contains(code) {
                total.to_owned()
            } else {
                format!("{total} {code}")
            },
            card_brand: paid
                .brand
                .display_name()
                .unwrap_or(lang.texts().receipt_card),
            card_last4: paid.last4.clone(),
            internal_reference: session.internal_reference().to_string(),
            session_id: session.id().to_string(),
        })
    }
}

/// The accessibility statement.
#[derive(Debug, Serialize)]
pub struct StatementView {
    /// The frame.
    #[serde(flatten)]
    pub frame: Frame,
}

/// The sandbox challenge page.
#[derive(Debug, Serialize)]
pub struct ChallengeView {
    /// The frame.
    #[serde(flatten)]
    pub frame: Frame,
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
    /// The frame.
    #[serde(flatten)]
    pub frame: Frame,
    /// The heading and title (what happened, or what the payer must do).
    pub title: &'static str,
    /// `data-code`: the SVC code or a short name.
    pub code: &'static str,
    /// What happened.
    pub message: &'static str,
    /// What the payer can do now.
    pub next_step: Option<&'static str>,
    /// The merchant, when the session is known.
    pub merchant: Option<String>,
    /// The merchant's back (else fail) URL, for an integrated checkout.
    pub return_url: Option<String>,
    /// The session's page, to open again (after an expired form).
    pub reopen_url: Option<String>,
    /// The request's instance id, for support.
    pub instance: String,
}

impl ErrorView {
    /// An error page in `lang` whose language switch leads to `base`.
    pub fn new(lang: Lang, base: &str, code: &'static str, message: &'static str) -> Self {
        ErrorView {
            frame: Frame::new(lang, base),
            title: lang.texts().error_title,
            code,
            message,
            next_step: None,
            merchant: None,
            return_url: None,
            reopen_url: None,
            instance: crate::request_context::instance_id(),
        }
    }
}

/// The Content-Security-Policy of a page: nothing but our own stylesheet, favicon and the one
/// script whose SHA-384 the policy names (no inline script, no other script), no framing, and forms that may post only to us and be redirected only to `redirect_origins`
/// (Chrome applies `form-action` to the redirects that follow a form post).
pub fn content_security_policy(redirect_origins: &[String]) -> String {
    let mut form_action = String::from("'self'");
    for origin in redirect_origins {
        form_action.push(' ');
        form_action.push_str(origin);
    }
    format!(
        "default-src 'none'; script-src '{}'; style-src 'self'; img-src 'self'; \
         form-action {form_action}; frame-ancestors 'none'; base-uri 'none'",
        script_integrity()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The PCI DSS 6.4.3 inventory in `docs/` lists the hash of the script the server serves.
    #[test]
    fn the_script_inventory_lists_the_served_scripts_hash() {
        let doc = include_str!("../../../../docs/payment-page-scripts.md");
        let listed: Vec<&str> = doc
            .split('`')
            .filter(|part| part.starts_with("sha384-") && part.len() > 20)
            .collect();
        assert_eq!(
            listed,
            vec![script_integrity()],
            "docs/payment-page-scripts.md must list the served script's SHA-384"
        );
        let csp = content_security_policy(&[]);
        assert!(csp.contains(&format!("script-src '{}';", script_integrity())));
        assert!(!csp.contains("unsafe-inline"));
    }
}
