//! The hosted pages in a real browser: headless Chromium, driven over WebDriver, against the
//! real `checkout` binary over Postgres, paying with the sandbox processor's test cards.
//! Every test saves screenshots under `target/tmp/screenshots/`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

#[path = "../support/mod.rs"]
mod support;

mod flows;
mod pages;
mod payer;
mod receipt;

use flows::Flow;
use support::webdriver::Browser;
use support::TestServer;

/// A sandbox server, a merchant site and a browser for one test.
async fn setup(label: &str) -> (TestServer, String, Browser) {
    let server = TestServer::sandbox(label).await;
    let merchant = support::merchant::start();
    let browser = Browser::start(&flows::screenshot_dir()).await;
    (server, merchant, browser)
}

#[tokio::test]
async fn an_approved_card_goes_to_the_success_url_and_the_session_is_successful() {
    let (server, merchant, browser) = setup("pay-approved").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.approved_checkout("approved").await;
}

#[tokio::test]
async fn a_declined_card_goes_to_the_fail_url_and_the_session_is_failed() {
    let (server, merchant, browser) = setup("pay-declined").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.declined_checkout("declined").await;
}

#[tokio::test]
async fn a_3ds_card_passes_the_challenge_and_succeeds() {
    let (server, merchant, browser) = setup("pay-3ds").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.challenge_checkout("challenge", flows::CHALLENGE_CARD)
        .await;
    flow.challenge_checkout("challenge-other", flows::CHALLENGE_CARD_2)
        .await;
}

#[tokio::test]
async fn a_failed_3ds_challenge_goes_to_the_fail_url() {
    let (server, merchant, browser) = setup("pay-3ds-fail").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.failed_challenge_checkout("challenge-failed").await;
}

#[tokio::test]
async fn cancel_goes_to_the_back_url() {
    let (server, merchant, browser) = setup("pay-cancel").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.cancelled_checkout("cancel").await;
}

#[tokio::test]
async fn a_payment_link_is_paid_in_spanish_and_in_english_without_redirect() {
    let (server, merchant, browser) = setup("pay-link").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.link_payment("link-es", "es", None).await;
    flow.link_payment("link-en", "es", Some("en")).await;
    flow.link_payment("link-en-culture", "en", None).await;
}

#[tokio::test]
async fn an_expired_link_shows_an_error_page_and_cannot_be_paid() {
    let (server, merchant, browser) = setup("pay-expired").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.expired_link("expired").await;
    flow.link_expiring_while_open("expired-while-open").await;
}

#[tokio::test]
async fn invalid_card_fields_are_shown_beside_the_fields_and_nothing_is_charged() {
    let (server, merchant, browser) = setup("pay-invalid").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.invalid_fields("invalid-fields").await;
}

#[tokio::test]
async fn a_double_submission_authorises_once() {
    let (server, merchant, browser) = setup("pay-double").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.two_tabs("two-tabs").await;
    flow.concurrent_posts().await;
}

