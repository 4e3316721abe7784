//! The Stripe adapter against the scripted stand-in (`testing::stand_in`): what is sent, and
//! how every kind of failure is reported. The rules checked: a doubt about a charge is always
//! `Communication`, `Controlled` only when the processor refused and certainly holds nothing,
//! a lost answer is recovered by sending the same request with the same key (never by listing
//! or searching), and no error text ever carries card data. Last, what localstripe's dialect
//! (`testing::localstripe`) sends differently.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::time::{Duration, Instant};

use checkout_domain::ports::{CardProcessor, ProcessorError, ProcessorOutcome};
use checkout_processor::testing::localstripe::LocalstripeProcessor;
use checkout_processor::testing::stand_in::{Recorded, Reply, StandIn};
use checkout_processor::{StripeConfig, StripeProcessor};
use serde_json::{json, Value};
use support::{card, card_with, Payment, CVV};

const TIMEOUT: Duration = Duration::from_millis(500);
/// How late past the timeout a call may come back.
const SLACK: Duration = Duration::from_secs(1);
const CARD: &str = "4242424242424242";
/// The payment method the stand-in "made".
const PM: &str = "pm_standin";
/// The intent the stand-in "made".
const PI: &str = "pi_standin";

fn config(base_url: url::Url) -> StripeConfig {
    StripeConfig {
        base_url,
        api_key: "sk_test_stand_in".into(),
        timeout: TIMEOUT,
    }
}

fn processor(base_url: url::Url) -> StripeProcessor {
    StripeProcessor::new(config(base_url)).expect("valid config")
}

/// The adapter in localstripe's dialect.
fn localstripe(base_url: url::Url) -> LocalstripeProcessor {
    LocalstripeProcessor::new(config(base_url)).expect("valid config")
}

fn payment_method() -> Reply {
    Reply::Json(200, json!({ "id": PM, "object": "payment_method" }))
}

fn intent(status: &str) -> Value {
    json!({ "id": PI, "object": "payment_intent", "status": status,
            "client_secret": "pi_standin_secret_x", "metadata": {} })
}

/// A payment that was tokenized already (its payment method is [`PM`]).
fn tokenized() -> Payment {
    Payment::with_payment_method(card(CARD), PM)
}

/// An error body of `kind`, naming the intent [`PI`] when `names_intent`.
fn error_body(kind: &str, message: &str, names_intent: bool) -> Value {
    let mut body = json!({ "error": { "type": kind, "message": message } });
    if names_intent {
        body["error"]["payment_intent"] = intent("succeeded");
    }
    body
}

/// Checks that no request lists or searches: every GET reads one intent by id, and no
/// request has a query.
fn assert_no_list_or_search(requests: &[Recorded]) {
    for request in requests {
        assert!(
            !request.target.contains('?'),
            "a query: {} {}",
            request.method,
            request.target
        );
        assert!(
            !request.target.contains("search"),
            "a search: {}",
            request.target
        );
        if request.method == "GET" {
            let segments: Vec<&str> = request.path().split('/').collect();
            assert!(
                matches!(segments.as_slice(), ["", "v1", "payment_intents", id] if !id.is_empty()),
                "a GET that is not the retrieve of one intent: {}",
                request.target
            );
        }
    }
}

/// The targets of `requests`, as `METHOD path`.
fn targets(requests: &[Recorded]) -> Vec<String> {
    requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.target))
        .collect()
}

/// Authorises a tokenized payment against `replies` and returns the error, checked for card
/// data, with the requests sent.
async fn authorize_failure(replies: Vec<Reply>) -> (ProcessorError, Vec<Recorded>) {
    let stand_in = StandIn::start(replies).await;
    let payment = tokenized();
    let error = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await
        .expect_err("the authorisation should fail");
    payment.assert_error_has_no_card_data(&error);
    let requests = stand_in.requests();
    assert_no_list_or_search(&requests);
    (error, requests)
}

/// Authorises a tokenized payment against `replies` and returns the outcome.
async fn authorize_against(replies: Vec<Reply>) -> Result<ProcessorOutcome, ProcessorError> {
    let stand_in = StandIn::start(replies).await;
    let payment = tokenized();
    let outcome = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert_no_list_or_search(&stand_in.requests());
    outcome
}

fn is_communication(result: &Result<ProcessorOutcome, ProcessorError>) -> bool {
    matches!(result, Err(ProcessorError::Communication(_)))
}

// ----- what is sent -------------------------------------------------------------------------

