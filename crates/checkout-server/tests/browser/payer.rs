//! Issue 33's payer findings in a real browser: forms that survive other tabs and cross-site
//! arrivals (and refuse a forged cross-site post), Post/Redirect/Get after every kind of
//! answer (reload and Back post nothing), and the processing state a screen reader hears.

use serde_json::json;

use crate::flows::{
    Flow, APPROVED_CARD, BAD_LUHN_CARD, CHALLENGE_CARD, CVV, DECLINED_CARD, EXPIRY,
};
use crate::pages::{axe_source, card_posts, npm_file};
use crate::support::webdriver::Browser;
use crate::support::TestServer;

/// The sandbox card whose hand-over to the processor fails (SVC_003, nothing charged).
const UNREACHABLE_CARD: &str = "4000000000000119";

/// The merchant's "webmail" on `localhost`, listing `links`: another site than the service's
/// `127.0.0.1`, so that following a link is a cross-site navigation.
fn inbox(merchant: &str, links: &[&str]) -> String {
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(links.iter().map(|l| ("link", *l)))
        .finish();
    format!(
        "{}/inbox?{query}",
        merchant.replace("127.0.0.1", "localhost")
    )
}

/// Opens the inbox in the current tab and follows its link `n` to the payment page.
async fn arrive_from_inbox(browser: &Browser, inbox: &str, n: usize) {
    browser.goto(inbox).await;
    browser.find("#inbox").await;
    browser.click_and_settle(&format!("#link-{n}")).await;
    browser.find("#card-form").await;
}

/// Axe finds nothing on the page shown now.
async fn assert_axe_clean(browser: &Browser, state: &str) {
    let violations = browser.axe(axe_source()).await;
    assert!(
        violations.is_empty(),
        "axe on {state}: {}",
        serde_json::to_string_pretty(&violations).unwrap_or_default()
    );
}

/// The result heading (the outcome in words) and the page title.
async fn outcome(browser: &Browser) -> (String, String) {
    let title = browser
        .execute("return document.title", vec![])
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (browser.text("#outcome").await, title)
}

/// Two invoices and one link opened twice, each from another site, in two tabs: every tab
/// opened first still pays, even when the browser's cookie was replaced in between (a payer
/// clearing cookies, two first arrivals racing); the second tab of a paid link is told so.
pub async fn links_opened_from_another_site(server: &TestServer, merchant: &str, b: &Browser) {
    let flow = Flow::new(server, merchant, b);
    let (first, first_link) = flow.payment_link("INBOX-A", "en").await;
    let (second, second_link) = flow.payment_link("INBOX-B", "en").await;
    let mail = inbox(merchant, &[&first_link, &second_link, &first_link]);

    // Two invoices from one inbox, each in its tab.
    arrive_from_inbox(b, &mail, 0).await;
    let cookie = b.cookie("hc_csrf").await.expect("a CSRF cookie");
    let tab_a = b.new_tab().await;
    arrive_from_inbox(b, &mail, 1).await;
    assert_eq!(
        b.cookie("hc_csrf").await.as_deref(),
        Some(cookie.as_str()),
        "a cross-site arrival brings the cookie along and never replaces it"
    );
    let tab_b = b.current_window().await;
    b.switch_to(&tab_a).await;
    flow.pay_with(APPROVED_CARD).await;
    assert_eq!(outcome(b).await.0, "Payment approved");
    b.switch_to(&tab_b).await;
    flow.pay_with(APPROVED_CARD).await;
    assert_eq!(outcome(b).await.0, "Payment approved");
    assert_eq!(flow.status(&first).await["state"], "Successful");
    assert_eq!(flow.status(&second).await["state"], "Successful");

    // One link opened twice; the cookie lost between the two arrivals, so the second tab's
    // page sets a new one: the first tab still pays, the second is told the truth.
    let (id, link) = flow.payment_link("INBOX-TWICE", "es").await;
    let mail = inbox(merchant, &[&link]);
    arrive_from_inbox(b, &mail, 0).await;
    let tab_a = b.current_window().await;
    b.delete_cookie("hc_csrf", &server.base).await;
    b.new_tab().await;
    arrive_from_inbox(b, &mail, 0).await;
    let replaced = b.cookie("hc_csrf").await.expect("a new cookie");
    assert_ne!(replaced, cookie);
    let tab_b = b.current_window().await;
    b.switch_to(&tab_a).await;
    flow.pay_with(APPROVED_CARD).await;
    let (heading, title) = outcome(b).await;
    assert_eq!(heading, "Pago aprobado");
    assert!(title.starts_with("Pago aprobado"), "{title}");
    b.switch_to(&tab_b).await;
    flow.pay_with(APPROVED_CARD).await;
    assert_eq!(outcome(b).await.0, "Pago aprobado", "told the truth");
    assert_eq!(flow.attempts(&id).await, 1, "one authorisation");
    b.screenshot("payer-second-tab-told").await;
}

