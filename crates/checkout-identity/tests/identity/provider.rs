//! Issuing tokens for client credentials, and verifying them back.

use std::sync::Arc;

use checkout_domain::auth::Role;
use checkout_domain::error::AuthFailure;
use checkout_domain::ports::{IdentityError, IdentityProvider};
use checkout_identity::Environment;

use crate::support::*;

#[tokio::test]
async fn issued_token_verifies_into_the_clients_claims() {
    let (identity, pem) = sandbox();
    let before = now();
    let issued = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let after = now();
    assert_eq!(issued.expires_in, LIFETIME_SECS as u64);

    let claims = identity.verify(issued.token.expose()).await.unwrap();
    assert_eq!(claims.client_id, CLIENT);
    assert_eq!(claims.terminal.as_str(), TERMINAL);
    assert_eq!(claims.roles, vec![Role::SvcTerminal]);
    assert!(claims.has_role(Role::SvcTerminal));
    let expires = claims.expires_at.unix_timestamp();
    assert!(
        (before + LIFETIME_SECS..=after + LIFETIME_SECS).contains(&expires),
        "{expires}"
    );

    let header = header(issued.token.expose());
    assert_eq!(header["alg"], "EdDSA");
    assert_eq!(header["typ"], "JWT");
    assert_eq!(header["kid"], header_for(&pem)["kid"]);

    let payload = payload(issued.token.expose());
    assert_eq!(payload["iss"], "hosted-checkout-sandbox");
    assert_eq!(payload["aud"], AUDIENCE);
    assert_eq!(payload["sub"], CLIENT);
    assert_eq!(payload["terminal"], TERMINAL);
    assert_eq!(payload["roles"], serde_json::json!(["SvcTerminal"]));
    assert_eq!(payload["env"], "sandbox");
    let iat = payload["iat"].as_i64().unwrap();
    assert_eq!(payload["nbf"].as_i64(), Some(iat));
    assert_eq!(payload["exp"].as_i64(), Some(iat + LIFETIME_SECS));
    assert_eq!(payload["jti"].as_str().unwrap().len(), 22);
}

#[tokio::test]
async fn every_token_has_its_own_jti() {
    let (identity, _) = sandbox();
    let a = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let b = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    assert_ne!(
        payload(a.token.expose())["jti"],
        payload(b.token.expose())["jti"]
    );
}

#[tokio::test]
async fn a_production_provider_writes_its_environment() {
    let (identity, _) = provider(Environment::Production, clients());
    let issued = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let payload = payload(issued.token.expose());
    assert_eq!(payload["env"], "production");
    assert_eq!(payload["iss"], "hosted-checkout-production");
    assert!(identity.verify(issued.token.expose()).await.is_ok());
}

#[tokio::test]
async fn wrong_secret_is_invalid_credentials() {
    let (identity, _) = sandbox();
    for secret in [
        "wrong",
        "",
        "correct horse battery staplE",
        &format!("{SECRET} "),
    ] {
        assert_rejected(
            identity.issue_token(&credentials(CLIENT, secret)).await,
            AuthFailure::InvalidCredentials,
        );
    }
}

#[tokio::test]
async fn unknown_client_is_invalid_credentials() {
    let (identity, _) = sandbox();
    for client in ["nobody", "", "t0001-client"] {
        assert_rejected(
            identity.issue_token(&credentials(client, SECRET)).await,
            AuthFailure::InvalidCredentials,
        );
    }
}

#[tokio::test]
async fn inactive_client_is_invalid_credentials_even_with_its_secret() {
    let (identity, _) = sandbox();
    assert_rejected(
        identity.issue_token(&credentials(INACTIVE, SECRET)).await,
        AuthFailure::InvalidCredentials,
    );
}

#[tokio::test]
async fn a_stored_hash_that_is_no_phc_string_never_matches() {
    let (identity, _) = sandbox();
    assert_rejected(
        identity.issue_token(&credentials(BAD_HASH, SECRET)).await,
        AuthFailure::InvalidCredentials,
    );
    assert_rejected(
        identity
            .issue_token(&credentials(BAD_HASH, &format!("plain:{SECRET}")))
            .await,
        AuthFailure::InvalidCredentials,
    );
}

#[tokio::test]
async fn an_oversized_secret_is_invalid_credentials() {
    let (identity, _) = sandbox();
    let huge = "x".repeat(1025);
    assert_rejected(
        identity.issue_token(&credentials(CLIENT, &huge)).await,
        AuthFailure::InvalidCredentials,
    );
}

#[tokio::test]
async fn a_failing_store_is_unavailable_not_a_refusal() {
    let (identity, _) = provider(Environment::Sandbox, Arc::new(BrokenStore));
    match identity.issue_token(&credentials(CLIENT, SECRET)).await {
        Err(IdentityError::Unavailable(_)) => {}
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn a_token_without_the_role_verifies_with_no_role() {
    let (identity, _) = sandbox();
    let issued = identity
        .issue_token(&credentials(NO_ROLE, SECRET))
        .await
        .unwrap();
    assert_eq!(
        payload(issued.token.expose())["roles"],
        serde_json::json!([])
    );
    let claims = identity.verify(issued.token.expose()).await.unwrap();
    assert_eq!(claims.client_id, NO_ROLE);
    assert!(claims.roles.is_empty());
    assert!(!claims.has_role(Role::SvcTerminal));
}

#[tokio::test]
async fn concurrent_requests_all_succeed_with_one_verification_at_a_time() {
    let (identity, _) = sandbox();
    let identity = Arc::new(identity.with_max_concurrent_verifications(1));
    let mut tasks = Vec::new();
    for i in 0..4 {
        let identity = identity.clone();
        tasks.push(tokio::spawn(async move {
            let secret = if i % 2 == 0 { SECRET } else { "wrong" };
            identity
                .issue_token(&credentials(CLIENT, secret))
                .await
                .is_ok()
        }));
    }
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    assert_eq!(results, vec![true, false, true, false]);
}

#[test]
fn debug_output_shows_neither_secrets_nor_tokens() {
    let (identity, pem) = sandbox();
    let shown = format!("{identity:?}");
    assert!(shown.contains("hosted-checkout-sandbox"), "{shown}");
    let body = pem.lines().nth(1).unwrap();
    assert!(!shown.contains(body), "{shown}");
    assert!(!format!("{:?}", credentials(CLIENT, SECRET)).contains(SECRET));
}
