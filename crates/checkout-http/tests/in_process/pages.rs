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
        let (post, form) = app
            .pay_and_follow(&page_path, &id, lg, "4242424242424241")
            .await;
        assert_page!(format!("form_with_errors_post_{lg}"), post);
        assert_eq!(form.status, StatusCode::OK);
        let html = form.text();
        assert!(html.contains(r#"value="Ada Lovelace""#), "the name is kept");
        assert!(
            html.contains(r#"value="12&#x2F;30""#),
            "a valid expiry is kept"
        );
        assert!(!html.contains("4242424242424241"), "never the number");
        assert_page!(format!("form_with_errors_{lg}"), form);
        // A fresh opening of the page is a clean form.
        let clean = app.browse(&page_path, "").await.text();
        assert!(!clean.contains("Ada Lovelace") && !clean.contains("aria-invalid"));
    }
}

#[actix_web::test]
async fn a_re_shown_form_is_for_its_session_and_its_redirect_only() {
    let app = support::start().await;
    let token = app.token().await;
    let id = app.payment_link(&token, "INVOICE-FLASH").await;
    let other = app.payment_link(&token, "INVOICE-OTHER").await;
    let (post, _) = app
        .pay_and_follow(
            &format!("/pay/link/{id}?lg=en"),
            &id,
            "en",
            "4242424242424241",
        )
        .await;
    let flash = post.cookie("hc_form").expect("the form's cookie");
    let set = post.header("set-cookie");
    assert!(
        set.contains("HttpOnly") && set.contains("Max-Age=600"),
        "{set}"
    );
    assert!(
        !set.contains("4242424242424241") && !set.contains("123"),
        "{set}"
    );
    let form_id = post
        .header("location")
        .split("form=")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let shown = |html: String| html.contains("Ada Lovelace");
    assert!(shown(
        app.browse(post.header("location"), &flash).await.text()
    ));
    // Another session's page with the same id, or this page without the id, shows nothing.
    let elsewhere = format!("/pay/link/{other}?lg=en&form={form_id}");
    assert!(!shown(app.browse(&elsewhere, &flash).await.text()));
    assert!(!shown(
        app.browse(&format!("/pay/link/{id}?lg=en"), &flash)
            .await
            .text()
    ));
    // An altered cookie is ignored.
    let altered = flash.replacen("hc_form=", "hc_form=x", 1);
    assert!(!shown(
        app.browse(post.header("location"), &altered).await.text()
    ));
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
        let (post, form) = app
            .pay_and_follow(&page_path, &id, lg, "4242424242424242")
            .await;
        assert_page!(format!("declined_retry_post_{lg}"), post);
        assert_page!(format!("declined_retry_reshown_{lg}"), form);
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
                    ("cardholderName", "Mallory"),
                ],
            )
            .await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER);
        assert_eq!(
            reply.cookie("hc_form"),
            None,
            "a refused post keeps nothing"
        );
        assert_page!(format!("csrf_refused_post_{lg}"), reply);
        let form = app.browse(reply.header("location"), &cookie).await;
        assert!(!form.text().contains("Mallory"));
        assert_page!(format!("form_retype_{lg}"), form);

        // The cancel form's refusal stays a page of its own, its heading asking to try again.
        let checkout = app.start_payment(&token, "ORDER-CSRF").await;
        let (cookie, _) = app
            .form_of(&format!("/pay/checkout-payment/{checkout}?lg={lg}"))
            .await;
        let reply = app
            .post_form(
                "/pay/cancel-payment",
                &cookie,
                &[
                    ("checkoutSessionId", &checkout),
                    ("csrfToken", "forged"),
                    ("lg", lg),
                ],
            )
            .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN);
        assert_page!(format!("error_csrf_cancel_{lg}"), reply);

        app.deactivate_terminal();
        let reply = app.browse(&format!("/pay/link/{id}?lg={lg}"), "").await;
        assert_page!(format!("error_terminal_inactive_{lg}"), reply);
    }
}

