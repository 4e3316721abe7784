//! GET /pay/api/payment/{checkoutSessionId} (spec 2.5, 3, 4.4, 7.4.5).

use crate::support::TestServer;
use crate::{assert_svc, link_body, start_body};

#[tokio::test]
async fn the_record_carries_the_state_its_code_and_every_field_as_sent() {
    let server = TestServer::sandbox("status-record").await;
    let token = server.token().await;
    let created = server
        .post("/pay/api/start-payment", Some(&token), &start_body("REC-1"))
        .await;
    assert_eq!(created.status, 200);
    let id = created.str("checkoutSessionId");
    let reply = server
        .get(&format!("/pay/api/payment/{id}"), Some(&token))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.headers["cache-control"], "no-store");
    let body = &reply.body;
    assert_eq!(body["checkoutSessionId"], id);
    assert_eq!(body["state"], "Pending");
    assert_eq!(body["stateCode"], 0);
    assert_eq!(body["sessionType"], "IntegratedCheckout");
    assert_eq!(body["transactionReferenceNumber"], "REC-1");
    assert_eq!(
        body["internalTransactionReferenceNumber"],
        created.body["internalTransactionReferenceNumber"]
    );
    assert_eq!(body["terminalNumber"], server.terminal.as_str());
    // Exact decimal: the amount comes back as sent, with its scale.
    assert!(
        reply.text.contains("\"totalTransactionAmount\":25.50,"),
        "{}",
        reply.text
    );
    assert_eq!(body["currencyCode"], "USD");
    for field in [
        "creationDateTime",
        "lastUpdateDateTime",
        "expirationDateTime",
    ] {
        let value = body[field]
            .as_str()
            .unwrap_or_else(|| panic!("{field} missing"));
        assert!(value.ends_with('Z'), "{field} = {value}");
        time::OffsetDateTime::parse(value, &time::format_description::well_known::Rfc3339)
            .unwrap_or_else(|e| panic!("{field} = {value}: {e}"));
    }
}

#[tokio::test]
async fn a_link_session_reports_its_kind_and_the_expiry_it_was_given() {
    let server = TestServer::sandbox("status-link").await;
    let token = server.token().await;
    let link = server
        .post(
            "/pay/api/generate-payment-link",
            Some(&token),
            &link_body("REC-L"),
        )
        .await;
    assert_eq!(link.status, 200);
    let reply = server
        .get(
            &format!("/pay/api/payment/{}", link.str("checkoutSessionId")),
            Some(&token),
        )
        .await;
    assert_eq!(reply.body["sessionType"], "PaymentLink");
    assert_eq!(
        reply.body["expirationDateTime"],
        link.body["expirationDateTime"]
    );
    // Amounts come back at the currency's scale (CRC: 2).
    assert!(
        reply.text.contains("\"totalTransactionAmount\":15000.00,"),
        "{}",
        reply.text
    );
    assert_eq!(reply.body["currencyCode"], "CRC");
}

#[tokio::test]
async fn an_unknown_or_malformed_id_is_404() {
    let server = TestServer::sandbox("status-404").await;
    let token = server.token().await;
    for id in ["9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60", "not-a-session-id"] {
        let reply = server
            .get(&format!("/pay/api/payment/{id}"), Some(&token))
            .await;
        assert_svc(
            &reply,
            "SVC_007",
            404,
            "Payment not found",
            "Specified payment not found.",
        );
    }
}
