//! Every ProblemDetails shape the API answers, as a snapshot of status, `Content-Type` and
//! body (the `instance` GUID redacted).

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use checkout_domain::ports::{ProcessorError, ProcessorOutcome};
use checkout_domain::values::TerminalNumber;
use serde_json::json;

use crate::support::{self, start_payment_body, Reply, MAX_BODY_BYTES};

/// The snapshot of a problem answer: its status, media type, `Retry-After`/`Allow` when
/// present, and its body.
fn problem(reply: &Reply) -> serde_json::Value {
    assert_eq!(
        reply.header("content-type"),
        "application/problem+json",
        "{}",
        reply.text()
    );
    let mut shape = json!({
        "status": reply.status.as_u16(),
        "body": reply.json(),
    });
    for header in ["allow", "retry-after", "www-authenticate"] {
        if !reply.header(header).is_empty() {
            shape[header] = json!(reply.header(header));
        }
    }
    shape
}

/// Asserts that the body's `instance` is the request's GUID, then snapshots the problem.
macro_rules! assert_problem {
    ($name:expr, $reply:expr) => {{
        let reply = &$reply;
        let shape = problem(reply);
        let instance = shape["body"]["instance"].as_str().unwrap_or_default().to_owned();
        assert!(
            uuid::Uuid::parse_str(&instance).is_ok(),
            "instance is a GUID: {instance}"
        );
        support::redacted().bind(|| {
            insta::assert_json_snapshot!($name, shape, { ".body.instance" => "[instance]" })
        });
    }};
}

#[actix_web::test]
async fn validation_400_names_every_bad_field() {
    let app = support::start().await;
    let token = app.token().await;
    let mut body = start_payment_body("ORDER-400");
    body["totalTransactionAmount"] = json!(0);
    body["currencyCode"] = json!("XXX");
    body["callbackSuccessUrl"] = json!("http://merchant.example/ok");
    body["items"][0]["quantity"] = json!("one");
    let reply = app.post_json("/pay/api/start-payment", &token, &body).await;
    assert_problem!("400_wrong_type", reply);

    body["items"][0]["quantity"] = json!(1);
    let reply = app.post_json("/pay/api/start-payment", &token, &body).await;
    assert_problem!("400_field_rules", reply);
}

/// A misspelt field (`callbackBackURL` for `callbackBackUrl`) is a 400 naming it, and
/// creates nothing: the same reference then goes through. Every other JSON body refuses an
/// unknown field the same way, nested ones with their path.
#[actix_web::test]
async fn an_unknown_field_is_a_400_naming_it() {
    let app = support::start().await;
    let token = app.token().await;
    let mut body = start_payment_body("ORDER-UNKNOWN");
    body["callbackBackURL"] = json!("https://merchant.example/cart");
    let reply = app.post_json("/pay/api/start-payment", &token, &body).await;
    assert_problem!("400_unknown_field", reply);
    let reply = app
        .post_json(
            "/pay/api/start-payment",
            &token,
            &start_payment_body("ORDER-UNKNOWN"),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());

    let session = app.start_payment(&token, "ORDER-UNKNOWN-2").await;
    let mut link = support::link_body("LINK-UNKNOWN");
    link["additionalCharges"] =
        json!([{"chargeName": "Fee", "chargeAmount": 1, "chargeCurrencyCode": "USD", "note": "x"}]);
    let cases = [
        (
            "/pay/api/generate-payment-link".to_owned(),
            link,
            "AdditionalCharges[0].Note",
        ),
        (
            format!("/pay/api/payment/{session}/capture"),
            json!({"amount": 1, "currency": "USD"}),
            "Currency",
        ),
        (
            format!("/pay/api/payment/{session}/refunds"),
            json!({"amount": 1, "reason": "x"}),
            "Reason",
        ),
        (
            "/pay/api/webhook-endpoints".to_owned(),
            json!({"url": "http://localhost:9000/hook", "enabled": true}),
            "Enabled",
        ),
    ];
    for (uri, body, field) in cases {
        let reply = app.post_json(&uri, &token, &body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{uri}: {}",
            reply.text()
        );
        let errors = &reply.json()["errors"];
        assert_eq!(
            errors.as_object().map(|e| e.len()),
            Some(1),
            "{uri}: {errors}"
        );
        assert!(errors[field].is_array(), "{uri}: {errors}");
    }
    let reply = app
        .send(
            TestRequest::post()
                .uri("/api/public/security/auth")
                .set_json(
                    json!({"client_id": "sandbox-client", "client_secret": "x", "scope": "all"}),
                ),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.text());
    assert!(
        reply.json()["errors"]["Scope"].is_array(),
        "{}",
        reply.text()
    );
}