/// A post forged on another site, even carrying the payer's real form token: refused,
/// nothing reaches the processor, and the payer's own page still pays.
pub async fn a_forged_cross_site_post(server: &TestServer, merchant: &str, b: &Browser) {
    let flow = Flow::new(server, merchant, b);
    let (id, link) = flow.payment_link("FORGED", "en").await;
    let mail = inbox(merchant, &[&link]);
    arrive_from_inbox(b, &mail, 0).await;
    let token = b
        .attribute("input[name=csrfToken]", "value")
        .await
        .expect("the token");
    let payer_tab = b.new_tab().await;
    b.goto(&mail).await;
    b.find("#inbox").await;
    let posts = card_posts(server);
    b.execute(
        "const f = document.createElement('form'); f.method = 'post'; f.action = arguments[0]; \
         for (const [k, v] of Object.entries(arguments[1])) { \
           const i = document.createElement('input'); i.name = k; i.value = v; f.appendChild(i); } \
         document.body.appendChild(f); f.submit();",
        vec![
            json!(format!("{}/pay/process-payment", server.base)),
            json!({ "checkoutSessionId": id, "csrfToken": token, "lg": "en",
                    "cardholderName": "Mallory", "cardNumber": APPROVED_CARD,
                    "cardExpiry": EXPIRY, "cardCvv": CVV }),
        ],
    )
    .await;
    b.find("#banner-heading").await;
    assert_eq!(card_posts(server), posts + 1, "the forged post arrived");
    assert_eq!(
        b.attribute("#banner", "data-code").await.as_deref(),
        Some("CSRF")
    );
    assert_eq!(
        b.value("#cardholderName").await,
        "",
        "nothing of it is kept"
    );
    assert_eq!(flow.attempts(&id).await, 0, "nothing reached the processor");
    assert_axe_clean(b, "form-retype").await;
    b.screenshot("payer-forged-refused").await;
    b.switch_to(&payer_tab).await;
    flow.pay_with(APPROVED_CARD).await;
    assert_eq!(outcome(b).await.0, "Payment approved");
}

/// After an answer to a card post: the page is a GET, and neither a reload nor Back posts
/// anything or shows a browser's resubmission page.
async fn reload_and_back_post_nothing(server: &TestServer, b: &Browser, answer: &str) {
    let url = b.url().await;
    assert!(!url.contains("/pay/process-payment"), "{answer}: at {url}");
    let posts = card_posts(server);
    b.refresh().await;
    assert_eq!(
        b.url().await,
        url,
        "{answer}: the reload shows the same page"
    );
    b.back().await;
    let back = b.url().await;
    assert!(
        back.starts_with("http") && !back.contains("/pay/process-payment"),
        "{answer}: Back leads to {back}"
    );
    let page = b.source().await;
    assert!(
        [
            "card-form",
            "id=\"result\"",
            "challenge-form",
            "id=\"merchant\""
        ]
        .iter()
        .any(|m| page.contains(m)),
        "{answer}: Back shows a page of ours: {page}"
    );
    assert_eq!(card_posts(server), posts, "{answer}: nothing was posted");
    b.goto(&url).await;
}

