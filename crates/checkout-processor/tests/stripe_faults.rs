//! The Stripe adapter against a fault-injecting stand-in: what is sent, and how every kind of
//! failure is reported (never with card data).
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::time::{Duration, Instant};

use checkout_domain::ports::{CardProcessor, ChallengeAnswer, ProcessorError, ProcessorOutcome};
use checkout_processor::testing::stand_in::{Reply, StandIn};
use checkout_processor::{StripeConfig, StripeProcessor};
use serde_json::json;
use support::{card, Payment};

const TIMEOUT: Duration = Duration::from_millis(500);
const CARD: &str = "4242424242424242";

fn processor(base_url: url::Url) -> StripeProcessor {
    StripeProcessor::new(StripeConfig {
        base_url,
        api_key: "sk_test_stand_in".into(),
        timeout: TIMEOUT,
    })
    .expect("valid config")
}

fn payment_method() -> Reply {
    Reply::Json(
        200,
        json!({ "id": "pm_standin", "object": "payment_method" }),
    )
}

fn intent(status: &str) -> serde_json::Value {
    json!({ "id": "pi_standin", "object": "payment_intent", "status": status,
            "client_secret": "pi_standin_secret_x", "metadata": {} })
}

/// Authorises a payment against `replies` and returns the error, checked for card data.
async fn failure(replies: Vec<Reply>) -> ProcessorError {
    let stand_in = StandIn::start(replies).await;
    let payment = Payment::new(card(CARD));
    let error = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await
        .expect_err("the authorisation should fail");
    payment.assert_no_card_data(&error.to_string());
    payment.assert_no_card_data(&format!("{error:?}"));
    error
}

#[tokio::test]
async fn the_requests_carry_the_card_the_amount_and_idempotency_keys() {
    let stand_in = StandIn::start(vec![
        payment_method(),
        Reply::Json(200, intent("requires_capture")),
    ])
    .await;
    let payment = Payment::of(card(CARD), "1234.5", "CRC");
    let outcome = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Approved {
            processor_reference: "pi_standin".into(),
            captured: false,
        })
    );

    let requests = stand_in.requests();
    assert_eq!(requests.len(), 2);
    let key = payment.attempt.idempotency_key();
    let (pm, pi) = (&requests[0], &requests[1]);
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(
            request.header("authorization"),
            Some("Bearer sk_test_stand_in")
        );
        assert_eq!(
            request.header("content-type"),
            Some("application/x-www-form-urlencoded")
        );
    }

    assert_eq!(pm.target, "/v1/payment_methods");
    assert_eq!(
        pm.header("idempotency-key"),
        Some(format!("{key}-payment-method").as_str())
    );
    assert_eq!(pm.field("type").as_deref(), Some("card"));
    assert_eq!(pm.field("card[number]").as_deref(), Some(CARD));
    assert_eq!(pm.field("card[cvc]").as_deref(), Some(support::CVV));
    assert_eq!(pm.field("card[exp_month]").as_deref(), Some("12"));
    assert_eq!(
        pm.field("card[exp_year]"),
        Some(payment.card.expiry.year().to_string())
    );

    assert_eq!(pi.target, "/v1/payment_intents");
    assert_eq!(
        pi.header("idempotency-key"),
        Some(format!("{key}-payment-intent").as_str())
    );
    assert_eq!(pi.field("amount").as_deref(), Some("123450"));
    assert_eq!(pi.field("currency").as_deref(), Some("crc"));
    assert_eq!(pi.field("payment_method").as_deref(), Some("pm_standin"));
    assert_eq!(pi.field("confirm").as_deref(), Some("true"));
    assert_eq!(pi.field("return_url"), Some(payment.return_url.clone()));
    assert_eq!(
        pi.field("metadata[attempt]"),
        Some(payment.attempt.to_string())
    );
    assert_eq!(
        pi.field("metadata[session]"),
        Some(payment.session.to_string())
    );
    // The card goes to the payment method call only.
    payment.assert_no_card_data(&pi.body);
}

#[tokio::test]
async fn a_hosted_challenge_gives_its_url() {
    let mut requires_action = intent("requires_action");
    requires_action["next_action"] = json!({
        "type": "redirect_to_url",
        "redirect_to_url": { "url": "https://hooks.stripe.test/3ds/abc", "return_url": "x" }
    });
    let stand_in = StandIn::start(vec![payment_method(), Reply::Json(200, requires_action)]).await;
    let payment = Payment::new(card(CARD));
    let outcome = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference: "pi_standin".into(),
            challenge_url: Some("https://hooks.stripe.test/3ds/abc".into()),
        })
    );
}

