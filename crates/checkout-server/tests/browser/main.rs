//! The hosted pages in a real browser: headless Chromium, driven over WebDriver, against the
//! real `checkout` binary over Postgres, paying with the sandbox processor's test cards.
//! Every test saves screenshots under `target/tmp/screenshots/`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

#[path = "../support/mod.rs"]
mod support;

mod flows;

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