/// Reload and Back after every kind of answer to a card post send nothing: a form to
/// correct, the processor's retry, a decline with another card allowed, the payment after
/// it, a final decline, a challenge, and an integrated checkout's redirect to the merchant.
pub async fn reload_and_back_after_every_answer(server: &TestServer, merchant: &str, b: &Browser) {
    let flow = Flow::new(server, merchant, b);
    server.set_max_card_attempts(&server.terminal, 2).await;

    // A form to correct (the server's checks: the script would catch it first).
    let (id, link) = flow.payment_link("PRG-ERRORS", "en").await;
    b.set_scripts_enabled(false).await;
    b.goto(&link).await;
    flow.pay_with(BAD_LUHN_CARD).await;
    b.find("#cardNumber-error").await;
    assert!(b.title_contains("Error:").await);
    reload_and_back_post_nothing(server, b, "errors").await;
    // The reload showed the same form: errors and name kept, number not.
    b.find("#cardNumber-error").await;
    assert_eq!(b.value("#cardholderName").await, "Ada Lovelace");
    assert_eq!(b.value("#cardNumber").await, "");
    b.set_scripts_enabled(true).await;
    assert_axe_clean(b, "errors-reshown").await;

    // The processor could not be reached: the banner, the form.
    flow.pay_with(UNREACHABLE_CARD).await;
    assert_eq!(
        b.attribute("#banner", "data-code").await.as_deref(),
        Some("SVC_003")
    );
    reload_and_back_post_nothing(server, b, "processor-retry").await;
    assert_eq!(
        b.attribute("#banner", "data-code").await.as_deref(),
        Some("SVC_003")
    );

    // Declined, another card allowed.
    flow.pay_with(DECLINED_CARD).await;
    assert_eq!(b.text("#banner-heading").await, "Card declined");
    assert!(b.title_contains("Card declined").await);
    reload_and_back_post_nothing(server, b, "declined-retry").await;
    assert_axe_clean(b, "declined-retry").await;

    // Approved: Back to the pages before shows where the payment stands.
    flow.pay_with(APPROVED_CARD).await;
    assert_eq!(outcome(b).await.0, "Payment approved");
    reload_and_back_post_nothing(server, b, "approved").await;
    let posts = card_posts(server);
    for _ in 0..3 {
        b.back().await;
        b.find("#result").await;
        assert!(!b.url().await.contains("process-payment"));
    }
    assert_eq!(card_posts(server), posts);
    assert_eq!(flow.status(&id).await["state"], "Successful");

    // A final decline (the second of two).
    let (_, link) = flow.payment_link("PRG-DECLINED", "es").await;
    b.goto(&link).await;
    flow.pay_with(DECLINED_CARD).await;
    flow.pay_with(DECLINED_CARD).await;
    let (heading, title) = outcome(b).await;
    assert_eq!(heading, "Tarjeta rechazada");
    assert!(title.starts_with("Tarjeta rechazada"), "{title}");
    reload_and_back_post_nothing(server, b, "declined").await;

    // A challenge.
    let (_, link) = flow.payment_link("PRG-3DS", "en").await;
    b.goto(&link).await;
    flow.pay_with(CHALLENGE_CARD).await;
    b.find("#challenge-form").await;
    reload_and_back_post_nothing(server, b, "challenge").await;

    // An integrated checkout: the merchant's page, and Back to the settled checkout.
    let (id, _) = flow.start_payment("PRG-CHECKOUT").await;
    flow.open_checkout(&id).await;
    flow.pay_with(APPROVED_CARD).await;
    b.wait_for_url(&format!("{merchant}/ok")).await;
    reload_and_back_post_nothing(server, b, "merchant").await;
}

