//! The binary configured with the OpenID Connect adapter against a real provider (the npm
//! `oidc-provider` package, started here): the merchant flow end to end with a key rotation
//! in its middle, each 401 of spec 5.7, a client with no terminal here (SVC_005),
//! deactivation, and the provider down (503 with `Retry-After` on the token route, cached
//! keys still verifying).

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use crate::support::{Mode, TestServer};
use crate::{assert_problem, assert_svc, link_body, start_body};

// The identity tests' harness of the npm provider, shared (not every helper is used here).
#[allow(dead_code)]
#[path = "../../../checkout-identity/tests/identity/node_provider.rs"]
mod node_provider;

use node_provider::NodeProvider;

const AUTH: &str = "/api/public/security/auth";
const UNAUTHORIZED: &str = "https://tools.ietf.org/html/rfc7235#section-3.1";
const SECRET: &str = "provider-secret-5b1f0c3e9a7d4c21";
const NO_ROLE: &str = "norole-client";
const UNREGISTERED: &str = "unregistered-client";

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

async fn oidc_server(provider: &NodeProvider, label: &str) -> TestServer {
    let mut server = TestServer::start(
        label,
        Mode::Sandbox,
        &[
            ("CHECKOUT__IDENTITY__PROVIDER", "oidc"),
            ("CHECKOUT__IDENTITY__OIDC__ISSUER", provider.issuer.as_str()),
            ("CHECKOUT__IDENTITY__OIDC__TIMEOUT_MS", "1500"),
            ("CHECKOUT__IDENTITY__OIDC__KEY_REFETCH_SECONDS", "0"),
            ("CHECKOUT__METRICS__ADDRESS", "127.0.0.1:0"),
            // Every debug line too (the adapter's and its HTTP client's), for the checks that
            // no secret or token is logged.
            ("RUST_LOG", "debug"),
            // The sandbox client is the provider's client of the same id.
            ("CHECKOUT__SANDBOX__CLIENT_SECRET", SECRET),
        ],
    )
    .await;
    server.client_secret = SECRET.to_owned();
    // With an external provider, the operator cannot make a client with a secret here...
    let create = std::process::Command::new(env!("CARGO_BIN_EXE_checkout"))
        .args(["client", "create", &server.terminal])
        .env_remove("CHECKOUT_CONFIG")
        .env("DATABASE_URL", server.database_url())
        .env("CHECKOUT__DATA_DIR", server.dir.join("operator"))
        .env("CHECKOUT__IDENTITY__PROVIDER", "oidc")
        .env("CHECKOUT__IDENTITY__OIDC__ISSUER", &provider.issuer)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the checkout binary");
    assert!(!create.status.success());
    let stderr = String::from_utf8_lossy(&create.stderr);
    assert!(stderr.contains("checkout client link"), "{stderr}");
    // ...and binds the provider's other client to the terminal.
    let linked = crate::operator::stdout(&crate::operator::checkout(
        &server,
        &["client", "link", &server.terminal, NO_ROLE],
    ));
    assert!(linked.contains(NO_ROLE), "{linked}");
    server
}