#[tokio::test]
async fn a_server_that_hangs_is_a_communication_error_within_the_timeout() {
    let started = Instant::now();
    let error = failure(vec![Reply::Hang]).await;
    let elapsed = started.elapsed();
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
    assert!(error.to_string().contains("timed out"), "{error}");
    assert!(
        elapsed < TIMEOUT + Duration::from_secs(1),
        "took {elapsed:?} with a {TIMEOUT:?} timeout"
    );
}

#[tokio::test]
async fn a_server_that_hangs_on_the_second_call_is_a_communication_error() {
    let started = Instant::now();
    let error = failure(vec![payment_method(), Reply::Hang]).await;
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
    assert!(started.elapsed() < TIMEOUT + Duration::from_secs(1));
}

#[tokio::test]
async fn a_closed_connection_is_a_communication_error() {
    let error = failure(vec![Reply::Close]).await;
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_reset_connection_is_a_communication_error() {
    for replies in [vec![Reply::Reset], vec![payment_method(), Reply::Reset]] {
        let error = failure(replies).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn a_refused_connection_is_a_communication_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let payment = Payment::new(card(CARD));
    let base_url = url::Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    let error = processor(base_url)
        .authorize(payment.request())
        .await
        .unwrap_err();
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
    payment.assert_no_card_data(&error.to_string());
}

#[tokio::test]
async fn a_5xx_is_a_communication_error() {
    for status in [500, 502, 503] {
        let body = json!({ "error": { "type": "api_error", "message": "boom" } });
        let error = failure(vec![Reply::Json(status, body)]).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{error:?}"
        );
        assert!(
            error.to_string().contains(&format!("HTTP {status}")),
            "{error}"
        );
    }
    // Also when the payment method was made and the intent call fails.
    let error = failure(vec![payment_method(), Reply::Json(500, json!({}))]).await;
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn conflicts_and_rate_limits_are_communication_errors() {
    for (status, kind) in [
        (409, "idempotency_error"),
        (429, "rate_limit_error"),
        (400, "idempotency_error"),
    ] {
        let body = json!({ "error": { "type": kind, "message": "try later" } });
        let error = failure(vec![Reply::Json(status, body)]).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{status}: {error:?}"
        );
    }
}

#[tokio::test]
async fn an_unreadable_answer_is_a_communication_error() {
    let error = failure(vec![Reply::Json(200, json!("not an object"))]).await;
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_400_is_a_controlled_error_with_the_message_but_no_card_data() {
    // A processor that echoes the card number and CVV in its message.
    let body = json!({ "error": {
        "type": "invalid_request_error",
        "code": "parameter_invalid",
        "message": format!("Invalid card 4242 4242 4242 4242 / {CARD} with cvc {}", support::CVV),
        "param": "card[number]",
    }});
    let error = failure(vec![Reply::Json(400, body)]).await;
    let ProcessorError::Controlled(text) = &error else {
        panic!("expected a controlled error, got {error:?}");
    };
    assert!(text.contains("HTTP 400"), "{text}");
    assert!(text.contains("parameter_invalid"), "{text}");
    assert!(text.contains("Invalid card [redacted]"), "{text}");
}

#[tokio::test]
async fn other_4xx_are_controlled_errors() {
    for status in [401, 403, 404] {
        let body = json!({ "error": { "type": "invalid_request_error", "message": "no" } });
        let error = failure(vec![Reply::Json(status, body)]).await;
        assert!(
            matches!(error, ProcessorError::Controlled(_)),
            "{status}: {error:?}"
        );
    }
}

#[tokio::test]
async fn a_402_card_error_is_a_decline() {
    let body = json!({ "error": {
        "type": "card_error",
        "code": "card_declined",
        "decline_code": "insufficient_funds",
        "message": "Your card has insufficient funds.",
        "payment_intent": { "id": "pi_declined", "status": "requires_payment_method" },
    }});
    let stand_in = StandIn::start(vec![payment_method(), Reply::Json(402, body)]).await;
    let payment = Payment::new(card(CARD));
    let outcome = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Declined {
            processor_reference: Some("pi_declined".into()),
            reason: "insufficient_funds".into(),
        })
    );
}

#[tokio::test]
async fn a_402_on_the_card_itself_is_a_decline_without_reference() {
    let body = json!({ "error": {
        "type": "card_error", "code": "incorrect_number", "message": "Your card number is incorrect."
    }});
    let stand_in = StandIn::start(vec![Reply::Json(402, body)]).await;
    let payment = Payment::new(card(CARD));
    let outcome = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Declined {
            processor_reference: None,
            reason: "incorrect_number".into(),
        })
    );
}