#[tokio::test]
async fn the_payment_method_request_carries_the_card_and_its_key() {
    let stand_in = StandIn::start(vec![payment_method()]).await;
    let mut payment = Payment::new(card(CARD));
    let reference = payment
        .tokenize(&processor(stand_in.base_url.clone()))
        .await;
    assert_eq!(reference.as_deref(), Ok(PM));

    let requests = stand_in.requests();
    assert_eq!(targets(&requests), ["POST /v1/payment_methods"]);
    let pm = &requests[0];
    assert_eq!(pm.header("authorization"), Some("Bearer sk_test_stand_in"));
    assert_eq!(
        pm.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        pm.header("idempotency-key"),
        Some(format!("hc-attempt-{}-payment-method", payment.attempt).as_str())
    );
    assert_eq!(pm.field("type").as_deref(), Some("card"));
    assert_eq!(pm.field("card[number]").as_deref(), Some(CARD));
    assert_eq!(pm.field("card[cvc]").as_deref(), Some(CVV));
    assert_eq!(pm.field("card[exp_month]").as_deref(), Some("12"));
    assert_eq!(
        pm.field("card[exp_year]"),
        Some(payment.card.expiry.year().to_string())
    );
}

#[tokio::test]
async fn the_intent_request_carries_the_payment_method_the_amount_and_its_key() {
    let stand_in = StandIn::start(vec![Reply::Json(200, intent("requires_capture"))]).await;
    let mut payment = Payment::of(card(CARD), "1234.5", "CRC");
    payment.payment_method = PM.into();
    let outcome = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Approved {
            processor_reference: PI.into(),
            captured: false,
        })
    );

    let requests = stand_in.requests();
    assert_eq!(targets(&requests), ["POST /v1/payment_intents"]);
    let pi = &requests[0];
    assert_eq!(pi.header("authorization"), Some("Bearer sk_test_stand_in"));
    assert_eq!(
        pi.header("idempotency-key"),
        Some(format!("hc-attempt-{}-payment-intent", payment.attempt).as_str())
    );
    let expected: Vec<(String, String)> = [
        ("amount", "123450".to_owned()),
        ("currency", "crc".to_owned()),
        ("payment_method", PM.to_owned()),
        ("payment_method_types[0]", "card".to_owned()),
        ("confirm", "true".to_owned()),
        ("metadata[attempt]", payment.attempt.to_string()),
        ("metadata[session]", payment.session.to_string()),
        (
            "metadata[internal_reference]",
            payment.reference.as_str().to_owned(),
        ),
        ("return_url", payment.return_url.clone()),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    let mut sent = pi.form();
    sent.sort();
    let mut expected = expected;
    expected.sort();
    assert_eq!(sent, expected);
    // The card went to the payment-method call only.
    payment.assert_no_card_data(&pi.text());
}

#[tokio::test]
async fn every_send_of_one_attempt_is_the_same_request() {
    let stand_in = StandIn::start(vec![Reply::Json(200, intent("succeeded"))]).await;
    let stripe = processor(stand_in.base_url.clone());
    let payment = tokenized();
    let first = stripe.authorize(payment.request()).await;
    let second = stripe.authorize(payment.request()).await;
    assert!(
        matches!(first, Ok(ProcessorOutcome::Approved { .. })),
        "{first:?}"
    );
    assert_eq!(second, first);
    // A new adapter (a restarted service) sends it the same way too.
    let third = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert_eq!(third, first);

    let requests = stand_in.requests();
    assert_eq!(requests.len(), 3);
    let key = format!("hc-attempt-{}-payment-intent", payment.attempt);
    for request in &requests {
        assert_eq!(request.target, "/v1/payment_intents");
        assert_eq!(request.header("idempotency-key"), Some(key.as_str()));
        assert_eq!(request.form(), requests[0].form());
    }

    // Another attempt has another key.
    let other = tokenized();
    stripe.authorize(other.request()).await.unwrap();
    let requests = stand_in.requests();
    assert_ne!(requests[3].header("idempotency-key"), Some(key.as_str()));
}

#[tokio::test]
async fn a_replay_after_a_lost_answer_is_the_same_request_and_gets_the_charge() {
    for lost in [
        Reply::Hang,
        Reply::Reset,
        Reply::Close,
        Reply::Json(500, json!({})),
        Reply::Json(409, error_body("idempotency_error", "in flight", false)),
    ] {
        let stand_in =
            StandIn::start(vec![lost.clone(), Reply::Json(200, intent("succeeded"))]).await;
        let stripe = processor(stand_in.base_url.clone());
        let payment = tokenized();
        let first = stripe.authorize(payment.request()).await;
        assert!(is_communication(&first), "{lost:?}: {first:?}");
        let replay = stripe.authorize(payment.request()).await;
        assert_eq!(
            replay,
            Ok(ProcessorOutcome::Approved {
                processor_reference: PI.into(),
                captured: true,
            }),
            "{lost:?}"
        );
        let requests = stand_in.requests();
        assert_eq!(requests.len(), 2, "{lost:?}: {:?}", targets(&requests));
        assert_eq!(requests[0].target, requests[1].target);
        assert_eq!(
            requests[0].header("idempotency-key"),
            requests[1].header("idempotency-key")
        );
        assert_eq!(requests[0].form(), requests[1].form(), "{lost:?}");
        assert_no_list_or_search(&requests);
    }
}

