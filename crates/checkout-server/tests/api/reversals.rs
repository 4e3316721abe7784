//! Capture, void and refunds through the sandbox processor: each success and each refusal
//! with its status and `type`, and what the merchant then reads.

use serde_json::json;

use crate::support::server::Reply;
use crate::support::TestServer;
use crate::{assert_problem, assert_svc, assert_validation};

/// Approved, not captured: ApprovedTransaction.
const AUTHORISE_ONLY: &str = "4000000000000077";
/// Approved and captured: Successful.
const APPROVED: &str = "4242424242424242";
/// Approved and captured; the processor refuses its refunds.
const REFUND_REFUSED: &str = "4000000000005126";

async fn act(server: &TestServer, id: &str, action: &str, body: serde_json::Value) -> Reply {
    let token = server.token().await;
    server
        .post(
            &format!("/pay/api/payment/{id}/{action}"),
            Some(&token),
            &body,
        )
        .await
}

/// Asserts the SVC_010 answer of a reversal and returns its `payment` record.
fn assert_reversed(reply: &Reply) -> serde_json::Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.content_type(), "application/json");
    assert_eq!(reply.body["type"], "SVC_010");
    assert_eq!(reply.body["title"], "Reversal successful");
    assert_eq!(reply.body["status"], 200);
    assert_eq!(reply.body["detail"], "Reversal completed.");
    assert!(crate::is_guid(reply.str("instance")));
    reply.body["payment"].clone()
}

