//! GET /pay/api/payment?transactionReferenceNumber=... : the caller's sessions with one
//! merchant reference, newest first, as status records.

use serde_json::{json, Value};

use crate::support::TestServer;
use crate::{assert_problem, assert_validation, link_body, start_body};

const LOOKUP: &str = "/pay/api/payment?transactionReferenceNumber=";

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|r| r["checkoutSessionId"].as_str().expect("an id"))
        .collect()
}

#[tokio::test]
async fn an_expired_session_and_its_successor_are_both_listed_newest_first() {
    let server = TestServer::sandbox("by-ref-successor").await;
    let token = server.token().await;
    let old = server
        .post(
            "/pay/api/generate-payment-link",
            Some(&token),
            &link_body("BYREF-1"),
        )
        .await;
    assert_eq!(old.status, 200, "{}", old.body);
    let old_id = old.str("checkoutSessionId").to_owned();
    server.expire_session(&old_id).await;
    let new = server
        .post(
            "/pay/api/generate-payment-link",
            Some(&token),
            &link_body("BYREF-1"),
        )
        .await;
    assert_eq!(new.status, 200, "{}", new.body);
    let new_id = new.str("checkoutSessionId").to_owned();
    // A session with another reference is not listed.
    let other = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &start_body("BYREF-2"),
        )
        .await;
    assert_eq!(other.status, 200);

    let reply = server.get(&format!("{LOOKUP}BYREF-1"), Some(&token)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.content_type(), "application/json");
    assert_eq!(reply.headers["cache-control"], "no-store");
    assert_eq!(ids(&reply.body), [new_id.as_str(), old_id.as_str()]);
    assert_eq!(reply.body[0]["state"], "Pending");
    assert_eq!(reply.body[1]["state"], "Expired");
    assert_eq!(reply.body[1]["stateCode"], 6);

    // Each record is exactly the status route's body.
    for (i, id) in [&new_id, &old_id].into_iter().enumerate() {
        let single = server
            .get(&format!("/pay/api/payment/{id}"), Some(&token))
            .await;
        assert_eq!(single.status, 200);
        assert_eq!(reply.body[i], single.body, "record {i}");
    }
    // The amount keeps its exact decimal text, as on the status route.
    assert!(
        reply.text.contains("\"totalTransactionAmount\":15000.00,"),
        "{}",
        reply.text
    );
}

#[tokio::test]
async fn another_terminals_lookup_is_an_empty_list() {
    let server = TestServer::sandbox("by-ref-terminals").await;
    server.add_terminal("T-LOOK", true).await;
    let (id, secret) = server
        .add_client("T-LOOK", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let mine = server.token().await;
    let theirs = server.token_for(&id, &secret).await;
    let created = server
        .post(
            "/pay/api/start-payment",
            Some(&mine),
            &start_body("BYREF-3"),
        )
        .await;
    assert_eq!(created.status, 200);

    let reply = server.get(&format!("{LOOKUP}BYREF-3"), Some(&theirs)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body, json!([]));
    assert_eq!(reply.text, "[]");
    let unknown = server
        .get(&format!("{LOOKUP}NO-SUCH-REF"), Some(&mine))
        .await;
    assert_eq!(unknown.body, json!([]));
    let own = server.get(&format!("{LOOKUP}BYREF-3"), Some(&mine)).await;
    assert_eq!(ids(&own.body), [created.str("checkoutSessionId")]);
}

#[tokio::test]
async fn a_missing_or_invalid_reference_is_400_naming_it() {
    let server = TestServer::sandbox("by-ref-400").await;
    let token = server.token().await;
    let required = json!({ "TransactionReferenceNumber": ["The TransactionReferenceNumber field is required."] });
    for path in [
        "/pay/api/payment",
        "/pay/api/payment?",
        "/pay/api/payment?transactionReferenceNumber=",
        "/pay/api/payment?transactionReferenceNumber=%20%20",
        "/pay/api/payment?reference=BYREF-4",
    ] {
        let reply = server.get(path, Some(&token)).await;
        assert_validation(&reply, required.clone());
    }
    let long = format!("{LOOKUP}{}", "R".repeat(65));
    assert_validation(
        &server.get(&long, Some(&token)).await,
        json!({ "TransactionReferenceNumber": ["TransactionReferenceNumber must be at most 64 characters long."] }),
    );
    assert_validation(
        &server
            .get(&format!("{LOOKUP}caf%C3%A9"), Some(&token))
            .await,
        json!({ "TransactionReferenceNumber": ["TransactionReferenceNumber contains characters that are not allowed."] }),
    );
    assert_validation(
        &server
            .get(
                &format!("{LOOKUP}A&transactionReferenceNumber=B"),
                Some(&token),
            )
            .await,
        json!({ "TransactionReferenceNumber": ["TransactionReferenceNumber must be given once."] }),
    );
}

#[tokio::test]
async fn the_lookup_needs_the_bearer_token_and_allows_only_get() {
    let server = TestServer::sandbox("by-ref-auth").await;
    let reply = server.get(&format!("{LOOKUP}BYREF-5"), None).await;
    assert_problem(
        &reply,
        401,
        "https://tools.ietf.org/html/rfc7235#section-3.1",
    );
    let token = server.token().await;
    let post = server
        .post("/pay/api/payment", Some(&token), &json!({}))
        .await;
    assert_problem(
        &post,
        405,
        "https://tools.ietf.org/html/rfc7231#section-6.5.5",
    );
    assert_eq!(post.headers["allow"], "GET");
}