/// The server's Prometheus metrics.
async fn scrape(server: &TestServer) -> String {
    let port = server.metrics_port.expect("a metrics listener");
    server
        .http
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

fn provider() -> NodeProvider {
    NodeProvider::start(json!({
        "audience": "hosted-checkout",
        "clients": [
            {"client_id": "sandbox-client", "client_secret": SECRET,
             "claims": {"roles": ["SvcTerminal"]}},
            {"client_id": NO_ROLE, "client_secret": SECRET},
            {"client_id": UNREGISTERED, "client_secret": SECRET,
             "claims": {"roles": ["SvcTerminal"]}},
        ],
    }))
}

#[tokio::test]
async fn the_merchant_flow_runs_with_tokens_of_an_openid_connect_provider() {
    let provider = provider();
    let server = oidc_server(&provider, "oidc-flow").await;

    // The spec's token route, {token, expiresIn} (and their OAuth 2.0 names), with the
    // provider's token.
    let reply = server
        .post(
            AUTH,
            None,
            &json!({"client_id": "sandbox-client", "client_secret": SECRET}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let keys: Vec<&String> = reply.body.as_object().unwrap().keys().collect();
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
    assert_eq!(reply.body["expiresIn"], 600);
    assert_eq!(reply.body["access_token"], reply.body["token"]);
    let token = reply.str("token").to_owned();
    let payload = token.split('.').nth(1).unwrap();
    let payload: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        payload["iss"],
        provider.issuer.as_str(),
        "the provider issued it"
    );
    // The service publishes no keys of its own with an external provider.
    let jwks = server.get("/.well-known/jwks.json", None).await;
    assert_eq!(jwks.body["keys"], json!([]));

    let start = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &start_body("OIDC-1"),
        )
        .await;
    assert_eq!(start.status, 200, "{}", start.body);
    let id = start.str("checkoutSessionId").to_owned();
    let link = server
        .post(
            "/pay/api/generate-payment-link",
            Some(&token),
            &link_body("OIDC-LINK-1"),
        )
        .await;
    assert_eq!(link.status, 200, "{}", link.body);
    let status = server
        .get(&format!("/pay/api/payment/{id}"), Some(&token))
        .await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert_eq!(status.body["terminalNumber"], server.terminal.as_str());

    // Paid with an authorisation held, captured, refunded in part.
    let paid = server.paid_checkout("OIDC-PAID", "4000000000000077").await;
    let captured = server
        .post(
            &format!("/pay/api/payment/{paid}/capture"),
            Some(&token),
            &json!({"amount": 12.34}),
        )
        .await;
    assert_eq!(captured.status, 200, "{}", captured.body);
    let refund = server
        .post(
            &format!("/pay/api/payment/{paid}/refunds"),
            Some(&token),
            &json!({"amount": 2.00}),
        )
        .await;
    assert_eq!(refund.status, 200, "{}", refund.body);
    assert_eq!(refund.body["type"], "SVC_010");

    let endpoint = server
        .post(
            "/pay/api/webhook-endpoints",
            Some(&token),
            &json!({"url": "http://localhost:9/hooks"}),
        )
        .await;
    assert_eq!(endpoint.status, 201, "{}", endpoint.body);
    let list = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.body.as_array().map(Vec::len), Some(1), "{}", list.body);

    // A token the merchant fetched from the provider itself works the same way.
    let direct = provider.token("sandbox-client", SECRET).await;
    let status = server
        .get(&format!("/pay/api/payment/{id}"), Some(&direct))
        .await;
    assert_eq!(status.status, 200, "{}", status.body);

    // The provider rotates its signing key mid-flow: a new token (signed by the new key)
    // works at once, and the tokens signed before keep working.
    let new_kid = provider.rotate().await;
    let rotated = server.token_for("sandbox-client", SECRET).await;
    let header = rotated.split('.').next().unwrap();
    let header: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, header).unwrap(),
    )
    .unwrap();
    assert_eq!(header["kid"], new_kid.as_str());
    for token in [&rotated, &token, &direct] {
        let status = server
            .get(&format!("/pay/api/payment/{id}"), Some(token))
            .await;
        assert_eq!(status.status, 200, "{}", status.body);
    }

    // No secret and no token in the server's database or log (the card-data check)...
    crate::support::card_data::assert_absent(&server, &[SECRET, &token, &direct, &rotated]).await;
    // ...nor in its metrics.
    let metrics = scrape(&server).await;
    for sample in [
        r#"checkout_identity_calls_total{call="issue_token",outcome="ok"}"#,
        r#"checkout_identity_calls_total{call="verify",outcome="ok"}"#,
    ] {
        assert!(metrics.contains(sample), "{sample} in {metrics}");
    }
    for (what, text) in [("log", server.log()), ("metrics", metrics)] {
        assert!(!text.contains(SECRET), "the client secret is in the {what}");
        assert!(!text.contains(&token), "a token is in the {what}");
        assert!(!text.contains(&direct), "a token is in the {what}");
        assert!(!text.contains(&rotated), "a token is in the {what}");
    }
}

