//! Withdrawing and bounding sessions: the merchant's cancel of an unpaid session, and the
//! optional `expirationDateTime` of both create routes.

use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::support::server::Reply;
use crate::support::TestServer;
use crate::{assert_problem, assert_validation, link_body, start_body, with};

/// An instant `ahead` of now as the API writes it (UTC, to the second, with `Z`).
fn utc_in(ahead: Duration) -> String {
    let at = (OffsetDateTime::now_utc() + ahead)
        .replace_nanosecond(0)
        .unwrap();
    at.format(&Rfc3339).unwrap()
}

async fn cancel(server: &TestServer, token: &str, id: &str) -> Reply {
    server
        .post(
            &format!("/pay/api/payment/{id}/cancel"),
            Some(token),
            &json!({}),
        )
        .await
}

#[tokio::test]
async fn a_pending_link_is_cancelled_and_its_payer_is_told_so() {
    let server = TestServer::sandbox("api-cancel-link").await;
    let token = server.token().await;
    let created = server
        .post(
            "/pay/api/generate-payment-link",
            Some(&token),
            &link_body("CANCEL-LINK-1"),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.str("checkoutSessionId").to_owned();

    let reply = cancel(&server, &token, &id).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["state"], "Cancelled");
    assert_eq!(reply.body["stateCode"], 7);
    let record = server.status_record(&id).await;
    assert_eq!(record["state"], "Cancelled");

    let page = server
        .http
        .get(format!("{}?lg=en", created.str("paymentLink")))
        .send()
        .await
        .unwrap();
    let html = page.text().await.unwrap();
    assert!(html.contains("The payment was cancelled."), "{html}");
    assert!(
        !html.contains("name=\"cardNumber\""),
        "no card form: {html}"
    );

    // Cancelling again changes nothing and says why.
    let again = cancel(&server, &token, &id).await;
    assert_problem(&again, 422, "SVC_008");
    assert!(again.str("detail").contains("Cancelled"), "{}", again.body);
}

#[tokio::test]
async fn a_pending_checkout_is_cancelled() {
    let server = TestServer::sandbox("api-cancel-checkout").await;
    let token = server.token().await;
    let id = server.new_checkout("CANCEL-CHECKOUT").await;
    let reply = cancel(&server, &token, &id).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["state"], "Cancelled");
    assert_eq!(server.status_record(&id).await["state"], "Cancelled");
}

#[tokio::test]
async fn a_paid_session_is_not_cancelled_and_nothing_changes() {
    let server = TestServer::sandbox("api-cancel-paid").await;
    let token = server.token().await;
    let id = server
        .paid_checkout("CANCEL-PAID", "4242424242424242")
        .await;
    let before = server.status_record(&id).await;
    assert_eq!(before["state"], "Successful");

    let reply = cancel(&server, &token, &id).await;
    assert_problem(&reply, 422, "SVC_008");
    assert_eq!(reply.body["title"], "Payment cannot be reversed");
    assert!(reply.str("detail").contains("Successful"), "{}", reply.body);
    assert_eq!(server.status_record(&id).await, before, "nothing changed");
}

#[tokio::test]
async fn another_terminals_session_is_not_found_by_any_lifecycle_route() {
    let server = TestServer::sandbox("api-lifecycle-other").await;
    let id = server
        .paid_checkout("OTHER-TERMINAL", "4242424242424242")
        .await;
    server.add_terminal("T-OTHER", true).await;
    let (client, secret) = server
        .add_client("T-OTHER", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let other = server.token_for(&client, &secret).await;
    for action in ["cancel", "capture", "void", "refunds"] {
        let reply = server
            .post(
                &format!("/pay/api/payment/{id}/{action}"),
                Some(&other),
                &json!({ "amount": 1.00 }),
            )
            .await;
        assert_problem(&reply, 404, "SVC_007");
    }
    let list = server
        .get(&format!("/pay/api/payment/{id}/refunds"), Some(&other))
        .await;
    assert_problem(&list, 404, "SVC_007");
    assert_eq!(server.status_record(&id).await["state"], "Successful");
}

#[tokio::test]
async fn a_requested_expiry_within_bounds_is_the_sessions_expiry() {
    let server = TestServer::sandbox("api-expiry-in").await;
    let token = server.token().await;

    let at = utc_in(Duration::days(7));
    let body = with(link_body("EXPIRY-LINK"), "expirationDateTime", json!(at));
    let link = server
        .post("/pay/api/generate-payment-link", Some(&token), &body)
        .await;
    assert_eq!(link.status, 200, "{}", link.body);
    assert_eq!(link.str("expirationDateTime"), at);
    let id = link.str("checkoutSessionId").to_owned();
    assert_eq!(server.status_record(&id).await["expirationDateTime"], at);

    let at = utc_in(Duration::hours(2));
    let body = with(
        start_body("EXPIRY-CHECKOUT"),
        "expirationDateTime",
        json!(at),
    );
    let started = server
        .post("/pay/api/start-payment", Some(&token), &body)
        .await;
    assert_eq!(started.status, 200, "{}", started.body);
    assert_eq!(started.str("expirationDateTime"), at);

    // Without it, start-payment still answers its expiry (60 minutes by default).
    let plain = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &start_body("EXPIRY-DEFAULT"),
        )
        .await;
    let expiry = OffsetDateTime::parse(plain.str("expirationDateTime"), &Rfc3339).unwrap();
    let ahead = expiry - OffsetDateTime::now_utc();
    assert!(
        ahead > Duration::minutes(58) && ahead <= Duration::minutes(60),
        "{ahead}"
    );
}

#[tokio::test]
async fn a_requested_expiry_out_of_bounds_is_a_400_naming_it() {
    let server = TestServer::sandbox("api-expiry-out").await;
    let token = server.token().await;
    let link_message = json!({ "ExpirationDateTime": [
        "ExpirationDateTime must be between 5 minutes and 30 days from now."
    ]});
    let checkout_message = json!({ "ExpirationDateTime": [
        "ExpirationDateTime must be between 5 minutes and 24 hours from now."
    ]});
    let format_message = json!({ "ExpirationDateTime": [
        "ExpirationDateTime must be a UTC date and time in ISO 8601, such as 2026-11-23T12:00:00Z."
    ]});
    let cases: [(&str, Value, Value, Value); 6] = [
        (
            "/pay/api/generate-payment-link",
            link_body("OUT-1"),
            json!(utc_in(Duration::days(31))),
            link_message.clone(),
        ),
        (
            "/pay/api/generate-payment-link",
            link_body("OUT-2"),
            json!(utc_in(Duration::minutes(2))),
            link_message.clone(),
        ),
        (
            "/pay/api/generate-payment-link",
            link_body("OUT-3"),
            json!(utc_in(-Duration::hours(1))),
            link_message,
        ),
        (
            "/pay/api/start-payment",
            start_body("OUT-4"),
            json!(utc_in(Duration::hours(25))),
            checkout_message,
        ),
        (
            "/pay/api/start-payment",
            start_body("OUT-5"),
            json!("2026-13-01T00:00:00Z"),
            format_message.clone(),
        ),
        (
            "/pay/api/generate-payment-link",
            link_body("OUT-6"),
            json!("2030-01-01T12:00:00+02:00"),
            format_message,
        ),
    ];
    for (path, body, at, expected) in cases {
        let reply = server
            .post(path, Some(&token), &with(body, "expirationDateTime", at))
            .await;
        assert_validation(&reply, expected);
    }
}
