//! Every token the sandbox provider must refuse, next to the forged token it accepts.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use checkout_domain::auth::Role;
use checkout_domain::error::AuthFailure;
use checkout_domain::ports::IdentityProvider;
use checkout_identity::{BuiltinIdentity, Environment, KeySet, SigningKey};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use crate::support::*;

/// The sandbox provider, and a token forged from `edit(valid claims)` with its own key.
fn forged(edit: impl FnOnce(&mut Value)) -> (BuiltinIdentity, String) {
    let (identity, pem) = sandbox();
    let mut claims = valid_claims();
    edit(&mut claims);
    let token = forge(&pem, &header_for(&pem), &claims);
    (identity, token)
}

async fn assert_invalid(identity: &BuiltinIdentity, token: &str) {
    assert_rejected(identity.verify(token).await, AuthFailure::InvalidToken);
}

#[tokio::test]
async fn control_the_forger_makes_tokens_that_verify() {
    let (identity, token) = forged(|_| {});
    let claims = identity.verify(&token).await.unwrap();
    assert_eq!(claims.client_id, CLIENT);
    assert_eq!(claims.terminal.as_str(), TERMINAL);
    assert_eq!(claims.roles, vec![Role::SvcTerminal]);
}

#[tokio::test]
async fn alg_none_is_refused() {
    let (identity, pem) = sandbox();
    let kid = header_for(&pem)["kid"].clone();
    for alg in ["none", "None", "NONE"] {
        let header = json!({"typ": "JWT", "alg": alg, "kid": kid});
        let unsigned = format!("{}.", signing_input(&header, &valid_claims()));
        assert_invalid(&identity, &unsigned).await;
        // An unsigned token carrying a valid EdDSA signature of other content.
        let other = identity
            .issue_token(&credentials(CLIENT, SECRET))
            .await
            .unwrap();
        let signature = other.token.expose().rsplit('.').next().unwrap().to_owned();
        assert_invalid(&identity, &format!("{unsigned}{signature}")).await;
    }
}

#[tokio::test]
async fn hs256_signed_with_the_public_key_is_refused() {
    let (identity, pem) = sandbox();
    let key = SigningKey::from_pem(&pem).unwrap();
    let x = URL_SAFE_NO_PAD.encode(key.verifying_key().public_key());
    let hmac_secrets: [Vec<u8>; 3] = [
        key.verifying_key().public_key().to_vec(),
        x.into_bytes(),
        identity.jwks().to_string().into_bytes(),
    ];
    for secret in hmac_secrets {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(key.kid().to_owned());
        let token =
            jsonwebtoken::encode(&header, &valid_claims(), &EncodingKey::from_secret(&secret))
                .unwrap();
        assert_invalid(&identity, &token).await;
    }
}

#[tokio::test]
async fn expired_token_is_expired() {
    let (identity, token) = forged(|c| {
        let past = now() - 3600;
        c["iat"] = json!(past - 600);
        c["nbf"] = json!(past - 600);
        c["exp"] = json!(past);
    });
    assert_rejected(identity.verify(&token).await, AuthFailure::ExpiredToken);
}

#[tokio::test]
async fn not_yet_valid_token_is_refused() {
    let (identity, token) = forged(|c| {
        let future = now() + 3600;
        c["iat"] = json!(future);
        c["nbf"] = json!(future);
        c["exp"] = json!(future + LIFETIME_SECS);
    });
    assert_invalid(&identity, &token).await;
}

#[tokio::test]
async fn wrong_issuer_is_refused() {
    for iss in [
        json!("hosted-checkout-production"),
        json!("evil"),
        json!(["hosted-checkout-sandbox"]),
    ] {
        let (identity, token) = forged(|c| c["iss"] = iss);
        assert_invalid(&identity, &token).await;
    }
}

#[tokio::test]
async fn wrong_audience_is_refused() {
    for aud in [json!("someone-else"), json!(""), json!(["someone-else"])] {
        let (identity, token) = forged(|c| c["aud"] = aud);
        assert_invalid(&identity, &token).await;
    }
}

#[tokio::test]
async fn a_missing_claim_is_refused() {
    for claim in [
        "iss", "aud", "sub", "exp", "nbf", "env", "terminal", "roles",
    ] {
        let (identity, token) = forged(|c| {
            c.as_object_mut().unwrap().remove(claim);
        });
        assert_rejected(identity.verify(&token).await, AuthFailure::InvalidToken);
    }
}

#[tokio::test]
async fn a_bad_terminal_or_subject_is_refused() {
    for (claim, value) in [
        ("terminal", json!("")),
        ("terminal", json!("T 1")),
        ("sub", json!("")),
    ] {
        let (identity, token) = forged(|c| c[claim] = value);
        assert_invalid(&identity, &token).await;
    }
}

#[tokio::test]
async fn unknown_roles_are_dropped() {
    let (identity, token) = forged(|c| c["roles"] = json!(["Admin", "SvcTerminal", "svcterminal"]));
    assert_eq!(
        identity.verify(&token).await.unwrap().roles,
        vec![Role::SvcTerminal]
    );
    let (identity, token) = forged(|c| c["roles"] = json!(["Admin"]));
    assert!(identity.verify(&token).await.unwrap().roles.is_empty());
}

