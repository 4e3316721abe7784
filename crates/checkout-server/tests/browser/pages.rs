//! The payer's pages as issue 17 asks for them: every page state at desktop and phone sizes,
//! in Spanish and English, with the pages' script on and off, each scanned by axe-core and
//! saved as a screenshot; the script's own behaviour; reloads and double clicks.
//!
//! The matrix is short by default (three of the eight combinations of size, language and
//! script, chosen so that each value of each axis appears); `PAGES_FULL_MATRIX=1` walks all
//! eight.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::flows::{Flow, APPROVED_CARD, BAD_LUHN_CARD, CHALLENGE_CARD, DECLINED_CARD};

/// The sandbox card whose hand-over to the processor fails (SVC_003, nothing charged).
const UNREACHABLE_CARD: &str = "4000000000000119";
use crate::support::webdriver::Browser;
use crate::support::TestServer;

/// One way a payer meets the pages.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    /// A phone (412 × 915) rather than a desktop (1280 × 900).
    pub phone: bool,
    /// `es` or `en`.
    pub lang: &'static str,
    /// The pages' script runs.
    pub script: bool,
}

impl Mode {
    /// A short name for screenshots.
    pub fn name(&self) -> String {
        format!(
            "{}-{}-{}",
            if self.phone { "phone" } else { "desktop" },
            self.lang,
            if self.script { "js" } else { "nojs" }
        )
    }
}

/// The combinations to walk: all eight with `PAGES_FULL_MATRIX=1`, else three covering each
/// value of each axis.
pub fn modes() -> Vec<Mode> {
    let full = std::env::var("PAGES_FULL_MATRIX").is_ok_and(|v| v == "1");
    if full {
        let mut all = Vec::new();
        for phone in [false, true] {
            for lang in ["es", "en"] {
                for script in [true, false] {
                    all.push(Mode {
                        phone,
                        lang,
                        script,
                    });
                }
            }
        }
        all
    } else {
        vec![
            Mode {
                phone: false,
                lang: "es",
                script: true,
            },
            Mode {
                phone: true,
                lang: "en",
                script: false,
            },
            Mode {
                phone: true,
                lang: "es",
                script: true,
            },
        ]
    }
}

/// The text of the file whose path `scripts/<script>` prints after installing it from npm.
pub fn npm_file(script: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(root.join("scripts").join(script))
        .output()
        .unwrap_or_else(|e| panic!("run scripts/{script} (needs npm): {e}"));
    assert!(
        output.status.success(),
        "scripts/{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// The text of axe-core's `axe.min.js`, installed from npm by `scripts/axe.sh`.
pub fn axe_source() -> &'static str {
    static AXE: OnceLock<String> = OnceLock::new();
    AXE.get_or_init(|| npm_file("axe.sh"))
}

/// How many card posts reached the server so far (its request log).
pub fn card_posts(server: &TestServer) -> usize {
    server
        .log()
        .lines()
        .filter(|l| {
            l.contains("\"request served\"")
                && l.contains("\"method\":\"POST\"")
                && l.contains("\"path\":\"/pay/process-payment\"")
        })
        .count()
}

/// The walk through every page state in one mode.
pub struct Pages<'a> {
    flow: Flow<'a>,
    server: &'a TestServer,
    browser: &'a Browser,
    merchant: &'a str,
    mode: Mode,
}