#[tokio::test]
async fn a_hosted_challenge_gives_its_url() {
    let mut requires_action = intent("requires_action");
    requires_action["next_action"] = json!({
        "type": "redirect_to_url",
        "redirect_to_url": { "url": "https://hooks.stripe.test/3ds/abc", "return_url": "x" }
    });
    let outcome = authorize_against(vec![Reply::Json(200, requires_action)]).await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference: PI.into(),
            challenge_url: Some("https://hooks.stripe.test/3ds/abc".into()),
        })
    );
}

// ----- the intent create: failures ----------------------------------------------------------

#[tokio::test]
async fn an_intent_create_that_hangs_is_a_communication_error_within_the_timeout() {
    let started = Instant::now();
    let (error, requests) = authorize_failure(vec![Reply::Hang]).await;
    let elapsed = started.elapsed();
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
    assert!(error.to_string().contains("timed out"), "{error}");
    assert!(
        elapsed < TIMEOUT + SLACK,
        "took {elapsed:?} with a {TIMEOUT:?} timeout"
    );
    assert_eq!(requests.len(), 1);
}

#[tokio::test]
async fn a_closed_or_reset_connection_is_a_communication_error() {
    for reply in [Reply::Close, Reply::Reset] {
        let (error, _) = authorize_failure(vec![reply.clone()]).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{reply:?}: {error:?}"
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
    let base_url = url::Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    let stripe = processor(base_url);
    let mut payment = Payment::new(card(CARD));
    let error = payment.tokenize(&stripe).await.unwrap_err();
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
    payment.assert_error_has_no_card_data(&error);
    let payment = tokenized();
    let error = stripe.authorize(payment.request()).await.unwrap_err();
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_5xx_is_a_communication_error() {
    for status in [500, 502, 503, 504] {
        let body = error_body("api_error", "boom", false);
        let (error, _) = authorize_failure(vec![Reply::Json(status, body)]).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{status}: {error:?}"
        );
        assert!(
            error.to_string().contains(&format!("HTTP {status}")),
            "{error}"
        );
    }
    // Even one that names an intent: the server failed, what it did is unknown.
    let body = error_body("api_error", "boom", true);
    let (error, _) = authorize_failure(vec![Reply::Json(500, body)]).await;
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn conflicts_rate_limits_and_idempotency_errors_are_communication_errors() {
    for (status, kind) in [
        (409, "idempotency_error"),
        (409, "invalid_request_error"),
        (429, "rate_limit_error"),
        (400, "idempotency_error"),
    ] {
        let body = error_body(kind, "try later", false);
        let (error, requests) = authorize_failure(vec![Reply::Json(status, body)]).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{status} {kind}: {error:?}"
        );
        // Nothing more was sent: the service replays later with the same key.
        assert_eq!(requests.len(), 1, "{status} {kind}");
    }
}

#[tokio::test]
async fn an_unreadable_or_undecided_answer_is_a_communication_error() {
    let mut no_error = intent("requires_payment_method");
    no_error["last_payment_error"] = Value::Null;
    for body in [
        json!("not an object"),
        json!({ "id": 1, "status": "succeeded" }),
        json!({ "object": "payment_intent" }),
        intent("processing"),
        intent("requires_confirmation"),
        intent("a_status_from_the_future"),
        no_error,
    ] {
        let (error, _) = authorize_failure(vec![Reply::Json(200, body.clone())]).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{body}: {error:?}"
        );
    }
}

#[tokio::test]
async fn a_refusal_naming_no_intent_is_a_controlled_error() {
    for status in [400, 401, 403, 404] {
        let body = error_body("invalid_request_error", "no", false);
        let (error, requests) = authorize_failure(vec![Reply::Json(status, body)]).await;
        assert!(
            matches!(error, ProcessorError::Controlled(_)),
            "{status}: {error:?}"
        );
        assert!(
            error.to_string().contains(&format!("HTTP {status}")),
            "{error}"
        );
        // Refused outright: nothing else was asked.
        assert_eq!(targets(&requests), ["POST /v1/payment_intents"]);
    }
}

