//! Managing endpoints: create, list, delete, rotate; bad input changes nothing; a terminal
//! sees only its own.

use base64::Engine;
use reqwest::Method;
use serde_json::json;

use crate::support::{Mode, TestServer};
use crate::{call, register};

#[tokio::test]
async fn an_endpoint_is_created_with_a_secret_shown_once_and_listed_without_it() {
    let server = TestServer::sandbox("webhooks-crud").await;
    let token = server.token().await;
    let reply = server
        .post(
            "/pay/api/webhook-endpoints",
            Some(&token),
            &json!({ "url": "http://localhost:9/hooks", "events": ["payment.failed", "payment.succeeded"] }),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let id = reply.str("id").to_owned();
    assert_eq!(reply.body["url"], "http://localhost:9/hooks");
    assert_eq!(
        reply.body["events"],
        json!(["payment.succeeded", "payment.failed"])
    );
    assert!(reply.str("createdDateTime").ends_with('Z'));
    // whsec_ and the base64 of at least 24 random bytes.
    let secret = reply.str("secret");
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64");
    assert!(key.len() >= 24, "{} bytes", key.len());

    let list = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(list.status, 200);
    let listed = list.body.as_array().expect("a list").clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(
        listed[0]["events"],
        json!(["payment.succeeded", "payment.failed"])
    );
    assert!(listed[0].get("secret").is_none(), "{listed:?}");
    assert!(!list.body.to_string().contains(secret));
    // Every type when `events` is left out.
    let (_, _) = register(&server, "http://127.0.0.1:9/all", None).await;
    let list = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(list.body[1]["events"], json!(["*"]));

    // Rotation: a new secret, the old one signing until about 24 hours from now.
    let rotated = call(
        &server,
        Method::POST,
        &format!("/pay/api/webhook-endpoints/{id}/rotate-secret"),
    )
    .await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    assert!(rotated.str("secret").starts_with("whsec_"));
    assert_ne!(rotated.str("secret"), secret);
    let until = time::OffsetDateTime::parse(
        rotated.str("previousSecretExpiresDateTime"),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("a date-time");
    let hours = (until - time::OffsetDateTime::now_utc()).whole_minutes() as f64 / 60.0;
    assert!((23.9..=24.1).contains(&hours), "{hours}");

    // Deleting: 204, then gone from the list; a second delete is a 404.
    let path = format!("/pay/api/webhook-endpoints/{id}");
    assert_eq!(call(&server, Method::DELETE, &path).await.status, 204);
    let list = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(list.body.as_array().map(Vec::len), Some(1));
    let again = call(&server, Method::DELETE, &path).await;
    assert_eq!(again.status, 404);
    assert_eq!(again.content_type(), "application/problem+json");
}

#[tokio::test]
async fn bad_urls_and_event_types_are_400_naming_the_field_and_save_nothing() {
    let server = TestServer::sandbox("webhooks-bad-input").await;
    let token = server.token().await;
    for (body, field) in [
        (json!({ "url": "hooks/payments" }), "Url"),
        (json!({ "url": "ftp://merchant.example/hooks" }), "Url"),
        (json!({ "url": "http://merchant.example/hooks" }), "Url"),
        // A sandbox on loopback takes loopback and private addresses, never these.
        (json!({ "url": "https://100.64.1.2/hooks" }), "Url"),
        (json!({ "url": "https://169.254.169.254/latest" }), "Url"),
        (
            json!({ "url": "https://user:pw@merchant.example/hooks" }),
            "Url",
        ),
        (json!({}), "Url"),
        (
            json!({ "url": "http://localhost:9/", "events": ["payment.paid"] }),
            "Events",
        ),
        (
            json!({ "url": "http://localhost:9/", "events": [] }),
            "Events",
        ),
    ] {
        let reply = server
            .post("/pay/api/webhook-endpoints", Some(&token), &body)
            .await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json");
        assert!(
            reply.body["errors"][field].is_array(),
            "{body}: {}",
            reply.body
        );
    }
    let list = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(list.body, json!([]));
}

#[tokio::test]
async fn production_refuses_plain_http_and_loopback() {
    let server = TestServer::start("webhooks-production", Mode::Production, &[]).await;
    server.add_terminal("PROD-1", true).await;
    let (client_id, secret) = server
        .add_client("PROD-1", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let token = server.token_for(&client_id, &secret).await;
    for url in [
        "http://localhost:9/hooks",
        "https://127.0.0.1/hooks",
        "https://localhost/hooks",
        "https://192.168.1.10/hooks",
        "https://[::1]/hooks",
    ] {
        let reply = server
            .post(
                "/pay/api/webhook-endpoints",
                Some(&token),
                &json!({ "url": url }),
            )
            .await;
        assert_eq!(reply.status, 400, "{url}: {}", reply.body);
        assert!(
            reply.body["errors"]["Url"].is_array(),
            "{url}: {}",
            reply.body
        );
    }
}

#[tokio::test]
async fn another_terminals_endpoint_is_404_and_stays_as_it_was() {
    let server = TestServer::sandbox("webhooks-other-terminal").await;
    let (id, _) = register(&server, "http://localhost:9/mine", None).await;
    server.add_terminal("OTHER-1", true).await;
    let (client_id, secret) = server
        .add_client("OTHER-1", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let other = server.token_for(&client_id, &secret).await;

    let list = server.get("/pay/api/webhook-endpoints", Some(&other)).await;
    assert_eq!(list.body, json!([]), "the other terminal sees none of mine");
    for (method, path) in [
        (Method::DELETE, format!("/pay/api/webhook-endpoints/{id}")),
        (
            Method::POST,
            format!("/pay/api/webhook-endpoints/{id}/rotate-secret"),
        ),
        (
            Method::GET,
            format!("/pay/api/webhook-endpoints/{id}/deliveries"),
        ),
        (
            Method::POST,
            format!("/pay/api/webhook-endpoints/{id}/enable"),
        ),
        (
            Method::DELETE,
            "/pay/api/webhook-endpoints/not-an-id".to_owned(),
        ),
    ] {
        let reply = server.send(method.clone(), &path, Some(&other), None).await;
        assert_eq!(reply.status, 404, "{method} {path}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json");
    }
    // Still mine, unchanged.
    let token = server.token().await;
    let list = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(list.body[0]["id"], id.as_str());
    let deliveries = call(
        &server,
        Method::GET,
        &format!("/pay/api/webhook-endpoints/{id}/deliveries"),
    )
    .await;
    assert_eq!(deliveries.status, 200);
    assert_eq!(deliveries.body["deliveries"], json!([]));
    assert_eq!(deliveries.body["hasMore"], false);
    // No token: 401.
    let anonymous = server.get("/pay/api/webhook-endpoints", None).await;
    assert_eq!(anonymous.status, 401);
}