impl<'a> Pages<'a> {
    /// The walk in `mode`.
    pub async fn new(
        server: &'a TestServer,
        merchant: &'a str,
        browser: &'a Browser,
        mode: Mode,
    ) -> Pages<'a> {
        if mode.phone {
            browser.set_size(412, 915).await;
        } else {
            browser.set_size(1280, 900).await;
        }
        browser.set_scripts_enabled(mode.script).await;
        Pages {
            flow: Flow::new(server, merchant, browser),
            server,
            browser,
            merchant,
            mode,
        }
    }

    /// Screenshot and axe scan of the page shown now, named `state`; the page's language and
    /// its language switch are checked too.
    pub async fn check(&self, state: &str) {
        let name = format!("pages-{}-{state}", self.mode.name());
        self.browser.screenshot(&name).await;
        // axe's promises need script execution: a page loaded without its script keeps the
        // DOM it was served with while axe runs, and scripts go off again before the next page.
        if !self.mode.script {
            self.browser.set_scripts_enabled(true).await;
        }
        let violations = self.browser.axe(axe_source()).await;
        if !self.mode.script {
            self.browser.set_scripts_enabled(false).await;
        }
        assert!(
            violations.is_empty(),
            "axe on {name} at {}: {}",
            self.browser.url().await,
            serde_json::to_string_pretty(&violations).unwrap_or_default()
        );
        let lang = self.browser.attribute("html", "lang").await;
        assert_eq!(lang.as_deref(), Some(self.mode.lang), "{name}");
        let statement = self.browser.attribute("#accessibility-link", "href").await;
        assert!(
            statement
                .is_some_and(|h| h.ends_with(&format!("/pay/accessibility?lg={}", self.mode.lang))),
            "{name}: the accessibility statement is linked"
        );
        let other = if self.mode.lang == "es" { "en" } else { "es" };
        assert_eq!(
            self.browser
                .attribute("#lang-switch", "hreflang")
                .await
                .as_deref(),
            Some(other),
            "{name}: a language switch"
        );
    }

    fn lg(&self, url: &str) -> String {
        format!("{url}?lg={}", self.mode.lang)
    }

    /// Every state: form, errors, approved, declined, processor retry, challenge,
    /// processing, cancelled, expired (link and checkout), unknown, form expired.
    pub async fn walk(&self) {
        let b = self.browser;
        let es = self.mode.lang == "es";

        // The link's form: amounts, line totals, expiry.
        let (id, link) = self.payment_link_with_items("FORM").await;
        b.goto(&self.lg(&link)).await;
        let total = b.text("#total").await;
        let expected = if es { "15.000,00 ₡" } else { "₡15,000.00" };
        assert_eq!(total.replace('\u{a0}', " "), expected);
        let line = b.text("#items .line-total").await.replace('\u{a0}', " ");
        assert_eq!(line, if es { "10.000,00 ₡" } else { "₡10,000.00" });
        let expires = b.text("#expires").await;
        assert!(
            expires.contains("UTC") && expires.contains(if es { " de " } else { "20" }),
            "{expires}"
        );
        self.check("form").await;

        // Errors: the summary names and links each field and takes the focus; the name and a
        // valid expiry stay; the number and the code are never shown again.
        b.type_into("#cardholderName", "Ada Lovelace").await;
        b.type_into("#cardNumber", BAD_LUHN_CARD).await;
        b.type_into("#cardExpiry", "1130").await;
        b.type_into("#cardCvv", "12").await;
        let posts = card_posts(self.server);
        if self.mode.script {
            b.click("#pay").await;
            b.find("#error-summary a[href='#cardNumber']").await;
            assert_eq!(card_posts(self.server), posts, "the script posts nothing");
        } else {
            b.click_and_settle("#pay").await;
            assert_eq!(card_posts(self.server), posts + 1);
            assert!(!b.source().await.contains(BAD_LUHN_CARD));
            assert_eq!(b.value("#cardExpiry").await, "11/30");
            b.find("#retype-note").await;
        }
        assert_eq!(b.focused_id().await, "error-summary");
        let summary = b.text("#error-summary").await;
        let label = if es {
            "Número de tarjeta"
        } else {
            "Card number"
        };
        assert!(
            summary.contains(label),
            "the summary names the field: {summary}"
        );
        for field in ["cardNumber", "cardCvv"] {
            b.find(&format!("#error-summary a[href='#{field}']")).await;
        }
        assert_eq!(b.value("#cardholderName").await, "Ada Lovelace");
        self.check("errors").await;

        // Approved: a GET page after a 303; the form's post is not the page. Its heading and
        // title name the outcome.
        self.flow.pay_with(APPROVED_CARD).await;
        b.find("#result").await;
        assert!(b.url().await.contains(&format!("/pay/link/{id}")));
        let approved = if es {
            "Pago aprobado"
        } else {
            "Payment approved"
        };
        assert_eq!(b.text("#outcome").await, approved);
        assert!(b.title_contains(approved).await);
        b.find("#next-step").await;
        self.check("approved").await;

        // Declined (a link: stays on the service, says what to do).
        let (_, link) = self.flow.payment_link("DECLINED", self.mode.lang).await;
        b.goto(&link).await;
        self.flow.pay_with(DECLINED_CARD).await;
        assert_eq!(
            b.attribute("#result", "data-state").await.as_deref(),
            Some("Failed")
        );
        b.find("#next-step").await;
        self.check("declined").await;

        // The processor could not be reached (SVC_003): the form again with a banner.
        let (_, link) = self.flow.payment_link("RETRY", self.mode.lang).await;
        b.goto(&link).await;
        self.flow.pay_with(UNREACHABLE_CARD).await;
        assert_eq!(
            b.attribute("#banner", "data-code").await.as_deref(),
            Some("SVC_003")
        );
        self.check("processor-retry").await;

        // The sandbox's 3DS challenge page.
        let (_, link) = self.flow.payment_link("CHALLENGE", self.mode.lang).await;
        b.goto(&link).await;
        self.flow.pay_with(CHALLENGE_CARD).await;
        b.find("#challenge-form").await;
        self.check("challenge").await;

        // Processing: the page refreshes itself (script) or offers "check again".
        let (id, link) = self.flow.payment_link("PROCESSING", self.mode.lang).await;
        set_state(self.server, &id, 4).await;
        b.goto(&link).await;
        assert_eq!(
            b.attribute("#result", "data-state").await.as_deref(),
            Some("Processing")
        );
        b.find("#check-again").await;
        self.check("processing").await;

        // Cancelled by the merchant.
        let (id, link) = self.flow.payment_link("CANCELLED", self.mode.lang).await;
        let token = self.server.token().await;
        let reply = self
            .server
            .post(
                &format!("/pay/api/payment/{id}/cancel"),
                Some(&token),
                &serde_json::json!({}),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        b.goto(&link).await;
        assert_eq!(
            b.attribute("#result", "data-state").await.as_deref(),
            Some("Cancelled")
        );
        self.check("cancelled").await;

        // An expired link names its merchant.
        let (id, link) = self.flow.payment_link("EXPIRED", self.mode.lang).await;
        self.flow.expire(&id).await;
        b.goto(&link).await;
        assert_eq!(
            b.attribute("#error", "data-code").await.as_deref(),
            Some("SVC_002")
        );
        b.find("#merchant-name").await;
        b.find("#next-step").await;
        self.check("expired-link").await;

        // An expired integrated checkout offers the merchant's back URL.
        let (id, _) = self.flow.start_payment("EXPIRED-CHECKOUT").await;
        self.flow.expire(&id).await;
        b.goto(&self.lg(&format!("{}/pay/checkout-payment/{id}", self.server.base)))
            .await;
        let back = b.attribute("#return", "href").await.unwrap_or_default();
        assert!(
            back.starts_with(&format!("{}/cart?", self.merchant)),
            "{back}"
        );
        self.check("expired-checkout").await;

        // An unknown session.
        b.goto(&self.lg(&format!(
            "{}/pay/link/00000000-0000-4000-8000-000000000000",
            self.server.base
        )))
        .await;
        assert_eq!(
            b.attribute("#error", "data-code").await.as_deref(),
            Some("SVC_002")
        );
        assert!(b.try_find("#merchant-name").await.is_none());
        self.check("unknown").await;

        // A post whose token cannot be used: the form again, its heading asking to type the
        // card again.
        let (id, link) = self.flow.payment_link("FORM-EXPIRED", self.mode.lang).await;
        b.goto(&link).await;
        b.execute(
            "document.querySelector('input[name=csrfToken]').value = 'stale'",
            vec![],
        )
        .await;
        self.flow.pay_with(APPROVED_CARD).await;
        assert_eq!(
            b.attribute("#banner", "data-code").await.as_deref(),
            Some("CSRF")
        );
        let heading = b.text("#banner-heading").await;
        assert!(
            heading.contains(if es {
                "Vuelva a escribir"
            } else {
                "enter your card"
            }),
            "{heading}"
        );
        b.find("#card-form").await;
        assert_eq!(self.flow.attempts(&id).await, 0);
        self.check("form-retype").await;

        // The accessibility statement, from the page's own link.
        let form_url = b.url().await;
        b.click_and_settle("#accessibility-link").await;
        b.find("#statement").await;
        self.check("accessibility").await;
        b.goto(&form_url).await;

        // The payment being sent (the script): the live region speaks, axe finds nothing.
        if self.mode.script {
            b.type_into("#cardholderName", "Ada Lovelace").await;
            b.type_into("#cardNumber", APPROVED_CARD).await;
            b.type_into("#cardExpiry", crate::flows::EXPIRY).await;
            b.type_into("#cardCvv", crate::flows::CVV).await;
            b.execute(
                "document.getElementById('card-form').addEventListener('submit', \
                   e => e.preventDefault());",
                vec![],
            )
            .await;
            b.click("#pay").await;
            assert!(!b.text("#pay-status").await.is_empty());
            assert!(b.hidden("#banner").await, "the old notice is hidden");
            self.check("sending").await;
        }
    }

    /// A link of 15,000.00 CRC with two lines (2 × 5,000.00 and 1 × 5,000.00).
    async fn payment_link_with_items(&self, label: &str) -> (String, String) {
        let items = serde_json::json!([
            { "itemCode": "A-1", "quantity": 2, "description": "Taza", "amount": 5000,
              "currencyCode": "CRC" },
            { "itemCode": "B-2", "quantity": 1, "description": "Plato", "amount": 5000,
              "currencyCode": "CRC" }
        ]);
        self.flow.payment_link_with(label, "es", Some(items)).await
    }
}

/// Writes a session's state directly (a payment the processor has not answered yet).
pub async fn set_state(server: &TestServer, id: &str, state: i16) {
    use diesel_async::{AsyncConnection, RunQueryDsl};
    let mut conn = diesel_async::AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    diesel::sql_query("UPDATE payment_sessions SET state = $1 WHERE id = $2")
        .bind::<diesel::sql_types::SmallInt, _>(state)
        .bind::<diesel::sql_types::Uuid, _>(uuid::Uuid::parse_str(id).expect("uuid"))
        .execute(&mut conn)
        .await
        .expect("set the state");
}

/// The SHA-384 integrity value of `bytes`.
pub fn sha384(bytes: &[u8]) -> String {
    use base64::Engine;
    let digest = ring::digest::digest(&ring::digest::SHA384, bytes);
    format!(
        "sha384-{}",
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
    )
}
