//! The payer journeys, each a step-by-step walk through the pages with the checks a payer and
//! a merchant would make.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::support::payer::{self, CardForm};
use crate::support::webdriver::Browser;
use crate::support::TestServer;

/// Approved (Stripe's test-card convention).
pub const APPROVED_CARD: &str = "4242424242424242";
/// Declined.
pub const DECLINED_CARD: &str = "4000000000000002";
/// Needs a 3DS challenge.
pub const CHALLENGE_CARD: &str = "4000002760003184";
/// Needs a 3DS challenge too.
pub const CHALLENGE_CARD_2: &str = "4000000000003220";
/// Fails the Luhn check.
pub const BAD_LUHN_CARD: &str = "4242424242424241";
/// Every card number a flow types.
pub const ALL_CARDS: [&str; 5] = [
    APPROVED_CARD,
    DECLINED_CARD,
    CHALLENGE_CARD,
    CHALLENGE_CARD_2,
    BAD_LUHN_CARD,
];
/// The expiry every flow types.
pub const EXPIRY: &str = "11/34";
/// The CVV every flow types.
pub const CVV: &str = "918";

/// Where screenshots go.
pub fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("screenshots")
}

/// One server, merchant site and browser, and the journeys over them.
pub struct Flow<'a> {
    server: &'a TestServer,
    merchant: &'a str,
    browser: &'a Browser,
}

/// The query parameters of a URL.
fn query_of(url: &str) -> Vec<(String, String)> {
    url::Url::parse(url)
        .expect("a URL")
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param<'q>(query: &'q [(String, String)], name: &str) -> Option<&'q str> {
    query
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

impl<'a> Flow<'a> {
    /// The journeys over these parts.
    pub fn new(server: &'a TestServer, merchant: &'a str, browser: &'a Browser) -> Self {
        Flow {
            server,
            merchant,
            browser,
        }
    }

    async fn token(&self) -> String {
        self.server.token().await
    }

    /// Creates an integrated checkout session; returns (id, reference).
    pub async fn start_payment(&self, label: &str) -> (String, String) {
        let reference = format!("{label}-{}", &crate::support::server::uuid_like()[..8]);
        let body = json!({
            "callbackSuccessUrl": format!("{}/ok?order={reference}", self.merchant),
            "callbackFailUrl": format!("{}/fail", self.merchant),
            "callbackBackUrl": format!("{}/cart", self.merchant),
            "totalTransactionAmount": 42.50,
            "currencyCode": "USD",
            "transactionReferenceNumber": reference,
            "generalPurchaseDescription": "Two blue mugs",
            "culture": "en",
            "items": [{ "itemCode": "MUG-1", "quantity": 2, "description": "Blue mug",
                        "amount": 18.00, "currencyCode": "USD" }],
            "additionalCharges": [{ "chargeName": "Shipping", "chargeAmount": 6.50,
                                    "chargeCurrencyCode": "USD" }]
        });
        let token = self.token().await;
        let reply = self
            .server
            .post("/pay/api/start-payment", Some(&token), &body)
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        (reply.str("checkoutSessionId").to_owned(), reference)
    }

    /// Creates a payment link in `culture`; returns (id, link).
    pub async fn payment_link(&self, label: &str, culture: &str) -> (String, String) {
        self.payment_link_with(label, culture, None).await
    }

    /// Creates a payment link of 15,000.00 CRC in `culture` with `items`; returns (id, link).
    pub async fn payment_link_with(
        &self,
        label: &str,
        culture: &str,
        items: Option<Value>,
    ) -> (String, String) {
        let reference = format!("{label}-{}", &crate::support::server::uuid_like()[..8]);
        let mut body = json!({
            "totalTransactionAmount": 15000,
            "currencyCode": "CRC",
            "transactionReferenceNumber": reference,
            "generalPurchaseDescription": "Factura 77",
            "userEmail": "payer@example.com",
            "culture": culture
        });
        if let Some(items) = items {
            body["items"] = items;
        }
        let token = self.token().await;
        let reply = self
            .server
            .post("/pay/api/generate-payment-link", Some(&token), &body)
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        (
            reply.str("checkoutSessionId").to_owned(),
            reply.str("paymentLink").to_owned(),
        )
    }

    /// The status record of a session.
    pub async fn status(&self, id: &str) -> Value {
        let token = self.token().await;
        let reply = self
            .server
            .get(&format!("/pay/api/payment/{id}"), Some(&token))
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body
    }

    /// How many card submissions reached the processor for a session.
    pub async fn attempts(&self, id: &str) -> i64 {
        payer::attempts(self.server, id).await
    }

    /// Moves a session's expiry into the past.
    pub async fn expire(&self, id: &str) {
        self.server.expire_session(id).await;
    }