#[actix_web::test]
async fn malformed_json_and_token_shape_are_400() {
    let app = support::start().await;
    let token = app.token().await;
    let reply = app
        .post_raw(
            "/pay/api/start-payment",
            &token,
            "application/json",
            "{\"totalTransactionAmount\": ",
        )
        .await;
    assert_problem!("400_malformed_json", reply);

    let reply = app
        .send(
            TestRequest::post()
                .uri("/api/public/security/auth")
                .set_json(json!({ "client_id": "" })),
        )
        .await;
    assert_problem!("400_token_request", reply);
}

#[actix_web::test]
async fn unauthenticated_calls_are_401() {
    let app = support::start().await;
    let reply = app
        .send(TestRequest::get().uri("/pay/api/payment/00000000-0000-4000-8000-000000000000"))
        .await;
    assert_problem!("401_no_bearer", reply);

    let reply = app
        .get_auth(
            "/pay/api/payment/00000000-0000-4000-8000-000000000000",
            "forged",
        )
        .await;
    assert_problem!("401_bad_bearer", reply);

    let reply = app
        .send(
            TestRequest::post()
                .uri("/api/public/security/auth")
                .set_json(json!({ "client_id": "client-1", "client_secret": "wrong" })),
        )
        .await;
    assert_problem!("401_bad_credentials", reply);
}

#[actix_web::test]
async fn repeated_bad_secrets_are_429_with_retry_after() {
    let app = support::start().await;
    let wrong = json!({ "client_id": "client-1", "client_secret": "wrong" });
    let mut last = None;
    for _ in 0..3 {
        last = Some(
            app.send(
                TestRequest::post()
                    .uri("/api/public/security/auth")
                    .set_json(&wrong),
            )
            .await,
        );
    }
    let reply = last.expect("three answers");
    assert_eq!(reply.status, StatusCode::TOO_MANY_REQUESTS);
    assert_problem!("429_token_failures", reply);
}

#[actix_web::test]
async fn unknown_routes_sessions_and_methods() {
    let app = support::start().await;
    let token = app.token().await;
    assert_problem!(
        "404_no_route",
        app.send(TestRequest::get().uri("/nowhere")).await
    );
    let reply = app
        .get_auth(
            "/pay/api/payment/00000000-0000-4000-8000-000000000000",
            &token,
        )
        .await;
    assert_problem!("404_svc_007_unknown_session", reply);
    let reply = app.get_auth("/pay/api/payment/not-an-id", &token).await;
    assert_problem!("404_svc_007_malformed_id", reply);
    let reply = app
        .send(TestRequest::delete().uri("/pay/api/start-payment"))
        .await;
    assert_problem!("405_start_payment", reply);
}

#[actix_web::test]
async fn bodies_too_large_or_not_json() {
    let app = support::start().await;
    let token = app.token().await;
    let reply = app
        .post_raw(
            "/pay/api/start-payment",
            &token,
            "application/json",
            vec![b' '; MAX_BODY_BYTES + 1],
        )
        .await;
    assert_problem!("413_body_too_large", reply);
    let reply = app
        .post_raw("/pay/api/start-payment", &token, "text/plain", "{}")
        .await;
    assert_problem!("415_not_json", reply);
}