#[tokio::test]
async fn a_refusal_that_might_hide_an_intent_is_a_communication_error() {
    let doubtful = [
        // A body that cannot be read might have named an intent.
        (400, json!("<html>Bad Request</html>")),
        (
            400,
            json!({ "error": { "type": "invalid_request_error", "payment_intent": "pi_1" } }),
        ),
        (
            400,
            json!({ "error": { "type": "invalid_request_error", "payment_intent": {} } }),
        ),
        // An intent named by an id that cannot be asked about.
        (
            400,
            json!({ "error": { "type": "invalid_request_error", "payment_intent": { "id": "pi-1" } } }),
        ),
        // A request timeout says nothing about what was done.
        (408, error_body("invalid_request_error", "timeout", false)),
    ];
    for (status, body) in doubtful {
        let (error, _) = authorize_failure(vec![Reply::Json(status, body.clone())]).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{status} {body}: {error:?}"
        );
    }
}

#[tokio::test]
async fn a_refusal_echoing_the_card_is_a_controlled_error_without_card_data() {
    // A processor that echoes the card number in its message.
    let body = json!({ "error": {
        "type": "invalid_request_error",
        "code": "parameter_invalid",
        "message": format!("Invalid card 4242 4242 4242 4242 / {CARD} / 4242-4242-4242-4242"),
        "param": "payment_method",
    }});
    let (error, _) = authorize_failure(vec![Reply::Json(400, body)]).await;
    let ProcessorError::Controlled(text) = &error else {
        panic!("expected a controlled error, got {error:?}");
    };
    assert!(text.contains("HTTP 400"), "{text}");
    assert!(text.contains("parameter_invalid"), "{text}");
    assert!(text.contains("Invalid card [redacted]"), "{text}");
}

#[tokio::test]
async fn a_refusal_naming_an_intent_reads_that_intent() {
    let mut declined = intent("requires_payment_method");
    declined["last_payment_error"] = json!({ "type": "card_error", "code": "card_declined",
                                             "decline_code": "do_not_honor" });
    let cases = [
        (
            intent("succeeded"),
            Ok(ProcessorOutcome::Approved {
                processor_reference: PI.into(),
                captured: true,
            }),
        ),
        (
            intent("requires_capture"),
            Ok(ProcessorOutcome::Approved {
                processor_reference: PI.into(),
                captured: false,
            }),
        ),
        (
            intent("requires_action"),
            Ok(ProcessorOutcome::ChallengeRequired {
                processor_reference: PI.into(),
                challenge_url: None,
            }),
        ),
        (
            declined,
            Ok(ProcessorOutcome::Declined {
                processor_reference: Some(PI.into()),
                reason: "do_not_honor".into(),
            }),
        ),
        (
            intent("canceled"),
            Ok(ProcessorOutcome::Canceled {
                processor_reference: PI.into(),
            }),
        ),
    ];
    for (held, expected) in cases {
        // A 400 about an intent that exists (for example, it was confirmed already).
        let refusal = error_body(
            "invalid_request_error",
            "This PaymentIntent's payment_method could not be updated",
            true,
        );
        let stand_in = StandIn::answering(move |request| match request.method.as_str() {
            "POST" => Reply::Json(400, refusal.clone()),
            _ => Reply::Json(200, held.clone()),
        })
        .await;
        let payment = tokenized();
        let outcome = processor(stand_in.base_url.clone())
            .authorize(payment.request())
            .await;
        assert_eq!(outcome, expected);
        let requests = stand_in.requests();
        assert_eq!(
            targets(&requests),
            [
                "POST /v1/payment_intents",
                "GET /v1/payment_intents/pi_standin"
            ]
        );
        assert_no_list_or_search(&requests);
    }
}

#[tokio::test]
async fn a_refusal_naming_an_intent_that_cannot_be_read_is_a_communication_error() {
    for read in [
        Reply::Json(404, error_body("invalid_request_error", "No such", false)),
        Reply::Json(500, json!({})),
        Reply::Reset,
        Reply::Hang,
    ] {
        let refusal = error_body("invalid_request_error", "already confirmed", true);
        let (error, requests) =
            authorize_failure(vec![Reply::Json(400, refusal), read.clone()]).await;
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{read:?}: {error:?}"
        );
        assert_eq!(requests.len(), 2, "{read:?}");
    }
}

#[tokio::test]
async fn a_402_is_a_decline() {
    let body = json!({ "error": {
        "type": "card_error",
        "code": "card_declined",
        "decline_code": "insufficient_funds",
        "message": "Your card has insufficient funds.",
        "payment_intent": { "id": "pi_declined", "status": "requires_payment_method" },
    }});
    let outcome = authorize_against(vec![Reply::Json(402, body)]).await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Declined {
            processor_reference: Some("pi_declined".into()),
            reason: "insufficient_funds".into(),
        })
    );

    let body = json!({ "error": {
        "type": "card_error", "code": "expired_card", "message": "Your card has expired."
    }});
    let outcome = authorize_against(vec![Reply::Json(402, body)]).await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Declined {
            processor_reference: None,
            reason: "expired_card".into(),
        })
    );
}