    /// Fills the card form, submits it, and waits for the page the post leads to.
    pub async fn pay_with(&self, card: &str) {
        let b = self.browser;
        b.type_into("#cardholderName", "Ada Lovelace").await;
        b.type_into("#cardNumber", card).await;
        b.type_into("#cardExpiry", EXPIRY).await;
        b.type_into("#cardCvv", CVV).await;
        b.click_and_settle("#pay").await;
    }

    pub async fn open_checkout(&self, id: &str) {
        self.browser
            .goto(&format!("{}/pay/checkout-payment/{id}", self.server.base))
            .await;
        let total = self.browser.text("#total").await;
        assert!(total.contains("42.50"), "the total is shown: {total}");
        let source = self.browser.source().await;
        for shown in ["Two blue mugs", "Blue mug", "Shipping", "Merchant"] {
            assert!(source.contains(shown), "the page shows {shown}");
        }
    }

    /// Asserts the browser is on the merchant's `path` with the session's identifiers.
    async fn assert_landed(&self, path: &str, id: &str, reference: &str, state: &str) {
        let url = self
            .browser
            .wait_for_url(&format!("{}{path}", self.merchant))
            .await;
        self.browser.find("#merchant").await;
        let query = query_of(&url);
        assert_eq!(param(&query, "checkoutSessionId"), Some(id), "{url}");
        assert_eq!(
            param(&query, "transactionReferenceNumber"),
            Some(reference),
            "{url}"
        );
        assert_eq!(param(&query, "state"), Some(state), "{url}");
    }

    /// 4242…: success URL, Successful.
    pub async fn approved_checkout(&self, shot: &str) {
        let (id, reference) = self.start_payment("APPROVED").await;
        self.open_checkout(&id).await;
        self.browser.screenshot(&format!("{shot}-form")).await;
        self.pay_with(APPROVED_CARD).await;
        let url = self
            .browser
            .wait_for_url(&format!("{}/ok", self.merchant))
            .await;
        assert_eq!(
            param(&query_of(&url), "order"),
            Some(reference.as_str()),
            "the merchant's own query is kept"
        );
        let status = self.status(&id).await;
        let state = status["state"].as_str().expect("state").to_owned();
        assert!(
            state == "Successful" || state == "ApprovedTransaction",
            "{status}"
        );
        self.assert_landed("/ok", &id, &reference, &state).await;
        self.browser.screenshot(shot).await;
        assert_eq!(self.attempts(&id).await, 1);
    }

    /// 4000…0002: fail URL, Failed (2).
    pub async fn declined_checkout(&self, shot: &str) {
        let (id, reference) = self.start_payment("DECLINED").await;
        self.open_checkout(&id).await;
        self.pay_with(DECLINED_CARD).await;
        self.assert_landed("/fail", &id, &reference, "Failed").await;
        self.browser.screenshot(shot).await;
        let status = self.status(&id).await;
        assert_eq!(status["state"], "Failed");
        assert_eq!(status["stateCode"], 2);
    }

    /// A 3DS card: challenge page, pass, success URL.
    pub async fn challenge_checkout(&self, shot: &str, card: &str) {
        let (id, reference) = self.start_payment("THREEDS").await;
        self.open_checkout(&id).await;
        self.pay_with(card).await;
        self.browser.find("#challenge-form").await;
        self.browser.screenshot(&format!("{shot}-page")).await;
        assert_eq!(self.status(&id).await["state"], "ChallengeRequired");
        self.browser.click_and_settle("#challenge-pass").await;
        self.browser
            .wait_for_url(&format!("{}/ok", self.merchant))
            .await;
        let status = self.status(&id).await;
        let state = status["state"].as_str().expect("state").to_owned();
        self.assert_landed("/ok", &id, &reference, &state).await;
        assert!(
            state == "Successful" || state == "ApprovedTransaction",
            "{status}"
        );
        self.browser.screenshot(shot).await;
    }

    /// A 3DS card whose challenge fails: fail URL, Failed.
    pub async fn failed_challenge_checkout(&self, shot: &str) {
        let (id, reference) = self.start_payment("THREEDS-FAIL").await;
        self.open_checkout(&id).await;
        self.pay_with(CHALLENGE_CARD).await;
        self.browser.click_and_settle("#challenge-fail").await;
        self.assert_landed("/fail", &id, &reference, "Failed").await;
        self.browser.screenshot(shot).await;
        assert_eq!(self.status(&id).await["stateCode"], 2);
    }

    /// Cancel: back URL, Cancelled, nothing charged.
    pub async fn cancelled_checkout(&self, shot: &str) {
        let (id, reference) = self.start_payment("CANCEL").await;
        self.open_checkout(&id).await;
        self.browser.click_and_settle("#cancel").await;
        self.assert_landed("/cart", &id, &reference, "Cancelled")
            .await;
        self.browser.screenshot(shot).await;
        assert_eq!(self.status(&id).await["state"], "Cancelled");
        assert_eq!(self.attempts(&id).await, 0);
    }