#[tokio::test]
async fn after_every_flow_no_card_number_expiry_or_cvv_is_stored_or_logged() {
    let (server, merchant, browser) = setup("pay-card-data").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.approved_checkout("sweep-approved").await;
    flow.declined_checkout("sweep-declined").await;
    flow.challenge_checkout("sweep-challenge", flows::CHALLENGE_CARD)
        .await;
    flow.failed_challenge_checkout("sweep-challenge-failed")
        .await;
    flow.cancelled_checkout("sweep-cancel").await;
    flow.link_payment("sweep-link", "es", Some("en")).await;
    flow.invalid_fields("sweep-invalid").await;
    flow.two_tabs("sweep-two-tabs").await;
    let mut secrets: Vec<&str> = flows::ALL_CARDS.to_vec();
    let spaced: Vec<String> = flows::ALL_CARDS
        .iter()
        .map(|c| {
            c.as_bytes()
                .chunks(4)
                .map(|g| String::from_utf8_lossy(g).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    secrets.extend(spaced.iter().map(String::as_str));
    secrets.extend([flows::EXPIRY, flows::CVV]);
    let searched = support::card_data::assert_absent(&server, &secrets).await;
    eprintln!("searched {searched} bytes of database rows and log lines: no card data");
}

#[test]
fn the_card_data_search_finds_tokens_alone_and_not_inside_longer_runs() {
    use support::card_data::contains_token;
    assert!(contains_token("cvv=918&x", "918"));
    assert!(contains_token("\"918\"", "918"));
    assert!(!contains_token("2026-11-22T16:30:918123Z", "918"));
    assert!(!contains_token("a918", "918"));
}

#[tokio::test]
async fn a_declined_card_shows_the_form_again_when_the_terminal_allows_another_card() {
    let (server, merchant, browser) = setup("browser-another-card").await;
    let flow = Flow::new(&server, &merchant, &browser);
    flow.another_card_after_a_decline("another-card").await;
}

#[tokio::test]
async fn every_page_state_passes_axe_at_both_sizes_in_both_languages_with_and_without_the_script() {
    // One payer walking every state in up to eight modes declines one test card in each: the
    // card-testing guard's thresholds are raised so that it never holds this walk back (its
    // own states are walked in a_challenged_payer_passes_with_the_pages_own_proof_of_work).
    let server = TestServer::start(
        "pages-matrix",
        support::Mode::Sandbox,
        &[
            ("CHECKOUT__GUARD__CARD_REFUSE", "100"),
            ("CHECKOUT__GUARD__ADDRESS_CHALLENGE", "100"),
            ("CHECKOUT__GUARD__ADDRESS_REFUSE", "100"),
        ],
    )
    .await;
    let merchant = support::merchant::start();
    let browser = Browser::start(&flows::screenshot_dir()).await;
    for mode in pages::modes() {
        pages::Pages::new(&server, &merchant, &browser, mode)
            .await
            .walk()
            .await;
    }
}

#[tokio::test]
async fn the_script_formats_the_card_checks_it_and_sends_one_post_on_a_double_click() {
    let (server, merchant, browser) = setup("pages-script").await;
    let flow = Flow::new(&server, &merchant, &browser);
    let (id, _) = flow.start_payment("SCRIPT").await;
    flow.open_checkout(&id).await;
    browser.type_into("#cardNumber", "4242424242424242").await;
    assert_eq!(browser.value("#cardNumber").await, "4242 4242 4242 4242");
    assert_eq!(browser.text("#card-brand").await, "Visa");
    browser.type_into("#cardNumber", "378282246310005").await;
    assert_eq!(browser.value("#cardNumber").await, "3782 822463 10005");
    assert_eq!(browser.text("#card-brand").await, "American Express");
    browser.type_into("#cardExpiry", "1134").await;
    assert_eq!(browser.value("#cardExpiry").await, "11/34");
    browser.type_into("#cardExpiry", "11/34").await;
    assert_eq!(browser.value("#cardExpiry").await, "11/34");
    // An expiry in the past and a 3-digit code for an Amex: refused in the page.
    browser.type_into("#cardholderName", "Ada Lovelace").await;
    browser.type_into("#cardExpiry", "0120").await;
    browser.type_into("#cardCvv", "918").await;
    let posts = pages::card_posts(&server);
    browser.click("#pay").await;
    browser.find("#cardExpiry-error").await;
    browser.find("#cardCvv-error").await;
    assert_eq!(browser.focused_id().await, "error-summary");
    browser.screenshot("script-errors").await;
    assert_eq!(pages::card_posts(&server), posts, "nothing was posted");

    // A double click on Pay: one post, Pay disabled and showing that it works.
    browser.type_into("#cardNumber", flows::APPROVED_CARD).await;
    browser.type_into("#cardExpiry", flows::EXPIRY).await;
    browser.type_into("#cardCvv", flows::CVV).await;
    let before = pages::card_posts(&server);
    browser.double_click("#pay").await;
    browser.wait_for_url(&format!("{merchant}/ok")).await;
    assert_eq!(pages::card_posts(&server), before + 1, "one POST");
    assert_eq!(flow.attempts(&id).await, 1);
}

#[tokio::test]
async fn the_processing_state_is_announced_politely_and_keeps_the_focus() {
    let (server, merchant, browser) = setup("pages-processing").await;
    payer::the_processing_state_is_announced(&server, &merchant, &browser).await;
}

#[tokio::test]
async fn links_opened_twice_from_another_site_leave_every_tab_able_to_pay() {
    let (server, merchant, browser) = setup("payer-other-site").await;
    payer::links_opened_from_another_site(&server, &merchant, &browser).await;
}

#[tokio::test]
async fn a_post_forged_on_another_site_is_refused_and_charges_nothing() {
    let (server, merchant, browser) = setup("payer-forged").await;
    payer::a_forged_cross_site_post(&server, &merchant, &browser).await;
}

#[tokio::test]
async fn a_payment_links_qr_code_decodes_to_the_link_as_svg_and_png() {
    let (server, merchant, browser) = setup("payer-qr").await;
    payer::the_qr_code_decodes_to_the_link(&server, &merchant, &browser).await;
}

#[tokio::test]
async fn reload_and_back_after_every_answer_to_a_card_post_send_nothing() {
    let (server, merchant, browser) = setup("payer-prg").await;
    payer::reload_and_back_after_every_answer(&server, &merchant, &browser).await;
}

#[tokio::test]
async fn reloading_any_result_page_sends_no_card_data() {
    let (server, merchant, browser) = setup("pages-reload").await;
    let flow = Flow::new(&server, &merchant, &browser);
    for script in [true, false] {
        browser.set_scripts_enabled(script).await;
        // A link paid, a link declined, a link whose answer is pending: each result is a GET
        // page reached by a 303.
        for (label, card) in [
            ("RELOAD-OK", flows::APPROVED_CARD),
            ("RELOAD-NO", flows::DECLINED_CARD),
        ] {
            let (id, link) = flow.payment_link(label, "en").await;
            browser.goto(&link).await;
            flow.pay_with(card).await;
            browser.find("#result").await;
            let url = browser.url().await;
            assert!(url.contains(&format!("/pay/link/{id}")), "{url}");
            let posts = pages::card_posts(&server);
            browser.refresh().await;
            browser.find("#result").await;
            assert_eq!(
                pages::card_posts(&server),
                posts,
                "the reload posted nothing"
            );
            assert_eq!(flow.attempts(&id).await, 1);
        }
        // An integrated checkout's result is the merchant's page (a 303 too).
        let (id, _) = flow.start_payment("RELOAD-CHECKOUT").await;
        flow.open_checkout(&id).await;
        flow.pay_with(flows::APPROVED_CARD).await;
        browser.wait_for_url(&format!("{merchant}/ok")).await;
        let posts = pages::card_posts(&server);
        browser.refresh().await;
        browser.find("#merchant").await;
        assert_eq!(pages::card_posts(&server), posts);
    }
}

#[tokio::test]
async fn the_confirming_page_refreshes_itself_with_the_script() {
    let (server, merchant, browser) = setup("pages-refresh").await;
    let flow = Flow::new(&server, &merchant, &browser);
    let (id, link) = flow.payment_link("REFRESH", "en").await;
    pages::set_state(&server, &id, 4).await;
    browser.goto(&link).await;
    assert_eq!(
        browser
            .attribute("#result", "data-refresh")
            .await
            .as_deref(),
        Some("5")
    );
    let old_root = browser.find("html").await;
    browser.execute("window.__marker = 1", vec![]).await;
    tokio::time::sleep(std::time::Duration::from_secs(7)).await;
    let marker = browser.execute("return window.__marker || 0", vec![]).await;
    assert_eq!(marker, 0, "the page was loaded again");
    drop(old_root);
    browser.find("#result").await;
}

#[tokio::test]
async fn the_payment_pages_script_is_the_one_in_the_inventory() {
    let server = support::TestServer::sandbox("pages-inventory").await;
    let script = server
        .http
        .get(format!("{}/pay/assets/checkout.js", server.base))
        .send()
        .await
        .expect("the script");
    assert_eq!(script.status(), 200);
    let served = pages::sha384(&script.bytes().await.expect("bytes"));
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/payment-page-scripts.md"),
    )
    .expect("the inventory");
    assert!(
        doc.contains(&format!("`{served}`")),
        "docs/payment-page-scripts.md lists {served}"
    );
    let id = server.new_checkout("INVENTORY").await;
    let page = server
        .http
        .get(format!("{}/pay/checkout-payment/{id}", server.base))
        .send()
        .await
        .expect("the page");
    let csp = page
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(csp.contains(&format!("script-src '{served}';")), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let body = page.text().await.unwrap_or_default();
    assert!(body.contains(&format!("integrity=\"{served}\"")));
    let favicon = server
        .http
        .get(format!("{}/pay/assets/favicon.svg", server.base))
        .send()
        .await
        .expect("the favicon");
    assert_eq!(favicon.status(), 200);
}

/// The `lang` of the page at `url` asked for with `accept` as `Accept-Language`.
async fn page_lang(server: &support::TestServer, url: &str, accept: Option<&str>) -> String {
    let mut request = server.http.get(url);
    if let Some(accept) = accept {
        request = request.header("Accept-Language", accept);
    }
    let body = request
        .send()
        .await
        .expect("page")
        .text()
        .await
        .unwrap_or_default();
    body.split_once("<html lang=\"")
        .and_then(|(_, rest)| rest.split('"').next())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn the_language_follows_lg_then_the_culture_then_accept_language() {
    let (server, merchant, browser) = setup("pages-language").await;
    let flow = Flow::new(&server, &merchant, &browser);
    // A checkout without a culture: the browser's language, else Spanish.
    let id = server.new_checkout("LANG").await;
    let page = format!("{}/pay/checkout-payment/{id}", server.base);
    assert_eq!(
        page_lang(&server, &page, Some("en-US,en;q=0.9")).await,
        "en"
    );
    assert_eq!(page_lang(&server, &page, Some("fr, es;q=0.5")).await, "es");
    assert_eq!(page_lang(&server, &page, None).await, "es");
    let en_us = format!("{page}?lg=en-US");
    assert_eq!(page_lang(&server, &en_us, Some("es")).await, "en");
    let es_cr = format!("{page}?lg=es-CR");
    assert_eq!(page_lang(&server, &es_cr, Some("en")).await, "es");
    // A link's culture comes before the browser's language; `lg` before both.
    let (_, link) = flow.payment_link("LANG-LINK", "es").await;
    assert_eq!(page_lang(&server, &link, Some("en")).await, "es");
    let en_gb = format!("{link}?lg=en-GB");
    assert_eq!(page_lang(&server, &en_gb, Some("es")).await, "en");
    // The switch leads to the same page in the other language.
    browser.goto(&link).await;
    browser.click_and_settle("#lang-switch").await;
    assert_eq!(
        browser.attribute("html", "lang").await.as_deref(),
        Some("en")
    );
    browser.find("#card-form").await;
}

/// WCAG 2.x relative luminance contrast of an `rgb(r, g, b)` colour against white.
fn contrast_on_white(css: &str) -> f64 {
    let channels: Vec<f64> = css
        .trim_start_matches("rgba(")
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .take(3)
        .map(|c| c.trim().parse::<f64>().expect("a channel") / 255.0)
        .map(|c| {
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        })
        .collect();
    let luminance = 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2];
    1.05 / (luminance + 0.05)
}

#[tokio::test]
async fn input_borders_and_the_focus_ring_have_3_to_1_contrast_and_there_is_a_favicon() {
    let (server, merchant, browser) = setup("pages-contrast").await;
    let flow = Flow::new(&server, &merchant, &browser);
    let (id, _) = flow.start_payment("CONTRAST").await;
    flow.open_checkout(&id).await;
    browser.click("#cardNumber").await;
    let colours = browser
        .execute(
            "const s = getComputedStyle(document.getElementById('cardholderName')); \
             const f = getComputedStyle(document.getElementById('cardNumber')); \
             return [s.borderTopColor, f.outlineColor, f.outlineStyle, \
                     document.querySelector('link[rel=icon]').href];",
            vec![],
        )
        .await;
    let border = contrast_on_white(colours[0].as_str().unwrap_or_default());
    let ring = contrast_on_white(colours[1].as_str().unwrap_or_default());
    assert!(border >= 3.0, "input border {border:.2}:1 ({colours})");
    assert!(ring >= 3.0, "focus ring {ring:.2}:1 ({colours})");
    assert_eq!(colours[2], "solid", "{colours}");
    let icon = server
        .http
        .get(colours[3].as_str().unwrap_or_default())
        .send()
        .await
        .expect("the favicon");
    assert_eq!(icon.status(), 200);
    // The clients that ask for /favicon.ico whatever the page says get an icon too.
    let ico = server
        .http
        .get(format!("{}/favicon.ico", server.base))
        .send()
        .await
        .expect("the ICO");
    assert_eq!(ico.status(), 200);
    assert_eq!(
        ico.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/x-icon")
    );
    browser.screenshot("focus-ring").await;
}

/// A payer challenged by the card-testing guard (five declines came from their address)
/// passes with the proof of work the page's own script finds with SubtleCrypto, under the
/// pages' CSP, and pays once.
#[tokio::test]
async fn a_challenged_payer_passes_with_the_pages_own_proof_of_work() {
    let (server, merchant, browser) = setup("pay-guard-challenge").await;
    // Five dead cards (the sandbox's `4000 0100 …`) declined from this address: loopback.
    for dead in [
        "4000010000000001",
        "4000010000000019",
        "4000010000000027",
        "4000010000000035",
        "4000010000000043",
    ] {
        let id = server.new_checkout("GUARD-DECLINE").await;
        let form = support::payer::CardForm::open(&server.http, &server.base, &id).await;
        assert_eq!(form.submit(&server.http, dead).await.status(), 303);
    }
    let flow = Flow::new(&server, &merchant, &browser);
    let (id, reference) = flow.start_payment("GUARDED").await;
    flow.open_checkout(&id).await;
    flow.pay_with(flows::APPROVED_CARD).await;
    assert_eq!(
        browser.attribute("#banner", "data-code").await.as_deref(),
        Some("GUARD_CHECK"),
        "the form again, asking for the check: {}",
        browser.source().await
    );
    assert_eq!(flow.attempts(&id).await, 0, "nothing sent");
    browser.screenshot("guard-challenge").await;
    flow.pay_with(flows::APPROVED_CARD).await;
    let url = browser.wait_for_url(&format!("{merchant}/ok")).await;
    assert!(url.contains(&reference), "{url}");
    assert_eq!(flow.attempts(&id).await, 1);
}

/// What the card form costs a payer on a first visit, measured by Chromium's resource timing
/// (bytes on the wire, headers included), the favicon included.
#[tokio::test]
async fn the_card_form_weighs_under_40_kb_in_under_8_requests() {
    let (server, merchant, browser) = setup("pages-weight").await;
    let flow = Flow::new(&server, &merchant, &browser);
    let (id, _) = flow.start_payment("WEIGHT").await;
    flow.open_checkout(&id).await;
    let entries = browser
        .execute(
            "return performance.getEntriesByType('navigation')\
               .concat(performance.getEntriesByType('resource'))\
               .map(e => [e.name, e.transferSize]);",
            vec![],
        )
        .await;
    let entries = entries.as_array().cloned().unwrap_or_default();
    // Chromium lists the favicon among the resources when it fetched it; else count it.
    let mut bytes: u64 = entries
        .iter()
        .map(|e| e[1].as_u64().expect("a transfer size"))
        .sum();
    let mut requests = entries.len();
    let listed = entries
        .iter()
        .any(|e| e[0].as_str().is_some_and(|n| n.ends_with("/favicon.svg")));
    if !listed {
        let favicon = server
            .http
            .get(format!("{}/pay/assets/favicon.svg", server.base))
            .send()
            .await
            .expect("the favicon")
            .bytes()
            .await
            .expect("bytes");
        bytes += favicon.len() as u64;
        requests += 1;
    }
    eprintln!("the card form: {bytes} bytes in {requests} requests: {entries:?}");
    assert!(
        entries.iter().all(|e| e[1].as_u64() > Some(0)),
        "all fetched: {entries:?}"
    );
    assert!(bytes < 40 * 1024, "{bytes} bytes");
    assert!(requests < 8, "{requests} requests");
}

/// Swagger UI's "Try it out" on a sandbox at a port other than 8080: the document's server is
/// relative, so the request goes to the address Swagger was opened at and gets its answer (a
/// fixed server would send it to 127.0.0.1:8080, where nothing answers).
#[tokio::test]
async fn swagger_try_it_out_reaches_the_server_it_was_opened_from() {
    let server = TestServer::sandbox("swagger-try").await;
    assert_ne!(server.port, 8080);
    let browser = Browser::start(&flows::screenshot_dir()).await;
    browser.goto(&format!("{}/swagger/", server.base)).await;
    browser
        .click("#operations-Security-issue_token .opblock-summary")
        .await;
    browser
        .click("#operations-Security-issue_token .try-out__btn")
        .await;
    let body = serde_json::json!({
        "client_id": server.client_id,
        "client_secret": server.client_secret,
    });
    browser
        .type_into(
            "#operations-Security-issue_token textarea.body-param__text",
            &body.to_string(),
        )
        .await;
    browser
        .click("#operations-Security-issue_token .execute")
        .await;
    let status =
        "#operations-Security-issue_token .live-responses-table tr.response .response-col_status";
    let started = std::time::Instant::now();
    let mut text = String::new();
    while started.elapsed() < std::time::Duration::from_secs(10) {
        text = browser.text(status).await;
        if !text.trim().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    browser.screenshot("swagger-try-it-out").await;
    assert_eq!(text.trim(), "200", "Swagger UI's answer to Try it out");
    let url = browser
        .text("#operations-Security-issue_token .request-url pre")
        .await;
    assert_eq!(
        url.trim(),
        format!("{}/api/public/security/auth", server.base)
    );
}
