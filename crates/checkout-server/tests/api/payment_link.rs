//! POST /pay/api/generate-payment-link (spec 2.2, 2.4, 4.3, 8).

use diesel::sql_types::Uuid as SqlUuid;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::support::{Mode, TestServer};
use crate::{assert_svc, assert_validation, is_guid, link_body, start_body, with, without};

const LINK: &str = "/pay/api/generate-payment-link";

/// Moves a session's expiry an hour into the past, as if its validity had run out.
async fn age_past_expiry(server: &TestServer, id: &str) {
    let mut conn = AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    let id = uuid::Uuid::parse_str(id).expect("a uuid");
    let updated = diesel::sql_query(
        "UPDATE payment_sessions SET expires_at = now() - interval '1 hour', \
         created_at = now() - interval '2 days' WHERE id = $1",
    )
    .bind::<SqlUuid, _>(id)
    .execute(&mut conn)
    .await
    .expect("update");
    assert_eq!(updated, 1);
}

#[tokio::test]
async fn a_valid_request_answers_the_link_and_its_utc_expiry() {
    let server = TestServer::sandbox("link-ok").await;
    let token = server.token().await;
    let before = OffsetDateTime::now_utc();
    let reply = server.post(LINK, Some(&token), &link_body("LINK-1")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let mut keys: Vec<&String> = reply.body.as_object().expect("object").keys().collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "checkoutSessionId",
            "expirationDateTime",
            "internalTransactionReferenceNumber",
            "paymentLink"
        ]
    );
    let id = reply.str("checkoutSessionId");
    assert!(is_guid(id));
    assert_eq!(
        reply.str("paymentLink"),
        format!("{}/pay/link/{id}", server.base)
    );
    let expiry = reply.str("expirationDateTime");
    assert!(expiry.ends_with('Z'), "{expiry} is not UTC with a Z");
    let expiry = OffsetDateTime::parse(expiry, &Rfc3339).expect("ISO 8601");
    let validity = expiry - before;
    assert!(
        validity > time::Duration::hours(23)
            && validity <= time::Duration::hours(24) + time::Duration::minutes(1),
        "default validity is 24 h, got {validity}"
    );
}

