//! 401 on protected routes, each way of spec 5.7, and the sandbox/production separation.

use checkout_domain::auth::Role;
use checkout_identity::SigningKey;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::server::Reply;
use crate::support::{Mode, TestServer};
use crate::{assert_problem, link_body, start_body};

const UNAUTHORIZED: &str = "https://tools.ietf.org/html/rfc7235#section-3.1";

/// Calls each protected route with `authorization` (the raw header, or none).
async fn each_protected_route(server: &TestServer, authorization: Option<&str>) -> Vec<Reply> {
    let routes = [
        (
            Method::POST,
            "/pay/api/start-payment".to_owned(),
            Some(start_body("R-401")),
        ),
        (
            Method::POST,
            "/pay/api/generate-payment-link".to_owned(),
            Some(link_body("L-401")),
        ),
        (
            Method::GET,
            "/pay/api/payment/00000000-0000-4000-8000-000000000000".to_owned(),
            None,
        ),
    ];
    let mut replies = Vec::new();
    for (method, path, body) in routes {
        let mut request = server
            .http
            .request(method, format!("{}{path}", server.base));
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        if let Some(body) = &body {
            request = request.json(body);
        }
        let response = request.send().await.expect("an answer");
        replies.push(crate::support::server::into_reply(response).await);
    }
    replies
}

async fn assert_refused(server: &TestServer, authorization: Option<&str>, why: &str) {
    for reply in each_protected_route(server, authorization).await {
        assert_eq!(reply.status, 401, "{why}: {}", reply.body);
        assert_problem(&reply, 401, UNAUTHORIZED);
        assert_eq!(
            reply.headers["www-authenticate"]
                .to_str()
                .ok()
                .map(|h| h.starts_with("Bearer")),
            Some(true)
        );
    }
}

/// The claims of a real token (signature not checked: this is the test reading it).
fn claims_of(token: &str) -> Value {
    let mut validation = Validation::new(Algorithm::EdDSA);
    validation.insecure_disable_signature_validation();
    validation.validate_exp = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    jsonwebtoken::decode::<Value>(token, &DecodingKey::from_secret(&[]), &validation)
        .expect("a readable token")
        .claims
}

fn sign(key: &SigningKey, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(
        &header,
        claims,
        &EncodingKey::from_ed_der(&key.to_pkcs8_der()),
    )
    .expect("signing")
}