    /// A link in `culture`, opened with `?lg=` when given: the page's language, payment, a
    /// result page on the service (no redirect).
    pub async fn link_payment(&self, shot: &str, culture: &str, lg: Option<&str>) {
        let (id, link) = self.payment_link("LINK", culture).await;
        let url = match lg {
            Some(lg) => format!("{link}?lg={lg}"),
            None => link.clone(),
        };
        self.browser.goto(&url).await;
        let language = lg.unwrap_or(culture);
        assert_eq!(
            self.browser.attribute("html", "lang").await.as_deref(),
            Some(language)
        );
        let source = self.browser.source().await;
        assert!(source.contains("Factura 77"));
        assert!(
            self.browser.try_find("#cancel").await.is_none(),
            "a link has no cancel"
        );
        let button = self.browser.text("#pay").await;
        let expected_word = if language == "es" { "Pagar" } else { "Pay" };
        assert!(
            button.contains(expected_word),
            "the pay button is in {language}: {button}"
        );
        self.browser.screenshot(&format!("{shot}-form")).await;
        self.pay_with(APPROVED_CARD).await;
        self.browser.find("#result").await;
        let state = self
            .browser
            .attribute("#result", "data-state")
            .await
            .expect("data-state");
        assert!(state == "Successful" || state == "ApprovedTransaction");
        assert!(
            self.browser.url().await.starts_with(&self.server.base),
            "a link payment stays on the service"
        );
        assert_eq!(
            self.browser.attribute("html", "lang").await.as_deref(),
            Some(language),
            "the result page keeps the language"
        );
        self.browser.screenshot(shot).await;
        assert_eq!(self.status(&id).await["state"], state);
    }

    /// With two cards allowed (`maxCardAttempts` 2): a declined card on a Spanish link
    /// shows the form again saying the card was declined, and the session stays Pending;
    /// the same on an English checkout page, whose second card then pays.
    pub async fn another_card_after_a_decline(&self, shot: &str) {
        let b = self.browser;
        self.server
            .set_max_card_attempts(&self.server.terminal, 2)
            .await;

        let (link_id, link) = self.payment_link("RETRY-LINK", "es").await;
        b.goto(&link).await;
        self.pay_with(DECLINED_CARD).await;
        assert_eq!(
            b.attribute("#banner", "data-code").await.as_deref(),
            Some("SVC_006")
        );
        let banner = b.text("#banner").await;
        assert!(
            banner.contains("rechazada") && banner.contains("otra tarjeta"),
            "{banner}"
        );
        b.find("#card-form").await;
        b.screenshot(&format!("{shot}-link-es")).await;
        let status = self.status(&link_id).await;
        assert_eq!(status["state"], "Pending", "{status}");
        assert_eq!(status["attempts"][0]["outcome"], "Declined", "{status}");

        let (id, reference) = self.start_payment("RETRY").await;
        self.open_checkout(&id).await;
        self.pay_with(DECLINED_CARD).await;
        let banner = b.text("#banner").await;
        assert!(
            banner.contains("declined") && banner.contains("another card"),
            "{banner}"
        );
        // A 303 to the checkout page's GET: a reload posts nothing.
        let url = b.url().await;
        assert!(
            url.starts_with(&format!("{}/pay/checkout-payment/{id}?", self.server.base)),
            "{url}"
        );
        b.screenshot(&format!("{shot}-checkout-en")).await;
        self.pay_with(APPROVED_CARD).await;
        let status = self.status(&id).await;
        let state = status["state"].as_str().expect("state").to_owned();
        self.assert_landed("/ok", &id, &reference, &state).await;
        let outcomes: Vec<&str> = status["attempts"]
            .as_array()
            .expect("attempts")
            .iter()
            .map(|a| a["outcome"].as_str().expect("outcome"))
            .collect();
        assert_eq!(outcomes, ["Declined", state.as_str()], "{status}");

        // A failed 3DS challenge is a decline too: the form again (a 303 to its GET page),
        // saying so.
        let (id, _) = self.start_payment("RETRY-3DS").await;
        self.open_checkout(&id).await;
        self.pay_with(CHALLENGE_CARD).await;
        b.click_and_settle("#challenge-fail").await;
        let banner = b.text("#banner").await;
        assert!(
            banner.contains("declined") && banner.contains("another card"),
            "{banner}"
        );
        b.find("#card-form").await;
        b.screenshot(&format!("{shot}-challenge-failed")).await;
        assert_eq!(self.status(&id).await["state"], "Pending");
    }

