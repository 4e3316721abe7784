//! POST /pay/api/start-payment (spec 2.2, 2.3, 4.2, 7.3, 7.4).

use checkout_domain::auth::Role;
use serde_json::{json, Value};

use crate::support::{Mode, TestServer};
use crate::{assert_svc, assert_validation, is_guid, start_body, with, without};

const START: &str = "/pay/api/start-payment";

#[tokio::test]
async fn a_valid_request_creates_a_session_and_answers_its_two_ids() {
    let server = TestServer::sandbox("start-ok").await;
    let token = server.token().await;
    let first = server
        .post(START, Some(&token), &start_body("ORDER-1"))
        .await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.content_type(), "application/json");
    let mut keys: Vec<&String> = first.body.as_object().expect("object").keys().collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "checkoutSessionId",
            "checkoutUrl",
            "expirationDateTime",
            "internalTransactionReferenceNumber"
        ]
    );
    assert!(is_guid(first.str("checkoutSessionId")));
    assert!(
        first.str("checkoutUrl").starts_with("http://")
            && first.str("checkoutUrl").ends_with(&format!(
                "/pay/checkout-payment/{}",
                first.str("checkoutSessionId")
            )),
        "{}",
        first.body
    );
    assert!(!first.str("internalTransactionReferenceNumber").is_empty());

    let second = server
        .post(START, Some(&token), &start_body("ORDER-2"))
        .await;
    assert_eq!(second.status, 200);
    assert_ne!(
        first.str("checkoutSessionId"),
        second.str("checkoutSessionId")
    );
    assert_ne!(
        first.str("internalTransactionReferenceNumber"),
        second.str("internalTransactionReferenceNumber")
    );
}

#[tokio::test]
async fn only_the_required_fields_are_enough() {
    let server = TestServer::sandbox("start-minimal").await;
    let token = server.token().await;
    let body = json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "http://localhost:3000/fail",
        "totalTransactionAmount": 1,
        "currencyCode": "CRC",
        "transactionReferenceNumber": "MIN-1"
    });
    let reply = server.post(START, Some(&token), &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test]
async fn each_missing_required_field_is_named_in_the_errors() {
    let server = TestServer::sandbox("start-missing").await;
    let token = server.token().await;
    for (json_name, key) in [
        ("callbackSuccessUrl", "CallbackSuccessUrl"),
        ("callbackFailUrl", "CallbackFailUrl"),
        ("totalTransactionAmount", "TotalTransactionAmount"),
        ("currencyCode", "CurrencyCode"),
        ("transactionReferenceNumber", "TransactionReferenceNumber"),
    ] {
        let reply = server
            .post(
                START,
                Some(&token),
                &without(start_body("MISSING-1"), json_name),
            )
            .await;
        let mut expected = serde_json::Map::new();
        expected.insert(key.into(), json!([format!("The {key} field is required.")]));
        assert_validation(&reply, Value::Object(expected));
    }
    // Blank strings count as missing.
    let reply = server
        .post(
            START,
            Some(&token),
            &with(
                start_body("MISSING-2"),
                "transactionReferenceNumber",
                json!("  "),
            ),
        )
        .await;
    assert_validation(
        &reply,
        json!({ "TransactionReferenceNumber": ["The TransactionReferenceNumber field is required."] }),
    );
}

#[tokio::test]
async fn every_missing_field_is_reported_at_once() {
    let server = TestServer::sandbox("start-empty").await;
    let token = server.token().await;
    let reply = server.post(START, Some(&token), &json!({})).await;
    assert_validation(
        &reply,
        json!({
            "CallbackSuccessUrl": ["The CallbackSuccessUrl field is required."],
            "CallbackFailUrl": ["The CallbackFailUrl field is required."],
            "CurrencyCode": ["The CurrencyCode field is required."],
            "TotalTransactionAmount": ["The TotalTransactionAmount field is required."],
            "TransactionReferenceNumber": ["The TransactionReferenceNumber field is required."]
        }),
    );
}