fn sandbox_key(server: &TestServer) -> SigningKey {
    SigningKey::load(&server.dir.join("data/keys/sandbox.pk8")).expect("the sandbox key")
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

#[tokio::test]
async fn a_missing_or_malformed_header_is_401() {
    let server = TestServer::sandbox("bearer-missing").await;
    assert_refused(&server, None, "no header").await;
    assert_refused(&server, Some("Bearer"), "empty bearer").await;
    assert_refused(&server, Some("Bearer not.a.jwt"), "garbage token").await;
    assert_refused(&server, Some("Basic c2FuZGJveDpzZWNyZXQ="), "basic scheme").await;
    let token = server.token().await;
    assert_refused(&server, Some(&token), "token without the Bearer scheme").await;
}

#[tokio::test]
async fn an_expired_token_is_401_and_a_fresh_one_works() {
    let server = TestServer::sandbox("bearer-expired").await;
    let token = server.token().await;
    let key = sandbox_key(&server);
    let mut claims = claims_of(&token);
    claims["iat"] = json!(now() - 7200);
    claims["nbf"] = json!(now() - 7200);
    claims["exp"] = json!(now() - 3600);
    let expired = sign(&key, key.kid(), &claims);
    assert_refused(&server, Some(&format!("Bearer {expired}")), "expired").await;

    // The same claims with a live expiry pass: the refusal above was the expiry.
    claims["exp"] = json!(now() + 600);
    let live = sign(&key, key.kid(), &claims);
    let reply = server
        .post("/pay/api/start-payment", Some(&live), &start_body("R-live"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test]
async fn a_token_signed_with_another_key_is_401() {
    let server = TestServer::sandbox("bearer-forged").await;
    let token = server.token().await;
    let real = sandbox_key(&server);
    let other = SigningKey::generate().expect("a key");
    let forged = sign(&other, real.kid(), &claims_of(&token));
    assert_refused(
        &server,
        Some(&format!("Bearer {forged}")),
        "wrong signature",
    )
    .await;
    let mut tampered = token.clone();
    let last = tampered.pop().expect("a character");
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    assert_refused(
        &server,
        Some(&format!("Bearer {tampered}")),
        "flipped signature",
    )
    .await;
}

#[tokio::test]
async fn a_token_without_the_role_svc_terminal_is_401() {
    let server = TestServer::sandbox("bearer-role").await;
    let token = server.token().await;
    let key = sandbox_key(&server);
    let mut claims = claims_of(&token);
    claims["roles"] = json!(["SvcReporting"]);
    let no_role = sign(&key, key.kid(), &claims);
    assert_refused(
        &server,
        Some(&format!("Bearer {no_role}")),
        "no SvcTerminal role",
    )
    .await;

    // A client provisioned without the role cannot act either, whichever step refuses it.
    let (id, secret) = server.add_client(&server.terminal, vec![]).await;
    let reply = server
        .post(
            "/api/public/security/auth",
            None,
            &json!({ "client_id": id, "client_secret": secret }),
        )
        .await;
    if reply.status == 200 {
        let token = reply.str("token").to_owned();
        assert_refused(
            &server,
            Some(&format!("Bearer {token}")),
            "client without role",
        )
        .await;
    } else {
        assert_problem(&reply, 401, UNAUTHORIZED);
    }
}

#[tokio::test]
async fn sandbox_and_production_tokens_are_not_interchangeable() {
    let sandbox = TestServer::sandbox("env-sandbox").await;
    let production = TestServer::start("env-production", Mode::Production, &[]).await;
    production.add_terminal("T-PROD", true).await;
    let (id, secret) = production
        .add_client("T-PROD", vec![Role::SvcTerminal])
        .await;
    let production_token = production.token_for(&id, &secret).await;
    let sandbox_token = sandbox.token().await;

    // Each works where it was issued.
    let ok = production
        .post(
            "/pay/api/start-payment",
            Some(&production_token),
            &start_body("P-1"),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let ok = sandbox
        .post(
            "/pay/api/start-payment",
            Some(&sandbox_token),
            &start_body("S-1"),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);

    // And nowhere else.
    assert_refused(
        &production,
        Some(&format!("Bearer {sandbox_token}")),
        "sandbox token in production",
    )
    .await;
    assert_refused(
        &sandbox,
        Some(&format!("Bearer {production_token}")),
        "production token in sandbox",
    )
    .await;

    // Production never provisions the sandbox client.
    let reply = production
        .post(
            "/api/public/security/auth",
            None,
            &json!({ "client_id": sandbox.client_id, "client_secret": sandbox.client_secret }),
        )
        .await;
    assert_problem(&reply, 401, UNAUTHORIZED);
}

/// Base64url without padding.
fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn a_negative_token_matrix_is_refused() {
    let server = TestServer::sandbox("bearer-matrix").await;
    let token = server.token().await;
    let key = sandbox_key(&server);
    let claims = claims_of(&token);
    let mut refused = Vec::new();

    // alg: none, no signature.
    let header = b64(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = b64(claims.to_string().as_bytes());
    refused.push(("alg none", format!("{header}.{payload}.")));

    // HS256 keyed with the public key (the classic algorithm-confusion attack).
    let mut hs = Header::new(Algorithm::HS256);
    hs.kid = Some(key.kid().to_owned());
    let hs_token = jsonwebtoken::encode(
        &hs,
        &claims,
        &EncodingKey::from_secret(key.verifying_key().public_key()),
    )
    .expect("hs256");
    refused.push(("HS256 with the public key", hs_token));

    let mut not_yet = claims.clone();
    not_yet["nbf"] = json!(now() + 3600);
    not_yet["iat"] = json!(now() + 3600);
    not_yet["exp"] = json!(now() + 7200);
    refused.push(("not yet valid", sign(&key, key.kid(), &not_yet)));

    let mut wrong_iss = claims.clone();
    wrong_iss["iss"] = json!("someone-else");
    refused.push(("wrong iss", sign(&key, key.kid(), &wrong_iss)));

    let mut wrong_aud = claims.clone();
    wrong_aud["aud"] = json!("another-api");
    refused.push(("wrong aud", sign(&key, key.kid(), &wrong_aud)));

    let mut no_role = claims.clone();
    no_role.as_object_mut().map(|o| o.remove("roles"));
    refused.push(("missing role", sign(&key, key.kid(), &no_role)));

    refused.push(("unknown kid", sign(&key, "not-a-known-kid", &claims)));

    let mut other_env = claims.clone();
    other_env["env"] = json!("production");
    refused.push(("other environment", sign(&key, key.kid(), &other_env)));

    let (signed_part, signature) = token.rsplit_once('.').expect("three parts");
    let mut raw = {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(signature)
            .expect("base64url signature")
    };
    raw[10] ^= 0x01;
    refused.push((
        "one flipped signature bit",
        format!("{signed_part}.{}", b64(&raw)),
    ));

    for (why, bad) in &refused {
        assert_refused(&server, Some(&format!("Bearer {bad}")), why).await;
    }

    // The untouched claims, re-signed with the real key, pass: each refusal was its change.
    let resigned = sign(&key, key.kid(), &claims);
    let reply = server
        .post(
            "/pay/api/start-payment",
            Some(&resigned),
            &start_body("MATRIX-OK"),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    eprintln!(
        "token matrix: {} forged tokens refused with 401 on every protected route",
        refused.len()
    );
}