#[tokio::test]
async fn unknown_or_missing_kid_is_refused() {
    let (identity, pem) = sandbox();
    let other = SigningKey::generate().unwrap().to_pem();
    // Signed by a key the provider does not know, under that key's kid.
    assert_invalid(
        &identity,
        &forge(&other, &header_for(&other), &valid_claims()),
    )
    .await;
    // Signed by our key but naming another kid, or none.
    for header in [
        json!({"typ": "JWT", "alg": "EdDSA", "kid": "unknown"}),
        json!({"typ": "JWT", "alg": "EdDSA"}),
    ] {
        assert_invalid(&identity, &forge(&pem, &header, &valid_claims())).await;
    }
}

#[tokio::test]
async fn another_keys_signature_under_our_kid_is_refused() {
    let (identity, pem) = sandbox();
    let other = SigningKey::generate().unwrap().to_pem();
    assert_invalid(
        &identity,
        &forge(&other, &header_for(&pem), &valid_claims()),
    )
    .await;
}

#[tokio::test]
async fn one_flipped_signature_bit_is_refused() {
    let (identity, _) = sandbox();
    let issued = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let token = issued.token.expose();
    let (input, signature) = token.rsplit_once('.').unwrap();
    let signature = URL_SAFE_NO_PAD.decode(signature).unwrap();
    for bit in [0, 7, 100, 511] {
        let mut flipped = signature.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        let spoiled = format!("{input}.{}", URL_SAFE_NO_PAD.encode(&flipped));
        assert_invalid(&identity, &spoiled).await;
    }
    assert!(identity.verify(token).await.is_ok(), "control");
}

#[tokio::test]
async fn a_changed_payload_under_the_original_signature_is_refused() {
    let (identity, _) = sandbox();
    let issued = identity
        .issue_token(&credentials(NO_ROLE, SECRET))
        .await
        .unwrap();
    let token = issued.token.expose();
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let mut claims = payload(token);
    claims["roles"] = json!(["SvcTerminal"]);
    parts[1] = URL_SAFE_NO_PAD.encode(claims.to_string());
    assert_invalid(&identity, &parts.join(".")).await;
}

#[tokio::test]
async fn a_token_of_the_other_environment_is_refused() {
    let clients = clients();
    let (sandbox, _) = provider(Environment::Sandbox, clients.clone());
    let (production, _) = provider(Environment::Production, clients);
    let from_sandbox = sandbox
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let from_production = production
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    assert_invalid(&production, from_sandbox.token.expose()).await;
    assert_invalid(&sandbox, from_production.token.expose()).await;
    assert!(
        sandbox.verify(from_sandbox.token.expose()).await.is_ok(),
        "control"
    );
    assert!(
        production
            .verify(from_production.token.expose())
            .await
            .is_ok(),
        "control"
    );
}

#[tokio::test]
async fn another_environments_key_is_refused_even_with_the_same_issuer() {
    // A production provider misconfigured with the sandbox's issuer and audience: the key
    // alone still tells the environments apart.
    let (sandbox, _) = sandbox();
    let mut config = config(Environment::Production);
    config.issuer = issuer(Environment::Sandbox);
    let production = BuiltinIdentity::new(
        config,
        KeySet::new(SigningKey::generate().unwrap()),
        clients(),
    );
    let token = sandbox
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    assert_invalid(&production, token.token.expose()).await;
}

#[tokio::test]
async fn the_right_key_with_the_other_environments_claim_is_refused() {
    for env in ["production", "Sandbox", ""] {
        let (identity, token) = forged(|c| c["env"] = json!(env));
        assert_invalid(&identity, &token).await;
    }
    // And the other way round: a production provider given a token with env sandbox.
    let (production, pem) = provider(Environment::Production, clients());
    let mut claims = valid_claims();
    claims["iss"] = json!(issuer(Environment::Production));
    claims["env"] = json!("sandbox");
    assert_invalid(&production, &forge(&pem, &header_for(&pem), &claims)).await;
    claims["env"] = json!("production");
    assert!(
        production
            .verify(&forge(&pem, &header_for(&pem), &claims))
            .await
            .is_ok(),
        "control"
    );
}

#[tokio::test]
async fn malformed_strings_are_refused() {
    let (identity, _) = sandbox();
    let valid = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let valid = valid.token.expose();
    let (two_segments, _) = valid.rsplit_once('.').unwrap();
    let cases = [
        String::new(),
        " ".to_owned(),
        "garbage".to_owned(),
        "a.b".to_owned(),
        "a.b.c".to_owned(),
        "..".to_owned(),
        two_segments.to_owned(),
        format!("{valid}.extra"),
        format!("{valid}x"),
        format!(" {valid}"),
        format!("Bearer {valid}"),
        "é.é.é".to_owned(),
        "x".repeat(100_000),
    ];
    for case in &cases {
        assert_invalid(&identity, case).await;
    }
}