#[tokio::test]
async fn the_link_base_and_validity_come_from_the_settings() {
    let server = TestServer::start(
        "link-settings",
        Mode::Sandbox,
        &[
            (
                "CHECKOUT__CHECKOUT__BASE_URL_PAYMENT_LINK",
                "https://links.example.test/pay/link",
            ),
            ("CHECKOUT__CHECKOUT__LINK_VALIDITY_MINUTES", "30"),
        ],
    )
    .await;
    let token = server.token().await;
    let before = OffsetDateTime::now_utc();
    let reply = server
        .post(LINK, Some(&token), &link_body("LINK-CFG"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.str("paymentLink"),
        format!(
            "https://links.example.test/pay/link/{}",
            reply.str("checkoutSessionId")
        )
    );
    let expiry = OffsetDateTime::parse(reply.str("expirationDateTime"), &Rfc3339).expect("ISO");
    let validity = expiry - before;
    assert!(validity > time::Duration::minutes(29) && validity <= time::Duration::minutes(31));
}

#[tokio::test]
async fn description_email_and_culture_are_required_for_a_link() {
    let server = TestServer::sandbox("link-missing").await;
    let token = server.token().await;
    for (json_name, key) in [
        ("generalPurchaseDescription", "GeneralPurchaseDescription"),
        ("userEmail", "UserEmail"),
        ("culture", "Culture"),
        ("totalTransactionAmount", "TotalTransactionAmount"),
        ("currencyCode", "CurrencyCode"),
        ("transactionReferenceNumber", "TransactionReferenceNumber"),
    ] {
        let reply = server
            .post(
                LINK,
                Some(&token),
                &without(link_body("LINK-MISSING"), json_name),
            )
            .await;
        let mut expected = serde_json::Map::new();
        expected.insert(key.into(), json!([format!("The {key} field is required.")]));
        assert_validation(&reply, Value::Object(expected));
    }
}

#[tokio::test]
async fn invalid_link_fields_are_named_with_their_rule() {
    let server = TestServer::sandbox("link-invalid").await;
    let token = server.token().await;
    let base = link_body("LINK-INVALID");
    for (body, errors) in [
        (
            with(base.clone(), "userEmail", json!("payer@")),
            json!({ "UserEmail": ["UserEmail must be a valid email address."] }),
        ),
        (
            with(base.clone(), "culture", json!("pt")),
            json!({ "Culture": ["Culture must be one of: es, en."] }),
        ),
        (
            with(base.clone(), "totalTransactionAmount", json!(0)),
            json!({ "TotalTransactionAmount": ["TotalTransactionAmount must be greater than 0."] }),
        ),
        (
            with(base.clone(), "totalTransactionAmount", json!(100.555)),
            json!({ "TotalTransactionAmount": ["TotalTransactionAmount must have at most 2 decimal places for CRC."] }),
        ),
    ] {
        let reply = server.post(LINK, Some(&token), &body).await;
        assert_validation(&reply, errors);
    }
}

#[tokio::test]
async fn a_reference_held_by_a_live_session_is_svc_001() {
    let server = TestServer::sandbox("link-dup").await;
    let token = server.token().await;
    assert_eq!(
        server
            .post(LINK, Some(&token), &link_body("HELD-1"))
            .await
            .status,
        200
    );
    let again = server.post(LINK, Some(&token), &link_body("HELD-1")).await;
    assert_svc(
        &again,
        "SVC_001",
        422,
        "Payment session already exists",
        "The payment session already exists.",
    );

    // A reference held by an integrated-checkout session is held for links too.
    assert_eq!(
        server
            .post(
                "/pay/api/start-payment",
                Some(&token),
                &start_body("HELD-2")
            )
            .await
            .status,
        200
    );
    let link = server.post(LINK, Some(&token), &link_body("HELD-2")).await;
    assert_svc(
        &link,
        "SVC_001",
        422,
        "Payment session already exists",
        "The payment session already exists.",
    );
}

#[tokio::test]
async fn an_expired_link_frees_its_reference_for_a_new_link() {
    let server = TestServer::sandbox("link-expired").await;
    let token = server.token().await;
    let old = server.post(LINK, Some(&token), &link_body("AGAIN-1")).await;
    assert_eq!(old.status, 200);
    let old_id = old.str("checkoutSessionId").to_owned();
    age_past_expiry(&server, &old_id).await;

    let new = server.post(LINK, Some(&token), &link_body("AGAIN-1")).await;
    assert_eq!(new.status, 200, "{}", new.body);
    assert_ne!(new.str("checkoutSessionId"), old_id);
    assert_ne!(
        new.str("internalTransactionReferenceNumber"),
        old.str("internalTransactionReferenceNumber")
    );

    let old_status = server
        .get(&format!("/pay/api/payment/{old_id}"), Some(&token))
        .await;
    assert_eq!(old_status.status, 200);
    assert_eq!(old_status.body["state"], "Expired");
    let new_status = server
        .get(
            &format!("/pay/api/payment/{}", new.str("checkoutSessionId")),
            Some(&token),
        )
        .await;
    assert_eq!(new_status.body["state"], "Pending");
    assert_eq!(new_status.body["transactionReferenceNumber"], "AGAIN-1");

    // The expired link's page is an error page, not a card form.
    let page = server
        .http
        .get(old.str("paymentLink"))
        .send()
        .await
        .expect("an answer");
    assert!(
        page.status().is_client_error(),
        "expired link page: {}",
        page.status()
    );
}

#[tokio::test]
async fn a_link_for_an_unprovisioned_terminal_is_svc_005() {
    let server = TestServer::sandbox("link-terminal").await;
    let token = server.token().await;
    let body = with(link_body("LINK-T"), "terminalNumber", json!("T-NOWHERE"));
    let reply = server.post(LINK, Some(&token), &body).await;
    assert_svc(
        &reply,
        "SVC_005",
        422,
        "Terminal not registered",
        "The terminalNumber is not the terminal of the authenticated client.",
    );
}