#[actix_web::test]
async fn creates_refused_with_svc_001_and_svc_005() {
    let app = support::start().await;
    let token = app.token().await;
    let create = |reference: &'static str| {
        let body = start_payment_body(reference);
        let app = &app;
        let token = &token;
        async move { app.post_json("/pay/api/start-payment", token, &body).await }
    };
    app.start_payment(&token, "ORDER-DUP").await;
    assert_problem!("422_svc_001_duplicate_reference", create("ORDER-DUP").await);
    app.deactivate_terminal();
    assert_problem!("422_svc_005_inactive_terminal", create("ORDER-OFF").await);
}

#[actix_web::test]
async fn svc_008_cancel_of_a_cancelled_session() {
    let app = support::start().await;
    let token = app.token().await;
    let id = app.start_payment(&token, "ORDER-CANCEL").await;
    let cancel = format!("/pay/api/payment/{id}/cancel");
    let first = app.post_json(&cancel, &token, &json!({})).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    let reply = app.post_json(&cancel, &token, &json!({})).await;
    assert_problem!("422_svc_008_not_reversible", reply);
}

#[actix_web::test]
async fn svc_011_and_svc_009_and_svc_003_after_money_moved() {
    let app = support::start().await;
    let token = app.token().await;
    // Authorised, not captured: the capture rules apply.
    app.kit
        .processor
        .push_authorize(Ok(ProcessorOutcome::Approved {
            processor_reference: "pi_auth".to_owned(),
            captured: false,
        }));
    let id = app.payment_link(&token, "ORDER-AUTH").await;
    let page = format!("/pay/link/{id}?lg=en");
    let paid = app.pay(&page, &id, "en", "4242424242424242").await;
    assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text());
    let capture = format!("/pay/api/payment/{id}/capture");
    let reply = app
        .post_json(&capture, &token, &json!({ "amount": 99 }))
        .await;
    assert_problem!("422_svc_011_capture_above_authorised", reply);

    app.kit.processor.set_down(true);
    let reply = app.post_json(&capture, &token, &json!({})).await;
    assert_problem!("422_svc_003_processor_unreachable", reply);
    app.kit.processor.set_down(false);

    // Captured: a void is refused, and a refund the processor refuses is SVC_009.
    let captured = app.post_json(&capture, &token, &json!({})).await;
    assert_eq!(captured.status, StatusCode::OK, "{}", captured.text());
    let reply = app
        .post_json(&format!("/pay/api/payment/{id}/void"), &token, &json!({}))
        .await;
    assert_problem!("422_svc_011_void_of_captured", reply);
    app.kit
        .processor
        .push_refund(Err(ProcessorError::Controlled("refused".to_owned())));
    let reply = app
        .post_json(
            &format!("/pay/api/payment/{id}/refunds"),
            &token,
            &json!({ "amount": 5 }),
        )
        .await;
    assert_problem!("422_svc_009_refund_refused", reply);
}

#[actix_web::test]
async fn idempotency_key_reused_with_another_body_is_422() {
    let app = support::start().await;
    let token = app.token().await;
    let send = |reference: &'static str| {
        TestRequest::post()
            .uri("/pay/api/start-payment")
            .insert_header(("Authorization", format!("Bearer {token}")))
            .insert_header(("Idempotency-Key", "key-1"))
            .set_json(start_payment_body(reference))
    };
    let first = app.send(send("ORDER-IDEM-1")).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    let reply = app.send(send("ORDER-IDEM-2")).await;
    assert_problem!("422_idempotency_key_reused", reply);
    let reply = app
        .send(
            TestRequest::post()
                .uri("/pay/api/start-payment")
                .insert_header(("Authorization", format!("Bearer {token}")))
                .insert_header(("Idempotency-Key", ""))
                .set_json(start_payment_body("ORDER-IDEM-3")),
        )
        .await;
    assert_problem!("400_idempotency_key_malformed", reply);
}