#[tokio::test]
async fn a_decline_reason_never_carries_card_data() {
    let body = json!({ "error": {
        "type": "card_error", "code": format!("card_{CARD}"), "message": "declined",
    }});
    let outcome = authorize_against(vec![Reply::Json(402, body)]).await;
    let Ok(ProcessorOutcome::Declined { reason, .. }) = &outcome else {
        panic!("expected a decline, got {outcome:?}");
    };
    tokenized().assert_no_card_data(reason);
}

#[tokio::test]
async fn a_refused_return_url_is_a_controlled_error_and_never_dropped() {
    // localstripe's refusal: the adapter speaks Stripe's API and does not send the intent
    // again without `return_url`, now or for the next attempt.
    let refusal = error_body("invalid_request_error", "Unexpected return_url", false);
    let stand_in = StandIn::start(vec![Reply::Json(400, refusal)]).await;
    let stripe = processor(stand_in.base_url.clone());
    let payments = [tokenized(), tokenized()];
    for payment in &payments {
        let error = stripe.authorize(payment.request()).await.unwrap_err();
        assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
        assert!(error.to_string().contains("HTTP 400"), "{error}");
    }
    let requests = stand_in.requests();
    assert_eq!(
        targets(&requests),
        ["POST /v1/payment_intents", "POST /v1/payment_intents"]
    );
    for (request, payment) in requests.iter().zip(&payments) {
        assert_eq!(
            request.field("return_url"),
            Some(payment.return_url.clone())
        );
    }
}

// ----- the payment-method create ------------------------------------------------------------

#[tokio::test]
async fn a_failed_payment_method_request_is_an_error_and_no_intent_is_asked_for() {
    let refused = |status| Reply::Json(status, error_body("invalid_request_error", "no", false));
    let cases: Vec<(Reply, bool)> = vec![
        // (the reply, whether the outcome is unknown: Communication)
        (Reply::Hang, true),
        (Reply::Close, true),
        (Reply::Reset, true),
        (Reply::Json(500, json!({})), true),
        (Reply::Json(503, json!({})), true),
        (
            Reply::Json(409, error_body("idempotency_error", "x", false)),
            true,
        ),
        (
            Reply::Json(429, error_body("rate_limit_error", "x", false)),
            true,
        ),
        (Reply::Json(200, json!("not an object")), true),
        (refused(400), false),
        (refused(401), false),
        (refused(404), false),
        (
            Reply::Json(
                402,
                error_body("card_error", "Your card was declined.", false),
            ),
            false,
        ),
    ];
    for (reply, unknown) in cases {
        let stand_in = StandIn::start(vec![reply.clone(), payment_method()]).await;
        let stripe = processor(stand_in.base_url.clone());
        let mut payment = Payment::new(card(CARD));
        let started = Instant::now();
        let error = payment.pay(&stripe).await.unwrap_err();
        assert!(started.elapsed() < TIMEOUT + SLACK, "{reply:?}");
        if unknown {
            assert!(
                matches!(error, ProcessorError::Communication(_)),
                "{reply:?}: {error:?}"
            );
        } else {
            assert!(
                matches!(error, ProcessorError::Controlled(_)),
                "{reply:?}: {error:?}"
            );
        }
        payment.assert_error_has_no_card_data(&error);
        assert_eq!(
            targets(&stand_in.requests()),
            ["POST /v1/payment_methods"],
            "{reply:?}"
        );
    }
}

#[tokio::test]
async fn a_payment_method_refusal_echoing_the_card_has_no_card_data() {
    let number = "4000000000000077";
    let cvv = "319";
    for status in [400, 402, 404, 500] {
        let body = json!({ "error": {
            "type": "card_error",
            "code": "incorrect_cvc",
            "message": format!(
                "card {number} (4000 0000 0000 0077, 4000-0000-0000-0077) with cvc {cvv}; cvc={cvv}"
            ),
            "decline_code": format!("{cvv}"),
            "param": "card[cvc]",
        }});
        let stand_in = StandIn::start(vec![Reply::Json(status, body)]).await;
        let mut payment = Payment::new(card_with(number, cvv));
        let error = payment
            .tokenize(&processor(stand_in.base_url.clone()))
            .await
            .unwrap_err();
        payment.assert_error_has_no_card_data(&error);
    }
}

// ----- retrieve -----------------------------------------------------------------------------