/// While the payment is sent: the stale error summary and banner are hidden, a polite live
/// region says the payment is being processed, and the focus stays on Pay; axe finds
/// nothing in that state.
pub async fn the_processing_state_is_announced(server: &TestServer, merchant: &str, b: &Browser) {
    let flow = Flow::new(server, merchant, b);
    for (lang, said) in [
        (
            "en",
            "Processing your payment. Please do not close or reload this page.",
        ),
        (
            "es",
            "Procesando el pago. No cierre ni recargue esta página.",
        ),
    ] {
        let (_, link) = flow.payment_link("LIVE", lang).await;
        // A stale summary first: the server's checks.
        b.set_scripts_enabled(false).await;
        b.goto(&link).await;
        flow.pay_with(BAD_LUHN_CARD).await;
        b.set_scripts_enabled(true).await;
        b.refresh().await;
        assert!(!b.hidden("#error-summary").await, "the summary is shown");
        assert_eq!(
            b.attribute("#pay-status", "aria-live").await.as_deref(),
            Some("polite")
        );
        assert_eq!(b.text("#pay-status").await, "");
        b.type_into("#cardNumber", APPROVED_CARD).await;
        b.type_into("#cardExpiry", EXPIRY).await;
        b.type_into("#cardCvv", CVV).await;
        // Hold the form's navigation so that the page after the click can be read.
        b.execute(
            "document.getElementById('card-form').addEventListener('submit', \
               e => { window.__submitted = !e.defaultPrevented; e.preventDefault(); });",
            vec![],
        )
        .await;
        b.click("#pay").await;
        let state = b
            .execute(
                "const p = document.getElementById('pay'); \
                 return [document.getElementById('pay-status').textContent, \
                         document.getElementById('error-summary').hidden, \
                         document.activeElement && document.activeElement.id, \
                         p.getAttribute('aria-disabled'), p.disabled, window.__submitted];",
                vec![],
            )
            .await;
        assert_eq!(state[0], said, "{state}");
        assert_eq!(state[1], true, "the stale summary is hidden: {state}");
        assert_eq!(state[2], "pay", "the focus stays on Pay: {state}");
        assert_eq!(state[3], "true", "{state}");
        assert_eq!(
            state[4], false,
            "not disabled, which would drop the focus: {state}"
        );
        assert_eq!(state[5], true, "the form was sent: {state}");
        assert_axe_clean(b, &format!("processing-{lang}")).await;
        b.screenshot(&format!("payer-processing-{lang}")).await;
    }
}

/// The text of jsQR's `jsQR.js`, installed from npm by `scripts/jsqr.sh`.
fn jsqr_source() -> &'static str {
    static JSQR: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    JSQR.get_or_init(|| npm_file("jsqr.sh"))
}

/// Draws the image `data_url` on a canvas in a blank page and decodes it with jsQR.
async fn decode_qr(b: &Browser, data_url: &str) -> String {
    b.goto("about:blank").await;
    b.execute(jsqr_source(), vec![]).await;
    let decoded = b
        .execute_async(
            "const done = arguments[arguments.length - 1]; const img = new Image(); \
             img.onload = () => { const c = document.createElement('canvas'); \
               c.width = img.naturalWidth || 400; c.height = img.naturalHeight || 400; \
               const g = c.getContext('2d'); g.fillStyle = '#fff'; g.fillRect(0, 0, c.width, c.height); \
               g.drawImage(img, 0, 0, c.width, c.height); \
               const d = g.getImageData(0, 0, c.width, c.height); \
               const r = jsQR(d.data, c.width, c.height); done(r ? r.data : 'no code'); }; \
             img.onerror = () => done('not an image'); img.src = arguments[0];",
            vec![json!(data_url)],
        )
        .await;
    decoded.as_str().unwrap_or_default().to_owned()
}

/// A payment link's QR code, fetched by the merchant as SVG and as PNG, decodes (with jsQR,
/// from npm, in Chromium) to exactly the link the merchant was given.
pub async fn the_qr_code_decodes_to_the_link(server: &TestServer, merchant: &str, b: &Browser) {
    use base64::Engine;
    let flow = Flow::new(server, merchant, b);
    let (id, link) = flow.payment_link("QR", "es").await;
    let token = server.token().await;
    for (format, media) in [("svg", "image/svg+xml"), ("png", "image/png")] {
        let reply = server
            .http
            .get(format!(
                "{}/pay/api/payment/{id}/qr?format={format}",
                server.base
            ))
            .bearer_auth(&token)
            .send()
            .await
            .expect("the QR code");
        assert_eq!(reply.status(), 200, "{format}");
        assert_eq!(
            reply
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some(media)
        );
        let bytes = reply.bytes().await.expect("bytes");
        let data_url = format!(
            "data:{media};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        );
        assert_eq!(decode_qr(b, &data_url).await, link, "{format}");
    }
    // The decoder is not fooled into agreeing: another link's code decodes to that link.
    let (other, other_link) = flow.payment_link("QR-OTHER", "es").await;
    let reply = server
        .http
        .get(format!(
            "{}/pay/api/payment/{other}/qr?format=png",
            server.base
        ))
        .bearer_auth(&token)
        .send()
        .await
        .expect("the QR code");
    let bytes = reply.bytes().await.expect("bytes");
    let data_url = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    let decoded = decode_qr(b, &data_url).await;
    assert_eq!(decoded, other_link);
    assert_ne!(decoded, link);
}