#[tokio::test]
async fn each_invalid_field_is_named_with_its_rule() {
    let server = TestServer::sandbox("start-invalid").await;
    let token = server.token().await;
    let base = start_body("INVALID-1");
    let cases: Vec<(Value, Value)> = vec![
        (
            with(base.clone(), "totalTransactionAmount", json!(0)),
            json!({ "TotalTransactionAmount": ["TotalTransactionAmount must be greater than 0."] }),
        ),
        (
            with(base.clone(), "totalTransactionAmount", json!(-5)),
            json!({ "TotalTransactionAmount": ["TotalTransactionAmount must be greater than 0."] }),
        ),
        (
            with(base.clone(), "totalTransactionAmount", json!(10.001)),
            json!({ "TotalTransactionAmount": ["TotalTransactionAmount must have at most 2 decimal places for USD."] }),
        ),
        (
            with(base.clone(), "totalTransactionAmount", json!("ten")),
            json!({ "TotalTransactionAmount": ["TotalTransactionAmount has a value of the wrong type or format."] }),
        ),
        (
            with(base.clone(), "currencyCode", json!("DOLLARS")),
            json!({ "CurrencyCode": ["CurrencyCode must be an ISO 4217 currency code such as CRC or USD."] }),
        ),
        (
            with(
                base.clone(),
                "callbackSuccessUrl",
                json!("merchant.example/ok"),
            ),
            json!({ "CallbackSuccessUrl": ["CallbackSuccessUrl must be an absolute http or https URL."] }),
        ),
        (
            with(
                base.clone(),
                "callbackFailUrl",
                json!("ftp://merchant.example/fail"),
            ),
            json!({ "CallbackFailUrl": ["CallbackFailUrl must be an absolute http or https URL."] }),
        ),
        (
            with(
                base.clone(),
                "callbackBackUrl",
                json!("javascript:alert(1)"),
            ),
            json!({ "CallbackBackUrl": ["CallbackBackUrl must be an absolute http or https URL."] }),
        ),
        (
            with(base.clone(), "userEmail", json!("not-an-email")),
            json!({ "UserEmail": ["UserEmail must be a valid email address."] }),
        ),
        (
            with(base.clone(), "culture", json!("fr")),
            json!({ "Culture": ["Culture must be one of: es, en."] }),
        ),
        (
            with(
                base.clone(),
                "items",
                json!([{ "itemCode": "A", "quantity": 1, "description": "x", "amount": 1, "currencyCode": "CRC" }]),
            ),
            json!({ "Items[0].CurrencyCode": ["Items[0].CurrencyCode must equal CurrencyCode (USD)."] }),
        ),
        (
            with(
                base.clone(),
                "additionalCharges",
                json!([{ "chargeName": "Fee", "chargeAmount": 1, "chargeCurrencyCode": "EUR" }]),
            ),
            json!({ "AdditionalCharges[0].ChargeCurrencyCode": ["AdditionalCharges[0].ChargeCurrencyCode must equal CurrencyCode (USD)."] }),
        ),
        (
            with(
                base.clone(),
                "items",
                json!([{ "itemCode": "A", "quantity": 2.5, "description": "x", "amount": 1, "currencyCode": "USD" }]),
            ),
            json!({ "Items[0].Quantity": ["Items[0].Quantity has a value of the wrong type or format."] }),
        ),
    ];
    for (body, errors) in cases {
        let reply = server.post(START, Some(&token), &body).await;
        assert_validation(&reply, errors);
    }

    // None of those refusals created anything: the reference is still free.
    let reply = server.post(START, Some(&token), &base).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test]