#[tokio::test]
async fn retrieve_reads_the_intent_by_id() {
    let mut declined = intent("requires_payment_method");
    declined["last_payment_error"] = json!({ "type": "card_error", "code": "card_declined" });
    let cases = [
        (
            intent("succeeded"),
            ProcessorOutcome::Approved {
                processor_reference: PI.into(),
                captured: true,
            },
        ),
        (
            intent("requires_capture"),
            ProcessorOutcome::Approved {
                processor_reference: PI.into(),
                captured: false,
            },
        ),
        (
            intent("requires_action"),
            ProcessorOutcome::ChallengeRequired {
                processor_reference: PI.into(),
                challenge_url: None,
            },
        ),
        (
            declined,
            ProcessorOutcome::Declined {
                processor_reference: Some(PI.into()),
                reason: "card_declined".into(),
            },
        ),
        (
            intent("canceled"),
            ProcessorOutcome::Canceled {
                processor_reference: PI.into(),
            },
        ),
    ];
    for (held, expected) in cases {
        let stand_in = StandIn::start(vec![Reply::Json(200, held)]).await;
        let outcome = processor(stand_in.base_url.clone()).retrieve(PI).await;
        assert_eq!(outcome, Ok(expected));
        let requests = stand_in.requests();
        assert_eq!(targets(&requests), ["GET /v1/payment_intents/pi_standin"]);
        assert_eq!(requests[0].header("idempotency-key"), None);
    }
}

#[tokio::test]
async fn a_retrieve_that_fails_is_a_communication_error_never_nothing() {
    for reply in [
        // 404: never "there is no charge".
        Reply::Json(
            404,
            error_body("invalid_request_error", "No such payment_intent", false),
        ),
        Reply::Json(400, error_body("invalid_request_error", "no", false)),
        Reply::Json(401, error_body("invalid_request_error", "no", false)),
        Reply::Json(500, json!({})),
        Reply::Json(200, json!("not an object")),
        Reply::Json(200, intent("processing")),
        Reply::Json(200, intent("requires_confirmation")),
        Reply::Reset,
        Reply::Hang,
    ] {
        let stand_in = StandIn::start(vec![reply.clone()]).await;
        let started = Instant::now();
        let outcome = processor(stand_in.base_url.clone()).retrieve(PI).await;
        assert!(is_communication(&outcome), "{reply:?}: {outcome:?}");
        assert!(started.elapsed() < TIMEOUT + SLACK, "{reply:?}");
    }
}

// ----- cancel -------------------------------------------------------------------------------

#[tokio::test]
async fn cancel_posts_the_cancel_without_an_idempotency_key() {
    let stand_in = StandIn::start(vec![Reply::Json(200, intent("canceled"))]).await;
    let outcome = processor(stand_in.base_url.clone()).cancel(PI).await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Canceled {
            processor_reference: PI.into(),
        })
    );
    let requests = stand_in.requests();
    assert_eq!(
        targets(&requests),
        ["POST /v1/payment_intents/pi_standin/cancel"]
    );
    assert_eq!(requests[0].header("idempotency-key"), None);
}

#[tokio::test]
async fn a_refused_cancel_reports_what_the_intent_holds() {
    // Stripe refuses to cancel a succeeded intent (400): the money was taken, and that is
    // what the adapter must say.
    let refusal = error_body(
        "invalid_request_error",
        "You cannot cancel this PaymentIntent because it has a status of succeeded.",
        true,
    );
    let stand_in = StandIn::start(vec![
        Reply::Json(400, refusal),
        Reply::Json(200, intent("succeeded")),
    ])
    .await;
    let outcome = processor(stand_in.base_url.clone()).cancel(PI).await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Approved {
            processor_reference: PI.into(),
            captured: true,
        })
    );
    let requests = stand_in.requests();
    assert_eq!(
        targets(&requests),
        [
            "POST /v1/payment_intents/pi_standin/cancel",
            "GET /v1/payment_intents/pi_standin"
        ]
    );
}

#[tokio::test]
async fn a_cancel_whose_outcome_is_unknown_is_a_communication_error() {
    let refusal = || Reply::Json(400, error_body("invalid_request_error", "no", false));
    for replies in [
        vec![Reply::Json(500, json!({}))],
        vec![Reply::Reset],
        vec![Reply::Json(429, error_body("rate_limit_error", "x", false))],
        vec![Reply::Json(200, json!("not an object"))],
        // Refused, and the intent cannot be read either.
        vec![refusal(), Reply::Json(404, json!({}))],
        vec![refusal(), Reply::Json(500, json!({}))],
    ] {
        let stand_in = StandIn::start(replies.clone()).await;
        let outcome = processor(stand_in.base_url.clone()).cancel(PI).await;
        assert!(is_communication(&outcome), "{replies:?}: {outcome:?}");
        assert_no_list_or_search(&stand_in.requests());
    }
}

