//! Every state of the hosted pages, in Spanish and English, as HTML snapshots (request GUIDs
//! and CSRF tokens redacted). Each snapshot starts with the answer's status and, for a
//! redirect, its `Location`.

use actix_web::http::StatusCode;
use checkout_domain::ports::{ProcessorError, ProcessorOutcome};
use serde_json::json;
use time::Duration;

use crate::support::{self, Reply};

const LANGS: [&str; 2] = ["es", "en"];

/// The snapshot text of a page answer: status, `Location` when there is one, the body.
fn page(reply: &Reply) -> String {
    let mut text = format!("{}\n", reply.status.as_u16());
    if !reply.header("location").is_empty() {
        text.push_str(&format!("Location: {}\n", reply.header("location")));
    }
    if reply.header("content-type").starts_with("text/html") {
        text.push('\n');
        text.push_str(&reply.text());
    }
    text
}

/// Snapshots a page answer under `name`.
macro_rules! assert_page {
    ($name:expr, $reply:expr) => {{
        let text = page(&$reply);
        support::redacted().bind(|| insta::assert_snapshot!($name, text));
    }};
}

#[actix_web::test]
async fn checkout_and_link_pages_show_the_card_form() {
    for lg in LANGS {
        let app = support::start().await;
        let token = app.token().await;
        let checkout = app.start_payment(&token, "ORDER-PAGE").await;
        let reply = app
            .browse(&format!("/pay/checkout-payment/{checkout}?lg={lg}"), "")
            .await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_page!(format!("checkout_page_{lg}"), reply);
        let link = app.payment_link(&token, "INVOICE-PAGE").await;
        let reply = app.browse(&format!("/pay/link/{link}?lg={lg}"), "").await;
        assert_page!(format!("link_page_{lg}"), reply);
    }
}

#[actix_web::test]
async fn a_card_to_correct_shows_the_form_with_errors() {
    for lg in LANGS {
        let app = support::start().await;
        let token = app.token().await;
        let id = app.payment_link(&token, "INVOICE-TYPO").await;
        let page_path = format!("/pay/link/{id}?lg={lg}");
        let reply = app.pay(&page_path, &id, lg, "4242424242424241").await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_page!(format!("form_with_errors_{lg}"), reply);
    }
}

#[actix_web::test]
async fn a_declined_card_with_another_allowed_shows_the_banner() {
    for lg in LANGS {
        let app = support::start().await;
        app.kit.set_max_card_attempts("T-1", 2);
        let token = app.token().await;
        let id = app.payment_link(&token, "INVOICE-DECLINE").await;
        app.kit
            .processor
            .push_authorize(Ok(ProcessorOutcome::Declined {
                processor_reference: Some("pi_declined".to_owned()),
                reason: "card_declined".to_owned(),
            }));
        let page_path = format!("/pay/link/{id}?lg={lg}");
        let reply = app.pay(&page_path, &id, lg, "4242424242424242").await;
        assert_page!(format!("declined_retry_post_{lg}"), reply);
        let reply = app
            .browse(&format!("/pay/link/{id}?lg={lg}&declined=1"), "")
            .await;
        assert_page!(format!("declined_retry_form_{lg}"), reply);
    }
}