#[actix_web::test]
async fn the_csrf_cookie_is_the_services_and_is_never_replaced() {
    let app = support::start().await;
    let token = app.token().await;
    let id = app.payment_link(&token, "INVOICE-COOKIE").await;
    let page = format!("/pay/link/{id}?lg=en");
    let first = app.browse(&page, "").await;
    let cookie = first.csrf_cookie().expect("a first visit gets a cookie");
    let set = first.header("set-cookie");
    assert!(
        set.contains("SameSite=Lax") && set.contains("HttpOnly"),
        "{set}"
    );
    // A second opening (another tab) with the cookie keeps it: nothing is set.
    assert_eq!(app.browse(&page, &cookie).await.csrf_cookie(), None);
    // A value the service did not issue is not read: a new one is set.
    let planted = format!("hc_csrf={}", "a".repeat(64));
    let replaced = app.browse(&page, &planted).await.csrf_cookie();
    assert!(replaced.is_some_and(|c| c != planted));
}

#[actix_web::test]
async fn a_post_from_another_site_is_refused_and_one_from_this_origin_needs_no_cookie() {
    let app = support::start().await;
    let token = app.token().await;
    let id = app.payment_link(&token, "INVOICE-SITE").await;
    let (cookie, csrf) = app.form_of(&format!("/pay/link/{id}?lg=en")).await;
    let fields = |csrf: &str| {
        vec![
            ("checkoutSessionId".to_owned(), id.clone()),
            ("csrfToken".to_owned(), csrf.to_owned()),
            ("lg".to_owned(), "en".to_owned()),
            ("cardholderName".to_owned(), "Ada Lovelace".to_owned()),
            ("cardNumber".to_owned(), "4242424242424242".to_owned()),
            ("cardExpiry".to_owned(), "12/30".to_owned()),
            ("cardCvv".to_owned(), "123".to_owned()),
        ]
    };
    let post = |headers: Vec<(&'static str, String)>, csrf: String| {
        let mut request = actix_web::test::TestRequest::post()
            .uri("/pay/process-payment")
            .insert_header(("Content-Type", "application/x-www-form-urlencoded"))
            .set_payload(serde_urlencoded::to_string(fields(&csrf)).expect("a form"));
        for header in headers {
            request = request.insert_header(header);
        }
        request
    };
    // The real token and cookie, but from another site: refused, nothing charged.
    for site in ["cross-site", "same-site"] {
        let reply = app
            .send(post(
                vec![
                    ("Sec-Fetch-Site", site.to_owned()),
                    ("Cookie", cookie.clone()),
                ],
                csrf.clone(),
            ))
            .await;
        assert!(reply.header("location").ends_with("retype=1"), "{site}");
    }
    let reply = app
        .send(post(
            vec![
                ("Origin", "https://evil.example".to_owned()),
                ("Cookie", cookie.clone()),
            ],
            csrf.clone(),
        ))
        .await;
    assert!(reply.header("location").ends_with("retype=1"));
    assert_eq!(
        app.kit.processor.authorize_calls(),
        0,
        "nothing reached the processor"
    );
    // A token the service did not issue, even from this origin: refused.
    let reply = app
        .send(post(
            vec![("Sec-Fetch-Site", "same-origin".to_owned())],
            format!("{}.{}", "a".repeat(43), "b".repeat(43)),
        ))
        .await;
    assert!(reply.header("location").ends_with("retype=1"));
    // Our own page's post, its cookie replaced by another tab's: it pays.
    let reply = app
        .send(post(
            vec![("Sec-Fetch-Site", "same-origin".to_owned())],
            csrf.clone(),
        ))
        .await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(reply.header("location"), format!("/pay/link/{id}?lg=en"));
    assert_eq!(app.kit.processor.authorize_calls(), 1);
}

#[actix_web::test]
async fn the_accessibility_statement_and_the_favicon_ico_are_answered() {
    let app = support::start().await;
    for lg in LANGS {
        let reply = app.browse(&format!("/pay/accessibility?lg={lg}"), "").await;
        assert_eq!(reply.status, StatusCode::OK);
        assert!(reply
            .header("content-security-policy")
            .contains("default-src 'none'"));
        assert_page!(format!("accessibility_{lg}"), reply);
    }
    // Every page links it, in its language.
    let token = app.token().await;
    let id = app.payment_link(&token, "INVOICE-A11Y").await;
    let page = app
        .browse(&format!("/pay/link/{id}?lg=en"), "")
        .await
        .text();
    assert!(page.contains(r#"<a id="accessibility-link" href="/pay/accessibility?lg=en">"#));
    let ico = app.browse("/favicon.ico", "").await;
    assert_eq!(ico.status, StatusCode::OK);
    assert_eq!(ico.header("content-type"), "image/x-icon");
    assert_eq!(&ico.body[..6], &[0, 0, 1, 0, 1, 0], "an ICO with one image");
}
