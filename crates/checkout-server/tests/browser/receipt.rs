//! The receipt on an approved payment link's page (issue 33 item 4), in Chromium: the date
//! and time, the merchant, the description, the amount with its currency, the card's brand
//! and last four digits, and the two numbers to quote; axe finds nothing on it, in Spanish
//! and in English, at both sizes; and the print stylesheet leaves only the receipt.

use crate::flows::{Flow, APPROVED_CARD};
use crate::pages::axe_source;
use crate::support::webdriver::Browser;
use crate::support::TestServer;

/// Pays a link in `lang` and checks its receipt page.
async fn receipt_in(
    server: &TestServer,
    flow: &Flow<'_>,
    browser: &Browser,
    lang: &str,
    phone: bool,
) {
    if phone {
        browser.set_size(412, 915).await;
    } else {
        browser.set_size(1280, 900).await;
    }
    let (id, link) = flow.payment_link(&format!("RECEIPT-{lang}"), lang).await;
    browser.goto(&link).await;
    flow.pay_with(APPROVED_CARD).await;
    browser.find("#receipt").await;
    let status = flow.status(&id).await;
    let internal = status["internalTransactionReferenceNumber"]
        .as_str()
        .expect("the internal reference")
        .to_owned();
    let es = lang == "es";

    assert_eq!(
        browser.text("#receipt-heading").await,
        if es { "Recibo" } else { "Receipt" }
    );
    let paid_at = browser
        .attribute("#receipt-paid-at time", "datetime")
        .await
        .expect("a machine-readable time");
    assert!(
        paid_at.starts_with("20") && paid_at.ends_with('Z'),
        "{paid_at}"
    );
    let shown = browser.text("#receipt-paid-at").await;
    assert!(shown.ends_with("UTC"), "{shown}");
    assert!(!browser.text("#merchant-name").await.is_empty());
    assert_eq!(browser.text("#receipt-description").await, "Factura 77");
    let total = browser.text("#total").await.replace('\u{a0}', " ");
    assert_eq!(
        total,
        if es {
            "15.000,00 ₡ CRC"
        } else {
            "₡15,000.00 CRC"
        }
    );
    assert_eq!(
        browser.text("#receipt-card").await,
        if es {
            "Visa terminada en 4242"
        } else {
            "Visa ending in 4242"
        }
    );
    assert_eq!(browser.text("#receipt-transaction").await, internal);
    assert_eq!(browser.text("#receipt-payment-id").await, id);
    assert!(!browser.source().await.contains(APPROVED_CARD));

    receipt_weight(server, browser).await;
    let name = format!("receipt-{lang}-{}", if phone { "phone" } else { "desktop" });
    browser.screenshot(&name).await;
    let violations = browser.axe(axe_source()).await;
    assert!(
        violations.is_empty(),
        "axe on {name}: {}",
        serde_json::to_string_pretty(&violations).unwrap_or_default()
    );
}

/// The receipt page's weight as a first visit pays it: the page as Chromium received it
/// (resource timing: bytes on the wire, headers included) and each asset it loads, fetched
/// whole (the card form before it left them in the cache).
async fn receipt_weight(server: &TestServer, browser: &Browser) {
    let page = browser
        .execute(
            "return performance.getEntriesByType('navigation')[0].transferSize;",
            vec![],
        )
        .await
        .as_u64()
        .expect("the page's transfer size");
    let mut bytes = page;
    let mut requests = 1;
    for asset in ["checkout.css", "checkout.js", "favicon.svg"] {
        let body = server
            .http
            .get(format!("{}/pay/assets/{asset}", server.base))
            .send()
            .await
            .expect("the asset")
            .bytes()
            .await
            .expect("its bytes");
        bytes += body.len() as u64;
        requests += 1;
    }
    eprintln!("the receipt page: {bytes} bytes in {requests} requests (the page {page})");
    assert!(page > 0 && bytes < 40 * 1024, "{bytes} bytes");
}

#[tokio::test]
async fn the_receipt_page_shows_what_a_payer_keeps_and_passes_axe() {
    let server = TestServer::sandbox("receipt-page").await;
    let merchant = crate::support::merchant::start();
    let browser = Browser::start(&crate::flows::screenshot_dir()).await;
    let flow = Flow::new(&server, &merchant, &browser);
    receipt_in(&server, &flow, &browser, "es", false).await;
    receipt_in(&server, &flow, &browser, "en", true).await;

    // Printed, the page is the receipt alone: no language switch, footer, button or form,
    // black on white.
    let css = server
        .http
        .get(format!("{}/pay/assets/checkout.css", server.base))
        .send()
        .await
        .expect("the stylesheet")
        .text()
        .await
        .expect("its text");
    let print = css
        .split("@media print")
        .nth(1)
        .expect("a print stylesheet");
    for rule in [
        "nav.lang, footer.foot, button, a.button, form { display: none; }",
        "color: #000",
        "background: #fff",
    ] {
        assert!(print.contains(rule), "the print stylesheet has {rule}");
    }
}