// ----- answer_challenge ---------------------------------------------------------------------

#[tokio::test]
async fn answering_a_challenge_sends_nothing_because_stripe_hosts_it() {
    // The payer answers on Stripe's page; the adapter cannot answer for them. A refusal
    // (`Controlled`) tells the caller to read the intent with `retrieve`.
    let stand_in = StandIn::start(vec![Reply::Json(200, intent("requires_action"))]).await;
    let stripe = processor(stand_in.base_url.clone());
    for passed in [true, false] {
        let outcome = stripe.answer_challenge(PI, passed).await;
        assert!(
            matches!(&outcome, Err(ProcessorError::Controlled(text)) if text.contains("Stripe's page")),
            "passed: {passed}: {outcome:?}"
        );
    }
    assert!(
        stand_in.requests().is_empty(),
        "{:?}",
        targets(&stand_in.requests())
    );
}

// ----- every call ---------------------------------------------------------------------------

#[tokio::test]
async fn every_call_to_a_server_that_hangs_is_a_communication_error_within_the_timeout() {
    let stand_in = StandIn::start(vec![Reply::Hang]).await;
    let stripe = processor(stand_in.base_url.clone());

    let mut payment = Payment::new(card(CARD));
    let started = Instant::now();
    let error = payment.tokenize(&stripe).await.unwrap_err();
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "tokenize: {error:?}"
    );
    assert!(started.elapsed() < TIMEOUT + SLACK, "tokenize");
    payment.assert_error_has_no_card_data(&error);

    let started = Instant::now();
    let outcome = stripe.authorize(tokenized().request()).await;
    assert!(is_communication(&outcome), "authorize: {outcome:?}");
    assert!(started.elapsed() < TIMEOUT + SLACK, "authorize");

    let started = Instant::now();
    let outcome = stripe.retrieve(PI).await;
    assert!(is_communication(&outcome), "retrieve: {outcome:?}");
    assert!(started.elapsed() < TIMEOUT + SLACK, "retrieve");

    let started = Instant::now();
    let outcome = stripe.cancel(PI).await;
    assert!(is_communication(&outcome), "cancel: {outcome:?}");
    assert!(started.elapsed() < TIMEOUT + SLACK, "cancel");

    // The production adapter's answer_challenge calls nothing (above); localstripe's does.
    let started = Instant::now();
    let outcome = localstripe(stand_in.base_url.clone())
        .answer_challenge(PI, true)
        .await;
    assert!(is_communication(&outcome), "answer_challenge: {outcome:?}");
    assert!(started.elapsed() < TIMEOUT + SLACK, "answer_challenge");
}

#[tokio::test]
async fn no_call_ever_lists_or_searches() {
    // A whole payment's life against a server that loses the first intent answer and refuses
    // the cancel: every recovery is a replay or a retrieve by id.
    let intent_creates = std::sync::atomic::AtomicUsize::new(0);
    let stand_in =
        StandIn::answering(
            move |request| match (request.method.as_str(), request.path()) {
                ("POST", "/v1/payment_methods") => payment_method(),
                ("POST", "/v1/payment_intents") => {
                    if intent_creates.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        Reply::Json(503, json!({}))
                    } else {
                        Reply::Json(200, intent("succeeded"))
                    }
                }
                ("POST", path) if path.ends_with("/cancel") => Reply::Json(
                    400,
                    error_body("invalid_request_error", "status of succeeded", true),
                ),
                ("GET", _) => Reply::Json(200, intent("succeeded")),
                _ => Reply::Json(404, json!({})),
            },
        )
        .await;
    let stripe = processor(stand_in.base_url.clone());
    let mut payment = Payment::new(card(CARD));
    assert!(is_communication(&payment.pay(&stripe).await));
    let approved = Ok(ProcessorOutcome::Approved {
        processor_reference: PI.into(),
        captured: true,
    });
    assert_eq!(stripe.authorize(payment.request()).await, approved);
    assert_eq!(stripe.retrieve(PI).await, approved);
    assert_eq!(stripe.cancel(PI).await, approved);
    assert_eq!(
        localstripe(stand_in.base_url.clone())
            .answer_challenge(PI, true)
            .await,
        approved
    );

    let requests = stand_in.requests();
    assert_no_list_or_search(&requests);
    assert_eq!(
        targets(&requests),
        [
            "POST /v1/payment_methods",
            "POST /v1/payment_intents",
            "POST /v1/payment_intents",
            "GET /v1/payment_intents/pi_standin",
            "POST /v1/payment_intents/pi_standin/cancel",
            "GET /v1/payment_intents/pi_standin",
            "GET /v1/payment_intents/pi_standin",
        ]
    );
}