#[actix_web::test]
async fn results_of_a_payment_link() {
    for lg in LANGS {
        let app = support::start().await;
        let token = app.token().await;

        let paid = app.payment_link(&token, "INVOICE-PAID").await;
        let page_path = format!("/pay/link/{paid}?lg={lg}");
        let reply = app.pay(&page_path, &paid, lg, "4242424242424242").await;
        assert_page!(format!("card_post_redirect_{lg}"), reply);
        assert_page!(
            format!("result_success_{lg}"),
            app.browse(&page_path, "").await
        );

        let failed = app.payment_link(&token, "INVOICE-FAILED").await;
        app.kit
            .processor
            .push_authorize(Ok(ProcessorOutcome::Declined {
                processor_reference: Some("pi_failed".to_owned()),
                reason: "card_declined".to_owned(),
            }));
        let page_path = format!("/pay/link/{failed}?lg={lg}");
        app.pay(&page_path, &failed, lg, "4000000000000002").await;
        assert_page!(
            format!("result_failed_{lg}"),
            app.browse(&page_path, "").await
        );

        let cancelled = app.payment_link(&token, "INVOICE-CANCELLED").await;
        let reply = app
            .post_json(
                &format!("/pay/api/payment/{cancelled}/cancel"),
                &token,
                &json!({}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK);
        let page_path = format!("/pay/link/{cancelled}?lg={lg}");
        assert_page!(
            format!("result_cancelled_{lg}"),
            app.browse(&page_path, "").await
        );

        let processing = app.payment_link(&token, "INVOICE-LOST").await;
        app.kit
            .processor
            .push_lost_answer(ProcessorError::Communication("timeout".to_owned()), None);
        app.kit
            .processor
            .push_lost_answer(ProcessorError::Communication("timeout".to_owned()), None);
        let page_path = format!("/pay/link/{processing}?lg={lg}");
        app.pay(&page_path, &processing, lg, "4242424242424242")
            .await;
        assert_page!(
            format!("result_processing_{lg}"),
            app.browse(&page_path, "").await
        );

        let expired = app.payment_link(&token, "INVOICE-EXPIRED").await;
        app.kit.clock.advance(Duration::days(2));
        let page_path = format!("/pay/link/{expired}?lg={lg}");
        assert_page!(
            format!("result_expired_{lg}"),
            app.browse(&page_path, "").await
        );
    }
}

#[actix_web::test]
async fn the_sandbox_challenge_page_and_its_answer() {
    for lg in LANGS {
        let app = support::start().await;
        let token = app.token().await;
        let id = app.payment_link(&token, "INVOICE-3DS").await;
        app.kit
            .processor
            .push_authorize(Ok(ProcessorOutcome::ChallengeRequired {
                processor_reference: "pi_3ds".to_owned(),
                challenge_url: None,
            }));
        let page_path = format!("/pay/link/{id}?lg={lg}");
        let reply = app.pay(&page_path, &id, lg, "4000000000003220").await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER);
        let challenge = reply.header("location").to_owned();
        let opened = app.browse(&challenge, "").await;
        assert_page!(format!("challenge_{lg}"), opened);
        let cookie = opened.csrf_cookie().expect("a CSRF cookie");
        assert_page!(
            format!("result_challenge_{lg}"),
            app.browse(&format!("/pay/link/{id}?lg={lg}"), &cookie)
                .await
        );
    }
}

#[actix_web::test]
async fn an_integrated_checkout_goes_back_to_the_merchant() {
    for lg in LANGS {
        let app = support::start().await;
        let token = app.token().await;
        let id = app.start_payment(&token, "ORDER-BACK").await;
        let page_path = format!("/pay/checkout-payment/{id}?lg={lg}");
        let (cookie, csrf) = app.form_of(&page_path).await;
        let reply = app
            .post_form(
                "/pay/cancel-payment",
                &cookie,
                &[("checkoutSessionId", &id), ("csrfToken", &csrf), ("lg", lg)],
            )
            .await;
        assert_page!(format!("payer_cancel_redirect_{lg}"), reply);
    }
}

#[actix_web::test]
async fn error_pages() {
    for lg in LANGS {
        let app = support::start().await;
        let token = app.token().await;
        let reply = app
            .browse(
                &format!("/pay/link/00000000-0000-4000-8000-000000000000?lg={lg}"),
                "",
            )
            .await;
        assert_page!(format!("error_unknown_session_{lg}"), reply);

        let id = app.payment_link(&token, "INVOICE-CSRF").await;
        let (cookie, _) = app.form_of(&format!("/pay/link/{id}?lg={lg}")).await;
        let reply = app
            .post_form(
                "/pay/process-payment",
                &cookie,
                &[
                    ("checkoutSessionId", &id),
                    ("csrfToken", "forged"),
                    ("lg", lg),
                ],
            )
            .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN);
        assert_page!(format!("error_csrf_{lg}"), reply);

        app.deactivate_terminal();
        let reply = app.browse(&format!("/pay/link/{id}?lg={lg}"), "").await;
        assert_page!(format!("error_terminal_inactive_{lg}"), reply);
    }
}
