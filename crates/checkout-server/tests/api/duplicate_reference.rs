//! SVC_001 names the session that holds the reference: `checkoutSessionId`, an RFC 9457
//! extension member, on both create routes.

use diesel::sql_types::Uuid as SqlUuid;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::support::TestServer;
use crate::{assert_svc, link_body, start_body};

const START: &str = "/pay/api/start-payment";
const LINK: &str = "/pay/api/generate-payment-link";

/// Asserts the spec's SVC_001 body, plus `checkoutSessionId` naming `holder`.
fn assert_svc_001_naming(reply: &crate::support::server::Reply, holder: &str) {
    assert_svc(
        reply,
        "SVC_001",
        422,
        "Payment session already exists",
        "The payment session already exists.",
    );
    assert_eq!(
        reply.body["checkoutSessionId"], holder,
        "SVC_001 names the holder: {}",
        reply.body
    );
    let mut keys: Vec<&String> = reply.body.as_object().expect("object").keys().collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "checkoutSessionId",
            "detail",
            "instance",
            "status",
            "title",
            "type"
        ]
    );
}

#[tokio::test]
async fn svc_001_of_start_payment_carries_the_holders_session_id() {
    let server = TestServer::sandbox("dup-start-id").await;
    let token = server.token().await;
    let first = server
        .post(START, Some(&token), &start_body("DUPID-1"))
        .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let again = server
        .post(START, Some(&token), &start_body("DUPID-1"))
        .await;
    assert_svc_001_naming(&again, first.str("checkoutSessionId"));

    // A link asked for with a reference an integrated checkout holds names that checkout.
    let link = server.post(LINK, Some(&token), &link_body("DUPID-1")).await;
    assert_svc_001_naming(&link, first.str("checkoutSessionId"));
}

#[tokio::test]
async fn svc_001_of_generate_payment_link_carries_the_holders_session_id() {
    let server = TestServer::sandbox("dup-link-id").await;
    let token = server.token().await;
    let first = server.post(LINK, Some(&token), &link_body("DUPID-2")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let again = server.post(LINK, Some(&token), &link_body("DUPID-2")).await;
    assert_svc_001_naming(&again, first.str("checkoutSessionId"));

    let start = server
        .post(START, Some(&token), &start_body("DUPID-2"))
        .await;
    assert_svc_001_naming(&start, first.str("checkoutSessionId"));
}

#[tokio::test]
async fn svc_001_names_the_successor_not_the_expired_session() {
    let server = TestServer::sandbox("dup-successor-id").await;
    let token = server.token().await;
    let old = server.post(LINK, Some(&token), &link_body("DUPID-3")).await;
    assert_eq!(old.status, 200, "{}", old.body);
    let mut conn = AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    diesel::sql_query(
        "UPDATE payment_sessions SET expires_at = now() - interval '1 hour' WHERE id = $1",
    )
    .bind::<SqlUuid, _>(uuid::Uuid::parse_str(old.str("checkoutSessionId")).expect("uuid"))
    .execute(&mut conn)
    .await
    .expect("age the link");

    let successor = server.post(LINK, Some(&token), &link_body("DUPID-3")).await;
    assert_eq!(successor.status, 200, "{}", successor.body);
    let again = server.post(LINK, Some(&token), &link_body("DUPID-3")).await;
    assert_svc_001_naming(&again, successor.str("checkoutSessionId"));
}
