//! The JSON API against the real `checkout` binary on a free port over a real Postgres,
//! spoken to as a merchant backend would (spec sections 4.1–4.4, 5 and 7).

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

#[path = "../support/mod.rs"]
mod support;

mod auth;
mod bearer;
mod by_reference;
mod card_attempts;
mod card_guard;
mod contract;
mod duplicate_reference;
mod errors;
mod events;
mod idempotency;
mod lifecycle;
mod oidc;
mod openapi;
mod operator;
mod payment_link;
mod receipts;
mod reversals;
mod sandbox_cards;
mod sandbox_tools;
mod security;
mod start_payment;
mod status;
mod support_lookup;
mod walkthrough;

use serde_json::{json, Value};

/// A valid start-payment body with `reference`.
pub fn start_body(reference: &str) -> Value {
    json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "callbackBackUrl": "https://merchant.example/cart",
        "totalTransactionAmount": 25.50,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference,
        "generalPurchaseDescription": "Order 1001",
        "userEmail": "payer@example.com",
        "culture": "en",
        "items": [
            { "itemCode": "SKU-1", "quantity": 2, "description": "Blue mug", "amount": 10.00, "currencyCode": "USD" }
        ],
        "additionalCharges": [
            { "chargeName": "Shipping", "chargeAmount": 5.50, "chargeCurrencyCode": "USD" }
        ]
    })
}

/// A valid generate-payment-link body with `reference`.
pub fn link_body(reference: &str) -> Value {
    json!({
        "totalTransactionAmount": 15000,
        "currencyCode": "CRC",
        "transactionReferenceNumber": reference,
        "generalPurchaseDescription": "Invoice 77",
        "userEmail": "payer@example.com",
        "culture": "es"
    })
}

/// The body with `field` removed.
pub fn without(mut body: Value, field: &str) -> Value {
    body.as_object_mut().map(|o| o.remove(field));
    body
}

/// The body with `field` set to `value`.
pub fn with(mut body: Value, field: &str, value: Value) -> Value {
    body[field] = value;
    body
}

/// Asserts a ProblemDetails body of `status` whose `type` is `kind`, and returns it.
pub fn assert_problem(reply: &support::server::Reply, status: u16, kind: &str) {
    assert_eq!(reply.status.as_u16(), status, "status of {}", reply.body);
    assert_eq!(reply.content_type(), "application/problem+json");
    assert_eq!(reply.body["type"], kind, "type of {}", reply.body);
    assert_eq!(reply.body["status"], status);
    assert!(reply.body["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(reply.body["detail"].as_str().is_some_and(|t| !t.is_empty()));
    let instance = reply.str("instance");
    assert!(is_guid(instance), "instance {instance} is not a GUID");
}

/// Whether `s` is a hyphenated GUID.
pub fn is_guid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The exact 400 body shape: RFC 7231 type, "Validation failed", and `errors` equal to
/// `expected` (field → messages).
pub fn assert_validation(reply: &support::server::Reply, expected: Value) {
    assert_problem(
        reply,
        400,
        "https://tools.ietf.org/html/rfc7231#section-6.5.1",
    );
    assert_eq!(reply.body["title"], "Validation failed");
    assert_eq!(reply.body["errors"], expected, "errors of {}", reply.body);
}

/// The SVC table row as the spec gives it: title and message (detail).
pub fn assert_svc(
    reply: &support::server::Reply,
    code: &str,
    status: u16,
    title: &str,
    detail: &str,
) {
    assert_problem(reply, status, code);
    assert_eq!(reply.body["title"], title);
    assert_eq!(reply.body["detail"], detail);
    assert!(reply.body.get("errors").is_none());
}