    /// An expired link: error page, no form.
    pub async fn expired_link(&self, shot: &str) {
        let (id, link) = self.payment_link("EXPIRED", "en").await;
        self.expire(&id).await;
        self.browser.goto(&link).await;
        assert_eq!(
            self.browser
                .attribute("#error", "data-code")
                .await
                .as_deref(),
            Some("SVC_002")
        );
        assert!(self.browser.try_find("#card-form").await.is_none());
        self.browser.screenshot(shot).await;
    }

    /// A link opened in time and submitted after its expiry: refused, nothing charged.
    pub async fn link_expiring_while_open(&self, shot: &str) {
        let (id, link) = self.payment_link("EXPIRING", "es").await;
        self.browser.goto(&link).await;
        self.browser.find("#card-form").await;
        self.expire(&id).await;
        self.pay_with(APPROVED_CARD).await;
        assert_eq!(
            self.browser
                .attribute("#error", "data-code")
                .await
                .as_deref(),
            Some("SVC_002")
        );
        self.browser.screenshot(shot).await;
        assert_eq!(self.attempts(&id).await, 0, "nothing reached the processor");
        assert_ne!(self.status(&id).await["state"], "Successful");
    }

    /// Bad Luhn, past expiry, short CVV: messages beside the fields, nothing charged, and the
    /// card number is not echoed back into the page.
    pub async fn invalid_fields(&self, shot: &str) {
        let (id, _) = self.start_payment("INVALID").await;
        // The server's own checks: the script would catch these before posting.
        self.browser.set_scripts_enabled(false).await;
        self.open_checkout(&id).await;
        let b = self.browser;
        b.type_into("#cardholderName", "Ada Lovelace").await;
        b.type_into("#cardNumber", BAD_LUHN_CARD).await;
        b.type_into("#cardExpiry", "01/20").await;
        b.type_into("#cardCvv", "12").await;
        b.click_and_settle("#pay").await;
        for field in ["cardNumber", "cardExpiry", "cardCvv"] {
            let message = b.text(&format!("#{field}-error")).await;
            assert!(!message.trim().is_empty(), "{field} has a message");
            assert_eq!(
                b.attribute(&format!("#{field}"), "aria-invalid")
                    .await
                    .as_deref(),
                Some("true")
            );
            let described = b
                .attribute(&format!("#{field}"), "aria-describedby")
                .await
                .unwrap_or_default();
            assert!(described.contains(&format!("{field}-error")));
        }
        let source = b.source().await;
        assert!(!source.contains(BAD_LUHN_CARD), "the number is not echoed");
        b.screenshot(shot).await;
        assert_eq!(self.attempts(&id).await, 0);
        assert_eq!(self.status(&id).await["state"], "Pending");
        // The payer corrects the card and pays.
        self.browser.set_scripts_enabled(true).await;
        self.pay_with(APPROVED_CARD).await;
        self.browser
            .wait_for_url(&format!("{}/ok", self.merchant))
            .await;
        assert_eq!(self.attempts(&id).await, 1);
    }

    /// The same session open in two tabs, both submitted: one authorisation; the second tab
    /// is told where the session stands.
    pub async fn two_tabs(&self, shot: &str) {
        let (id, _) = self.start_payment("TWO-TABS").await;
        self.open_checkout(&id).await;
        let tab_a = self.browser.new_tab().await;
        self.open_checkout(&id).await;
        let tab_b = self.browser.current_window().await;
        self.browser.switch_to(&tab_a).await;
        self.pay_with(APPROVED_CARD).await;
        self.browser
            .wait_for_url(&format!("{}/ok", self.merchant))
            .await;
        self.browser.switch_to(&tab_b).await;
        self.pay_with(APPROVED_CARD).await;
        // `pay_with` returns once the post's navigation has settled, so the URL read here is
        // where it ended: the success URL with the settled state, or the result page.
        let url = self.browser.url().await;
        if !url.starts_with(self.merchant) {
            self.browser.find("#result").await;
        }
        self.browser.screenshot(shot).await;
        assert_eq!(self.attempts(&id).await, 1, "one authorisation");
    }

    /// Ten form posts at once with the page's own token and cookie: one authorisation.
    pub async fn concurrent_posts(&self) {
        let (id, _) = self.start_payment("RACE").await;
        let client = &self.server.http;
        let form = CardForm::open(client, &self.server.base, &id).await;
        let posts = (0..10).map(|_| {
            let form = form.clone();
            let client = client.clone();
            async move { form.submit(&client, APPROVED_CARD).await.status() }
        });
        for status in futures_join_all(posts).await {
            assert!(!status.is_server_error(), "no 5xx: {status}");
        }
        assert_eq!(
            self.attempts(&id).await,
            1,
            "one authorisation of ten posts"
        );
    }
}

/// Runs the futures at once and collects their outputs in order.
async fn futures_join_all<F, T>(futures: impl Iterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.expect("join"));
    }
    out
}