#[tokio::test]
async fn a_malformed_reference_never_reaches_the_server() {
    let stand_in = StandIn::start(vec![Reply::Json(200, intent("succeeded"))]).await;
    let stripe = processor(stand_in.base_url.clone());
    for reference in [
        "",
        "pi_1/../../v1/charges",
        "pi_1?success=true",
        "pi_1#x",
        "pi 1",
    ] {
        for (call, outcome) in [
            ("retrieve", stripe.retrieve(reference).await),
            ("cancel", stripe.cancel(reference).await),
            (
                "answer_challenge",
                localstripe(stand_in.base_url.clone())
                    .answer_challenge(reference, true)
                    .await,
            ),
        ] {
            // Nothing is sent: cancel and answer refuse the call; a read that cannot be made
            // says nothing about a charge, so it is a communication error.
            let expected = if call == "retrieve" {
                matches!(outcome, Err(ProcessorError::Communication(_)))
            } else {
                matches!(outcome, Err(ProcessorError::Controlled(_)))
            };
            assert!(expected, "{call} {reference:?}: {outcome:?}");
        }
    }
    assert!(stand_in.requests().is_empty(), "{:?}", stand_in.requests());
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

// ----- localstripe's dialect (`testing::localstripe`) -----------------------------------------

#[tokio::test]
async fn localstripes_intent_request_is_stripes_without_return_url() {
    let stand_in = StandIn::start(vec![Reply::Json(200, intent("succeeded"))]).await;
    let payment = tokenized();
    let stripe = processor(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    let dialect = localstripe(stand_in.base_url.clone())
        .authorize(payment.request())
        .await;
    assert_eq!(dialect, stripe);
    assert!(
        matches!(dialect, Ok(ProcessorOutcome::Approved { .. })),
        "{dialect:?}"
    );

    let requests = stand_in.requests();
    assert_eq!(
        targets(&requests),
        ["POST /v1/payment_intents", "POST /v1/payment_intents"]
    );
    assert_eq!(
        requests[0].field("return_url"),
        Some(payment.return_url.clone())
    );
    let mut without_return_url = requests[0].form();
    without_return_url.retain(|(name, _)| name != "return_url");
    assert_eq!(requests[1].form(), without_return_url);
    assert_eq!(
        requests[1].header("idempotency-key"),
        requests[0].header("idempotency-key")
    );
}

#[tokio::test]
async fn answering_a_challenge_authenticates_with_the_client_secret() {
    for (passed, after) in [(true, "succeeded"), (false, "requires_payment_method")] {
        let mut settled = intent(after);
        if !passed {
            settled["last_payment_error"] =
                json!({ "code": "payment_intent_authentication_failure" });
        }
        let stand_in = StandIn::start(vec![
            Reply::Json(200, intent("requires_action")),
            Reply::Json(200, settled),
        ])
        .await;
        let outcome = localstripe(stand_in.base_url.clone())
            .answer_challenge(PI, passed)
            .await;
        let expected = if passed {
            ProcessorOutcome::Approved {
                processor_reference: PI.into(),
                captured: true,
            }
        } else {
            ProcessorOutcome::Declined {
                processor_reference: Some(PI.into()),
                reason: "payment_intent_authentication_failure".into(),
            }
        };
        assert_eq!(outcome, Ok(expected));
        let requests = stand_in.requests();
        assert_eq!(
            targets(&requests),
            [
                "GET /v1/payment_intents/pi_standin",
                "POST /v1/payment_intents/pi_standin/_authenticate"
            ]
        );
        let authenticate = &requests[1];
        assert_eq!(
            authenticate.field("client_secret").as_deref(),
            Some("pi_standin_secret_x")
        );
        assert_eq!(
            authenticate.field("success"),
            Some(passed.to_string()),
            "passed: {passed}"
        );
    }
}

#[tokio::test]
async fn answering_a_settled_payment_returns_what_it_holds_without_authenticating() {
    for (held, expected) in [
        (
            intent("succeeded"),
            ProcessorOutcome::Approved {
                processor_reference: PI.into(),
                captured: true,
            },
        ),
        (
            intent("canceled"),
            ProcessorOutcome::Canceled {
                processor_reference: PI.into(),
            },
        ),
    ] {
        let stand_in = StandIn::start(vec![Reply::Json(200, held)]).await;
        let outcome = localstripe(stand_in.base_url.clone())
            .answer_challenge(PI, true)
            .await;
        assert_eq!(outcome, Ok(expected));
        assert_eq!(
            targets(&stand_in.requests()),
            ["GET /v1/payment_intents/pi_standin"]
        );
    }
}