#[tokio::test]
async fn a_server_refusing_return_url_gets_the_request_again_without_it() {
    let refusal =
        json!({ "error": { "type": "invalid_request_error", "message": "Unexpected return_url" } });
    let stand_in = StandIn::start(vec![
        payment_method(),
        Reply::Json(400, refusal),
        Reply::Json(200, intent("succeeded")),
    ])
    .await;
    let payment = Payment::new(card(CARD));
    let outcome = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert!(
        matches!(
            outcome,
            Ok(ProcessorOutcome::Approved { captured: true, .. })
        ),
        "{outcome:?}"
    );
    let requests = stand_in.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].field("return_url").is_some());
    assert!(requests[2].field("return_url").is_none());
    assert_eq!(
        requests[1].header("idempotency-key"),
        requests[2].header("idempotency-key")
    );
}

#[tokio::test]
async fn a_challenge_that_times_out_is_a_communication_error() {
    let stand_in = StandIn::start(vec![Reply::Hang]).await;
    let started = Instant::now();
    let outcome = processor(stand_in.base_url.clone())
        .complete_challenge("pi_standin", ChallengeAnswer::Passed)
        .await;
    assert!(
        matches!(outcome, Err(ProcessorError::Communication(_))),
        "{outcome:?}"
    );
    assert!(started.elapsed() < TIMEOUT + Duration::from_secs(1));
}

#[tokio::test]
async fn a_challenge_still_pending_after_authentication_is_never_reported_as_a_challenge() {
    let stand_in = StandIn::start(vec![
        Reply::Json(200, intent("requires_action")),
        Reply::Json(200, intent("requires_action")),
        Reply::Json(200, intent("requires_action")),
    ])
    .await;
    let outcome = processor(stand_in.base_url.clone())
        .complete_challenge("pi_standin", ChallengeAnswer::Passed)
        .await;
    assert!(
        matches!(outcome, Err(ProcessorError::Communication(_))),
        "{outcome:?}"
    );
    let targets: Vec<String> = stand_in.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(
        targets,
        [
            "/v1/payment_intents/pi_standin",
            "/v1/payment_intents/pi_standin/_authenticate",
            "/v1/payment_intents/pi_standin/cancel",
        ]
    );
}

#[tokio::test]
async fn lookup_that_cannot_read_every_intent_does_not_claim_no_charge() {
    // Every page has more, and none names the attempt.
    let page = json!({ "object": "list", "has_more": true, "data": [
        { "id": "pi_other", "status": "succeeded", "metadata": { "attempt": "someone-else" } }
    ]});
    let stand_in = StandIn::start(vec![Reply::Json(200, page)]).await;
    let payment = Payment::new(card(CARD));
    let found = processor(stand_in.base_url.clone())
        .lookup(payment.attempt)
        .await;
    assert!(
        matches!(found, Err(ProcessorError::Communication(_))),
        "{found:?}"
    );
    let requests = stand_in.requests();
    assert_eq!(requests.len(), 10);
    assert!(
        requests[1].target.contains("starting_after=pi_other"),
        "{}",
        requests[1].target
    );
}

#[tokio::test]
async fn lookup_pages_until_it_finds_the_attempt() {
    let payment = Payment::new(card(CARD));
    let first = json!({ "object": "list", "has_more": true, "data": [
        { "id": "pi_other", "status": "succeeded", "metadata": { "attempt": "someone-else" } }
    ]});
    let second = json!({ "object": "list", "has_more": false, "data": [
        { "id": "pi_mine", "status": "requires_capture",
          "metadata": { "attempt": payment.attempt.to_string() } }
    ]});
    let stand_in = StandIn::start(vec![Reply::Json(200, first), Reply::Json(200, second)]).await;
    let found = processor(stand_in.base_url.clone())
        .lookup(payment.attempt)
        .await;
    assert_eq!(
        found,
        Ok(Some(ProcessorOutcome::Approved {
            processor_reference: "pi_mine".into(),
            captured: false,
        }))
    );
}

#[tokio::test]
async fn lookup_when_the_server_is_down_is_an_error() {
    let stand_in = StandIn::start(vec![Reply::Json(503, json!({}))]).await;
    let payment = Payment::new(card(CARD));
    let found = processor(stand_in.base_url.clone())
        .lookup(payment.attempt)
        .await;
    assert!(
        matches!(found, Err(ProcessorError::Communication(_))),
        "{found:?}"
    );
}

#[test]
fn bad_configurations_are_refused() {
    let config = |url: &str, key: &str, timeout: Duration| StripeConfig {
        base_url: url::Url::parse(url).unwrap(),
        api_key: key.into(),
        timeout,
    };
    assert!(StripeProcessor::new(config("http://127.0.0.1:1/", "", TIMEOUT)).is_err());
    assert!(StripeProcessor::new(config("http://127.0.0.1:1/", "sk_x", Duration::ZERO)).is_err());
    assert!(StripeProcessor::new(config("ftp://127.0.0.1:1/", "sk_x", TIMEOUT)).is_err());
    let ok =
        StripeProcessor::new(config("https://api.stripe.com", "sk_test_secret", TIMEOUT)).unwrap();
    assert!(!format!("{ok:?}").contains("sk_test_secret"));
}