#[actix_web::test]
async fn unknown_webhook_endpoint_is_404() {
    let app = support::start().await;
    let token = app.token().await;
    let reply = app
        .get_auth(
            "/pay/api/webhook-endpoints/00000000-0000-4000-8000-000000000000/deliveries",
            &token,
        )
        .await;
    assert_problem!("404_unknown_webhook_endpoint", reply);
}

#[actix_web::test]
async fn too_many_redeliveries_is_429_with_retry_after() {
    let app = support::start().await;
    let token = app.token().await;
    let reply = app
        .post_json(
            &format!("/pay/api/events/{}/redeliver", support::OVER_LIMIT_EVENT),
            &token,
            &json!({}),
        )
        .await;
    // The oldest redelivery counted was 10 minutes ago: one is allowed again in 50 minutes.
    assert_eq!(reply.header("retry-after"), "3000");
    // The route's quotas (IETF ratelimit-headers draft): 5 an hour per event, 100 per terminal.
    assert_eq!(
        reply.header("ratelimit-policy"),
        "\"event\";q=5;w=3600, \"terminal\";q=100;w=3600"
    );
    assert_problem!("429_too_many_redeliveries", reply);
}

#[actix_web::test]
async fn a_bad_deliveries_cursor_or_limit_is_400_naming_it() {
    let app = support::start().await;
    let token = app.token().await;
    let reply = app
        .get_auth(
            "/pay/api/webhook-endpoints/00000000-0000-4000-8000-000000000000/deliveries?after=1.2&limit=0",
            &token,
        )
        .await;
    assert_problem!("400_bad_deliveries_page", reply);
}

#[actix_web::test]
async fn an_unexpected_error_is_an_opaque_500_and_an_unavailable_dependency_a_503() {
    let app = support::start().await;
    let token = app.token().await;
    // The test adapters cannot store webhook endpoints: an unexpected error.
    let create = json!({ "url": "https://merchant.example/hooks" });
    let reply = app
        .post_json("/pay/api/webhook-endpoints", &token, &create)
        .await;
    assert_problem!("500_unexpected", reply);
    // Once the adapter marks such an error "unreachable", it is a 503.
    app.unreachable
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let reply = app
        .post_json("/pay/api/webhook-endpoints", &token, &create)
        .await;
    assert_problem!("503_dependency_unavailable", reply);
}

#[actix_web::test]
async fn a_retry_while_the_first_request_runs_is_409() {
    use checkout_domain::ports::{ClaimTimes, IdempotencyStore};
    use checkout_domain::values::IdempotencyKey;

    let app = support::start().await;
    let token = app.token().await;
    let body = serde_json::to_vec(&start_payment_body("ORDER-RUNNING")).expect("json");
    // The first request with the key has claimed it and not answered yet.
    let first = TestRequest::post()
        .uri("/pay/api/start-payment")
        .to_http_request();
    let now = app.kit.clock.now_value();
    app.kit
        .idempotency
        .claim(
            &TerminalNumber::parse("T-1").expect("a terminal number"),
            &IdempotencyKey::parse("key-running").expect("a key"),
            &checkout_http::idempotency::fingerprint(&first, &body),
            ClaimTimes {
                now,
                lease_until: now + time::Duration::minutes(1),
                forget_before: now - time::Duration::hours(24),
            },
        )
        .await
        .expect("claimed");
    let reply = app
        .send(
            TestRequest::post()
                .uri("/pay/api/start-payment")
                .insert_header(("Authorization", format!("Bearer {token}")))
                .insert_header(("Idempotency-Key", "key-running"))
                .insert_header(("Content-Type", "application/json"))
                .set_payload(body),
        )
        .await;
    assert_problem!("409_idempotency_key_in_progress", reply);
}