#[tokio::test]
async fn a_full_capture_makes_the_payment_successful_once() {
    let server = TestServer::sandbox("api-capture-full").await;
    let id = server.paid_checkout("CAPTURE-FULL", AUTHORISE_ONLY).await;
    let before = server.status_record(&id).await;
    assert_eq!(before["state"], "ApprovedTransaction");
    assert_eq!(before["capturedAmount"], 0.0);

    let token = server.token().await;
    let captured = server
        .send(
            reqwest::Method::POST,
            &format!("/pay/api/payment/{id}/capture"),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(captured.status, 200, "{}", captured.body);
    assert_eq!(captured.body["state"], "Successful");
    assert!(
        captured.text.contains("\"capturedAmount\":12.34"),
        "{}",
        captured.text
    );
    assert_eq!(server.status_record(&id).await["state"], "Successful");

    let again = act(&server, &id, "capture", json!({})).await;
    assert_svc(
        &again,
        "SVC_008",
        422,
        "Payment cannot be reversed",
        "The payment is Successful (state code 1) and cannot be captured; nothing changed.",
    );
}

#[tokio::test]
async fn a_partial_capture_bounds_the_refunds() {
    let server = TestServer::sandbox("api-capture-partial").await;
    let id = server.paid_checkout("CAPTURE-PART", AUTHORISE_ONLY).await;

    let over = act(&server, &id, "capture", json!({ "amount": 12.35 })).await;
    assert_problem(&over, 422, "SVC_011");
    assert_eq!(
        server.status_record(&id).await["state"],
        "ApprovedTransaction"
    );
    let bad = act(&server, &id, "capture", json!({ "amount": 0 })).await;
    assert_validation(
        &bad,
        json!({ "Amount": ["Amount must be greater than 0."] }),
    );

    let captured = act(&server, &id, "capture", json!({ "amount": 10.00 })).await;
    assert_eq!(captured.status, 200, "{}", captured.body);
    assert!(
        captured.text.contains("\"capturedAmount\":10.00"),
        "{}",
        captured.text
    );
    assert!(captured.text.contains("\"totalTransactionAmount\":12.34"));

    let refund = act(&server, &id, "refunds", json!({ "amount": 10.00 })).await;
    assert_reversed(&refund);
    let more = act(&server, &id, "refunds", json!({ "amount": 0.01 })).await;
    assert_problem(&more, 422, "SVC_011");
}

#[tokio::test]
async fn a_void_releases_the_authorisation() {
    let server = TestServer::sandbox("api-void").await;
    let id = server.paid_checkout("VOID", AUTHORISE_ONLY).await;
    let voided = act(&server, &id, "void", json!({})).await;
    let payment = assert_reversed(&voided);
    assert_eq!(payment["state"], "Voided");
    assert_eq!(payment["stateCode"], 8);
    assert_eq!(voided.body["checkoutSessionId"], id.as_str());
    assert_eq!(server.status_record(&id).await["state"], "Voided");

    let capture = act(&server, &id, "capture", json!({})).await;
    assert_problem(&capture, 422, "SVC_008");
    let again = act(&server, &id, "void", json!({})).await;
    assert_problem(&again, 422, "SVC_008");
}

#[tokio::test]
async fn a_captured_payment_cannot_be_voided() {
    let server = TestServer::sandbox("api-void-settled").await;
    let id = server.paid_checkout("VOID-SETTLED", APPROVED).await;
    let reply = act(&server, &id, "void", json!({})).await;
    assert_svc(
        &reply,
        "SVC_011",
        422,
        "Settled or amount mismatch",
        "The payment is captured (settled) and cannot be voided; refund it instead.",
    );
    assert_eq!(server.status_record(&id).await["state"], "Successful");
}

#[tokio::test]
async fn refunds_add_up_to_the_captured_amount_and_no_further() {
    let server = TestServer::sandbox("api-refunds").await;
    let token = server.token().await;
    let id = server.paid_checkout("REFUNDS", APPROVED).await;

    let first = act(&server, &id, "refunds", json!({ "amount": 5.00 })).await;
    let payment = assert_reversed(&first);
    assert_eq!(payment["refundedAmount"], 5.0);
    assert_eq!(first.body["refund"]["state"], "Succeeded");
    assert_eq!(first.body["refund"]["currencyCode"], "USD");
    let second = act(&server, &id, "refunds", json!({ "amount": 7.34 })).await;
    assert!(
        second.text.contains("\"refundedAmount\":12.34"),
        "{}",
        second.text
    );
    assert_eq!(second.body["payment"]["state"], "Successful");

    let one_more = act(&server, &id, "refunds", json!({ "amount": 0.01 })).await;
    assert_svc(
        &one_more,
        "SVC_011",
        422,
        "Settled or amount mismatch",
        "The amount is above what can still be refunded (0.00 USD).",
    );

    let list = server
        .get(&format!("/pay/api/payment/{id}/refunds"), Some(&token))
        .await;
    assert_eq!(list.status, 200, "{}", list.body);
    let refunds = list.body["refunds"].as_array().unwrap();
    assert_eq!(
        refunds.len(),
        2,
        "the refused one was never recorded: {}",
        list.body
    );
    assert!(refunds.iter().all(|r| r["state"] == "Succeeded"));
    assert!(
        list.text.contains("\"refundedAmount\":12.34"),
        "{}",
        list.text
    );
    assert!(
        list.text.contains("\"capturedAmount\":12.34"),
        "{}",
        list.text
    );
    let record = server.status_record(&id).await;
    assert_eq!(record["refundedAmount"], 12.34);
}

#[tokio::test]
async fn a_session_never_captured_cannot_be_refunded() {
    let server = TestServer::sandbox("api-refund-uncaptured").await;
    let authorised = server.paid_checkout("REFUND-AUTH", AUTHORISE_ONLY).await;
    let reply = act(&server, &authorised, "refunds", json!({ "amount": 1.00 })).await;
    assert_svc(
        &reply,
        "SVC_008",
        422,
        "Payment cannot be reversed",
        "The payment is ApprovedTransaction (state code 3) and cannot be refunded; nothing changed.",
    );
    let pending = server.new_checkout("REFUND-PENDING").await;
    let reply = act(&server, &pending, "refunds", json!({ "amount": 1.00 })).await;
    assert_problem(&reply, 422, "SVC_008");
    let missing = act(&server, &pending, "refunds", json!({})).await;
    assert_validation(
        &missing,
        json!({ "Amount": ["The Amount field is required."] }),
    );
}

#[tokio::test]
async fn a_refund_the_processor_refuses_records_nothing_as_refunded() {
    let server = TestServer::sandbox("api-refund-refused").await;
    let token = server.token().await;
    let id = server.paid_checkout("REFUND-REFUSED", REFUND_REFUSED).await;
    let reply = act(&server, &id, "refunds", json!({ "amount": 5.00 })).await;
    assert_svc(
        &reply,
        "SVC_009",
        422,
        "Reversal processor error",
        "The processor refused the refund; nothing was refunded.",
    );
    let record = server.status_record(&id).await;
    assert_eq!(record["refundedAmount"], 0.0);
    assert_eq!(record["state"], "Successful");
    let list = server
        .get(&format!("/pay/api/payment/{id}/refunds"), Some(&token))
        .await;
    assert_eq!(list.body["refunds"][0]["state"], "Failed");
    assert_eq!(list.body["refunds"][0]["svcCode"], "SVC_009");
    assert!(
        list.text.contains("\"refundedAmount\":0.00"),
        "{}",
        list.text
    );
}

#[tokio::test]
async fn a_refund_retried_with_its_idempotency_key_refunds_once() {
    let server = TestServer::sandbox("api-refund-idempotent").await;
    let token = server.token().await;
    let id = server.paid_checkout("REFUND-KEY", APPROVED).await;
    let send = || async {
        let response = server
            .http
            .post(format!("{}/pay/api/payment/{id}/refunds", server.base))
            .bearer_auth(&token)
            .header("Idempotency-Key", "refund-once-1")
            .header("Content-Type", "application/json")
            .body(r#"{"amount": 4.00}"#)
            .send()
            .await
            .unwrap();
        crate::support::server::into_reply(response).await
    };
    let first = send().await;
    assert_reversed(&first);
    assert!(first.headers.get("idempotent-replayed").is_none());
    let retry = send().await;
    assert_eq!(retry.status, 200);
    assert_eq!(retry.headers.get("idempotent-replayed").unwrap(), "true");
    assert_eq!(retry.text, first.text, "the first response, byte for byte");
    let record = server.status_record(&id).await;
    assert_eq!(record["refundedAmount"], 4.0, "refunded once");
}

/// `POST /pay/api/payment/{id}/{action}` with `body` (raw JSON, or none) under `key`.
async fn act_keyed(server: &TestServer, id: &str, action: &str, key: &str, body: &str) -> Reply {
    let token = server.token().await;
    let mut request = server
        .http
        .post(format!("{}/pay/api/payment/{id}/{action}", server.base))
        .bearer_auth(&token)
        .header("Idempotency-Key", key);
    if !body.is_empty() {
        request = request
            .header("Content-Type", "application/json")
            .body(body.to_owned());
    }
    crate::support::server::into_reply(request.send().await.unwrap()).await
}

#[tokio::test]
async fn of_two_different_captures_at_once_one_wins_and_the_other_names_the_state() {
    let server = TestServer::sandbox("api-capture-race").await;
    let id = server.paid_checkout("CAPTURE-RACE", AUTHORISE_ONLY).await;
    let (seven, three) = tokio::join!(
        act(&server, &id, "capture", json!({"amount": 7.00})),
        act(&server, &id, "capture", json!({"amount": 3.00})),
    );
    let (won, lost, asked) = match (seven.status.as_u16(), three.status.as_u16()) {
        (200, 422) => (seven, three, 7.0),
        (422, 200) => (three, seven, 3.0),
        other => panic!(
            "exactly one capture wins: {other:?} {} {}",
            seven.body, three.body
        ),
    };
    assert_eq!(
        won.body["capturedAmount"], asked,
        "a 200 reports what it asked"
    );
    assert_problem(&lost, 422, "SVC_008");
    let detail = lost.str("detail");
    assert!(
        detail.contains("Successful") || detail.contains("pending"),
        "the detail names the state: {detail}"
    );
    let record = server.status_record(&id).await;
    assert_eq!(record["state"], "Successful");
    assert_eq!(record["capturedAmount"], asked);
}

#[tokio::test]
async fn capture_void_and_cancel_replay_their_answer_under_a_key() {
    let server = TestServer::sandbox("api-reversal-keys").await;
    let captured = server.paid_checkout("KEYED-CAPTURE", AUTHORISE_ONLY).await;
    let first = act_keyed(
        &server,
        &captured,
        "capture",
        "cap-1",
        r#"{"amount": 5.00}"#,
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(first.headers.get("idempotent-replayed").is_none());
    let again = act_keyed(
        &server,
        &captured,
        "capture",
        "cap-1",
        r#"{"amount": 5.00}"#,
    )
    .await;
    assert_eq!(again.status, 200);
    assert_eq!(again.headers.get("idempotent-replayed").unwrap(), "true");
    assert_eq!(again.text, first.text, "the first response, byte for byte");
    let other = act_keyed(
        &server,
        &captured,
        "capture",
        "cap-1",
        r#"{"amount": 6.00}"#,
    )
    .await;
    assert_eq!(
        other.status, 422,
        "the key with another request: {}",
        other.body
    );
    assert_eq!(server.status_record(&captured).await["capturedAmount"], 5.0);

    let voided = server.paid_checkout("KEYED-VOID", AUTHORISE_ONLY).await;
    let first = act_keyed(&server, &voided, "void", "void-1", "").await;
    assert_reversed(&first);
    let again = act_keyed(&server, &voided, "void", "void-1", "").await;
    assert_eq!(again.headers.get("idempotent-replayed").unwrap(), "true");
    assert_eq!(again.text, first.text);

    let pending = server.start_checkout("KEYED-CANCEL").await;
    let first = act_keyed(&server, &pending, "cancel", "cancel-1", "").await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["state"], "Cancelled");
    let again = act_keyed(&server, &pending, "cancel", "cancel-1", "").await;
    assert_eq!(again.headers.get("idempotent-replayed").unwrap(), "true");
    let bad = act_keyed(&server, &pending, "cancel", "has space", "").await;
    let message = "Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces).";
    assert_validation(&bad, json!({ "Idempotency-Key": [message] }));
}
