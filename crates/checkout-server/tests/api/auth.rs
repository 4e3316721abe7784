//! POST /api/public/security/auth (spec 4.1, 5.1, 5.7).

use checkout_domain::auth::Role;
use serde_json::json;

use crate::support::TestServer;
use crate::{assert_problem, assert_validation};

const AUTH: &str = "/api/public/security/auth";

#[tokio::test]
async fn valid_client_credentials_get_a_jwt_and_its_lifetime() {
    let server = TestServer::sandbox("auth-ok").await;
    let reply = server
        .post(
            AUTH,
            None,
            &json!({ "client_id": server.client_id, "client_secret": server.client_secret }),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.content_type(), "application/json");
    assert_eq!(reply.headers["cache-control"], "no-store");
    let body = reply.body.as_object().expect("an object");
    let mut keys: Vec<&str> = body.keys().map(String::as_str).collect();
    keys.sort_unstable();
    // The spec's fields, and the same under their OAuth 2.0 names (RFC 6749 section 5.1).
    assert_eq!(
        keys,
        [
            "access_token",
            "expiresIn",
            "expires_in",
            "token",
            "token_type"
        ]
    );
    assert_eq!(reply.body["expiresIn"], 3600);
    assert_eq!(reply.body["expires_in"], 3600);
    assert_eq!(reply.body["access_token"], reply.body["token"]);
    assert_eq!(reply.body["token_type"], "Bearer");
    assert_eq!(reply.str("token").split('.').count(), 3, "a compact JWS");
}

#[tokio::test]
async fn the_lifetime_follows_the_setting() {
    let server = TestServer::start(
        "auth-lifetime",
        crate::support::Mode::Sandbox,
        &[("CHECKOUT__IDENTITY__TOKEN_LIFETIME_SECONDS", "900")],
    )
    .await;
    let reply = server
        .post(
            AUTH,
            None,
            &json!({ "client_id": server.client_id, "client_secret": server.client_secret }),
        )
        .await;
    assert_eq!(reply.body["expiresIn"], 900);
}

#[tokio::test]
async fn wrong_unknown_or_deactivated_credentials_are_401() {
    let server = TestServer::sandbox("auth-401").await;
    server.add_terminal("T-OFF", true).await;
    let (off_id, off_secret) = server.add_client("T-OFF", vec![Role::SvcTerminal]).await;
    server
        .store()
        .set_client_active(&off_id, false)
        .await
        .expect("deactivate");
    for (id, secret) in [
        (server.client_id.as_str(), "not-the-secret"),
        ("no-such-client", server.client_secret.as_str()),
        (off_id.as_str(), off_secret.as_str()),
        // Found by schemathesis: a NUL in the id reached Postgres and answered 500.
        ("\u{0}\u{f0}", "whatever"),
    ] {
        let reply = server
            .post(
                AUTH,
                None,
                &json!({ "client_id": id, "client_secret": secret }),
            )
            .await;
        assert_problem(
            &reply,
            401,
            "https://tools.ietf.org/html/rfc7235#section-3.1",
        );
        let text = reply.body.to_string();
        assert!(!text.contains(secret), "the secret is echoed: {text}");
    }
}

#[tokio::test]
async fn missing_fields_are_a_validation_error() {
    let server = TestServer::sandbox("auth-400").await;
    let reply = server.post(AUTH, None, &json!({})).await;
    assert_validation(
        &reply,
        json!({
            "ClientId": ["The ClientId field is required."],
            "ClientSecret": ["The ClientSecret field is required."]
        }),
    );
}

#[tokio::test]
async fn token_requests_are_rate_limited_per_client_with_retry_after() {
    let server = TestServer::start(
        "auth-rate-client",
        crate::support::Mode::Sandbox,
        &[
            (
                "CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_CLIENT_PER_MINUTE",
                "5",
            ),
            (
                "CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE",
                "0",
            ),
        ],
    )
    .await;
    let good = json!({ "client_id": server.client_id, "client_secret": server.client_secret });
    for _ in 0..5 {
        assert_eq!(server.post(AUTH, None, &good).await.status, 200);
    }
    let limited = server.post(AUTH, None, &good).await;
    assert_problem(
        &limited,
        429,
        "https://tools.ietf.org/html/rfc6585#section-4",
    );
    let retry_after: u64 = limited.headers["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((1..=12).contains(&retry_after), "Retry-After {retry_after}");

    // Another client from the same address is not held back by the first one's limit.
    server.add_terminal("T-RATE", true).await;
    let (id, secret) = server.add_client("T-RATE", vec![Role::SvcTerminal]).await;
    let other = server
        .post(
            AUTH,
            None,
            &json!({ "client_id": id, "client_secret": secret }),
        )
        .await;
    assert_eq!(other.status, 200);
}

#[tokio::test]
async fn token_requests_are_rate_limited_per_address() {
    let server = TestServer::start(
        "auth-rate-address",
        crate::support::Mode::Sandbox,
        &[
            (
                "CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_CLIENT_PER_MINUTE",
                "0",
            ),
            (
                "CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE",
                "3",
            ),
        ],
    )
    .await;
    for n in 0..3 {
        let reply = server
            .post(
                AUTH,
                None,
                &json!({ "client_id": format!("nobody-{n}"), "client_secret": "x" }),
            )
            .await;
        assert_eq!(reply.status, 401);
    }
    let reply = server
        .post(
            AUTH,
            None,
            &json!({ "client_id": server.client_id, "client_secret": server.client_secret }),
        )
        .await;
    assert_problem(&reply, 429, "https://tools.ietf.org/html/rfc6585#section-4");
    assert!(reply.headers.contains_key("retry-after"));
}

#[tokio::test]
async fn a_thousand_wrong_secrets_never_succeed() {
    let server = TestServer::sandbox("auth-guessing").await;
    let mut statuses = std::collections::BTreeMap::new();
    for n in 0..1000 {
        let reply = server
            .post(
                AUTH,
                None,
                &json!({ "client_id": server.client_id, "client_secret": format!("guess-{n}") }),
            )
            .await;
        *statuses.entry(reply.status.as_u16()).or_insert(0) += 1;
    }
    eprintln!("1000 wrong secrets: {statuses:?}");
    assert_eq!(statuses.get(&200), None, "{statuses:?}");
    assert_eq!(
        statuses.keys().copied().collect::<Vec<_>>(),
        [401, 429],
        "refused, then limited: {statuses:?}"
    );
}