#[tokio::test]
async fn every_refusal_of_spec_5_7_and_the_provider_down_through_the_oidc_adapter() {
    let mut provider = provider();
    let server = oidc_server(&provider, "oidc-refusals").await;
    let token = server.token().await;
    let protected = "/pay/api/start-payment";
    let body = start_body("OIDC-REFUSED");

    // Wrong credentials at the token route: the spec's 401, the secret not echoed.
    for (id, secret) in [
        ("sandbox-client", "not-the-secret"),
        ("no-such-client", SECRET),
        // A client of the provider that no terminal here is bound to gets no token.
        (UNREGISTERED, SECRET),
    ] {
        let reply = server
            .post(
                AUTH,
                None,
                &json!({"client_id": id, "client_secret": secret}),
            )
            .await;
        assert_problem(&reply, 401, UNAUTHORIZED);
        assert!(!reply.text.contains(secret), "{}", reply.text);
    }

    // Missing bearer, malformed, expired, no role, another key, HMAC keyed with the public
    // key, wrong audience, alg none, another issuer: all 401.
    let claims = |edit: &dyn Fn(&mut Value)| {
        let mut claims = json!({
            "iss": provider.issuer, "aud": "hosted-checkout", "sub": "sandbox-client",
            "client_id": "sandbox-client", "roles": ["SvcTerminal"],
            "iat": now(), "exp": now() + 600, "jti": "x",
        });
        edit(&mut claims);
        claims
    };
    let control = provider.sign(json!({}), claims(&|_| {}), false).await;
    assert_eq!(
        server
            .post(protected, Some(&control), &start_body("OIDC-CONTROL"))
            .await
            .status,
        200,
        "the forged control token works"
    );
    let expired = provider
        .sign(
            json!({}),
            claims(&|c| {
                c["exp"] = json!(now() - 120);
                c["iat"] = json!(now() - 720);
            }),
            false,
        )
        .await;
    let wrong_audience = provider
        .sign(
            json!({}),
            claims(&|c| c["aud"] = json!("another-api")),
            false,
        )
        .await;
    let other_key = provider.sign(json!({}), claims(&|_| {}), true).await;
    let no_role_token = server.token_for(NO_ROLE, SECRET).await;
    let pem: Value = reqwest::get(format!("{}/__test/public-pem", provider.issuer))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(provider.keys().await[0]["kid"].as_str().unwrap().to_owned());
    let hmac = jsonwebtoken::encode(
        &header,
        &claims(&|_| {}),
        &EncodingKey::from_secret(pem["pem"].as_str().unwrap().as_bytes()),
    )
    .unwrap();
    let mut parts = control.splitn(2, '.');
    let _ = parts.next();
    let none = format!(
        "{}.{}",
        base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            br#"{"alg":"none","typ":"JWT"}"#
        ),
        parts.next().unwrap()
    );
    // Another issuer signing with the very same key.
    let other_issuer = NodeProvider::start(json!({
        "audience": "hosted-checkout",
        "keys": provider.keys().await,
        "clients": [{"client_id": "sandbox-client", "client_secret": SECRET,
                     "claims": {"roles": ["SvcTerminal"]}}],
    }));
    let foreign = other_issuer.token("sandbox-client", SECRET).await;
    drop(other_issuer);
    let missing = server.post(protected, None, &body).await;
    assert_problem(&missing, 401, UNAUTHORIZED);
    for bad in [
        "not-a-jwt",
        &expired,
        &wrong_audience,
        &other_key,
        &no_role_token,
        &hmac,
        &none,
        &foreign,
    ] {
        let reply = server.post(protected, Some(bad), &body).await;
        assert_problem(&reply, 401, UNAUTHORIZED);
        assert!(!reply.text.contains(bad), "the token is echoed");
    }

    // A valid token of a provider client with no terminal here: SVC_005.
    let unregistered = provider.token(UNREGISTERED, SECRET).await;
    let reply = server.post(protected, Some(&unregistered), &body).await;
    assert_svc(
        &reply,
        "SVC_005",
        422,
        "Terminal not registered",
        "Payment terminal not registered in the system.",
    );

    // Deactivated here: its tokens are refused within the status cache's second.
    server
        .store()
        .set_client_active("sandbox-client", false)
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let reply = server.get("/pay/api/payment/x", Some(&token)).await;
    assert_problem(&reply, 401, UNAUTHORIZED);
    server
        .store()
        .set_client_active("sandbox-client", true)
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;

    // The provider down: the token route answers 503 with Retry-After, within the time-out,
    // and tokens already issued keep working on the cached keys.
    provider.stop();
    let started = std::time::Instant::now();
    let reply = server
        .post(
            AUTH,
            None,
            &json!({"client_id": "sandbox-client", "client_secret": SECRET}),
        )
        .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(reply.content_type(), "application/problem+json");
    assert!(reply.headers.contains_key("retry-after"));
    assert_eq!(
        reply.body["detail"],
        "The identity provider cannot be reached right now. Retry shortly."
    );
    assert!(!reply.text.contains(SECRET));
    let status = server
        .post(protected, Some(&token), &start_body("OIDC-DOWN"))
        .await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert!(
        !server.log().contains(SECRET),
        "the client secret is in the log"
    );

    // The outcomes are counted, without a client id, secret or token among the labels.
    let metrics = scrape(&server).await;
    for sample in [
        r#"checkout_identity_calls_total{call="issue_token",outcome="refused"}"#,
        r#"checkout_identity_calls_total{call="issue_token",outcome="unavailable"}"#,
        r#"checkout_identity_calls_total{call="verify",outcome="refused"}"#,
        r#"checkout_identity_calls_total{call="verify",outcome="unregistered"}"#,
    ] {
        assert!(metrics.contains(sample), "{sample} in {metrics}");
    }
    assert!(!metrics.contains("sandbox-client") && !metrics.contains(SECRET));
}