async fn a_whole_quantity_written_with_a_decimal_point_is_a_quantity() {
    // JSON Schema's `integer` includes 3.0; generated clients may send it so.
    let server = TestServer::sandbox("start-whole").await;
    let token = server.token().await;
    let body = with(
        start_body("WHOLE-1"),
        "items",
        json!([{ "itemCode": "A", "quantity": 3.0, "description": "x", "amount": 1, "currencyCode": "USD" }]),
    );
    let reply = server.post(START, Some(&token), &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.body["checkoutSessionId"].as_str().unwrap();
    let record = server
        .get(&format!("/pay/api/payment/{id}"), Some(&token))
        .await;
    assert_eq!(record.body["state"], "Pending", "{}", record.body);
}

#[tokio::test]
async fn a_reused_reference_on_the_same_terminal_is_svc_001() {
    let server = TestServer::sandbox("start-dup").await;
    let token = server.token().await;
    let first = server.post(START, Some(&token), &start_body("DUP-1")).await;
    assert_eq!(first.status, 200);
    let again = server.post(START, Some(&token), &start_body("DUP-1")).await;
    assert_svc(
        &again,
        "SVC_001",
        422,
        "Payment session already exists",
        "The payment session already exists.",
    );
}

#[tokio::test]
async fn two_terminals_may_use_the_same_reference_and_never_see_each_other() {
    let server = TestServer::sandbox("start-two-terminals").await;
    server.add_terminal("T-TWO", true).await;
    let (id, secret) = server.add_client("T-TWO", vec![Role::SvcTerminal]).await;
    let mine = server.token().await;
    let theirs = server.token_for(&id, &secret).await;

    let a = server
        .post(START, Some(&mine), &start_body("SHARED-1"))
        .await;
    let b = server
        .post(START, Some(&theirs), &start_body("SHARED-1"))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(b.status, 200, "{}", b.body);
    assert_ne!(a.str("checkoutSessionId"), b.str("checkoutSessionId"));

    // Each reads its own, and the other's is "not found", exactly like an unknown id.
    let own = server
        .get(
            &format!("/pay/api/payment/{}", b.str("checkoutSessionId")),
            Some(&theirs),
        )
        .await;
    assert_eq!(own.status, 200);
    assert_eq!(own.body["terminalNumber"], "T-TWO");
    let other = server
        .get(
            &format!("/pay/api/payment/{}", b.str("checkoutSessionId")),
            Some(&mine),
        )
        .await;
    assert_svc(
        &other,
        "SVC_007",
        404,
        "Payment not found",
        "Specified payment not found.",
    );
}

#[tokio::test]
async fn the_terminal_comes_from_the_token_and_may_not_be_another() {
    let server = TestServer::sandbox("start-terminal").await;
    server.add_terminal("T-OTHER", true).await;
    let token = server.token().await;

    // Omitted: resolved from the client_id (spec 5.4).
    let omitted = server
        .post(START, Some(&token), &start_body("TERM-1"))
        .await;
    assert_eq!(omitted.status, 200);
    let status = server
        .get(
            &format!("/pay/api/payment/{}", omitted.str("checkoutSessionId")),
            Some(&token),
        )
        .await;
    assert_eq!(status.body["terminalNumber"], server.terminal.as_str());

    // Its own number, explicitly: fine.
    let own = with(
        start_body("TERM-2"),
        "terminalNumber",
        json!(server.terminal),
    );
    assert_eq!(server.post(START, Some(&token), &own).await.status, 200);

    // Another terminal's number, or one never provisioned: SVC_005.
    for number in ["T-OTHER", "T-NOWHERE"] {
        let body = with(start_body("TERM-3"), "terminalNumber", json!(number));
        let reply = server.post(START, Some(&token), &body).await;
        assert_svc(
            &reply,
            "SVC_005",
            422,
            "Terminal not registered",
            "The terminalNumber is not the terminal of the authenticated client.",
        );
    }
}

#[tokio::test]
async fn a_deactivated_terminal_is_svc_005() {
    let server = TestServer::sandbox("start-inactive").await;
    let token = server.token().await;
    server.set_terminal_active(&server.terminal, false).await;
    let reply = server.post(START, Some(&token), &start_body("OFF-1")).await;
    assert_svc(
        &reply,
        "SVC_005",
        422,
        "Terminal not registered",
        "Payment terminal not registered in the system.",
    );
    server.set_terminal_active(&server.terminal, true).await;
    let reply = server.post(START, Some(&token), &start_body("OFF-1")).await;
    assert_eq!(
        reply.status, 200,
        "the refused reference was not taken: {}",
        reply.body
    );
}

#[tokio::test]
async fn callback_urls_follow_the_environment_rule_and_never_carry_credentials() {
    let sandbox = TestServer::sandbox("start-callback-sandbox").await;
    let token = sandbox.token().await;
    let local = with(
        start_body("CB-1"),
        "callbackSuccessUrl",
        json!("http://localhost:3000/ok"),
    );
    assert_eq!(sandbox.post(START, Some(&token), &local).await.status, 200);
    let remote = with(
        start_body("CB-2"),
        "callbackFailUrl",
        json!("http://merchant.example/fail"),
    );
    assert_validation(
        &sandbox.post(START, Some(&token), &remote).await,
        json!({ "CallbackFailUrl": ["CallbackFailUrl must use https (plain http is allowed only to localhost in the sandbox)."] }),
    );
    let credentials = with(
        start_body("CB-3"),
        "callbackBackUrl",
        json!("https://shop:hunter2@merchant.example/cart"),
    );
    let reply = sandbox.post(START, Some(&token), &credentials).await;
    assert_validation(
        &reply,
        json!({ "CallbackBackUrl": ["CallbackBackUrl must not contain a user name or password."] }),
    );
    assert!(
        !reply.text.contains("hunter2"),
        "the password is not echoed"
    );

    let production = TestServer::start("start-callback-production", Mode::Production, &[]).await;
    production.add_terminal("T-PROD", true).await;
    let (id, secret) = production
        .add_client("T-PROD", vec![Role::SvcTerminal])
        .await;
    let token = production.token_for(&id, &secret).await;
    let local = with(
        start_body("CB-4"),
        "callbackSuccessUrl",
        json!("http://localhost:3000/ok"),
    );
    assert_validation(
        &production.post(START, Some(&token), &local).await,
        json!({ "CallbackSuccessUrl": ["CallbackSuccessUrl must use https."] }),
    );
    assert_eq!(
        production
            .post(START, Some(&token), &start_body("CB-4"))
            .await
            .status,
        200
    );
}
