//! The OpenID Connect adapter against a real provider (the npm `oidc-provider` package): what
//! the contract does not cover. Clients with no terminal here, tokens fetched straight from
//! the provider, client_secret_post, roles in other claims, another issuer with the same key,
//! a flood of unknown key ids, the provider stopped, restarted and hanging, and no secret in
//! an error.

// Tests panic on failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::time::{Duration, Instant};

use checkout_domain::auth::Role;
use checkout_domain::error::AuthFailure;
use checkout_domain::ports::{IdentityError, IdentityProvider, ProviderUnavailable};
use checkout_identity::{OidcConfig, OidcIdentity};
use serde_json::{json, Value};

use crate::contract::{provider_clients, MutableClients, Oidc, Subject, UNREGISTERED};
use crate::node_provider::NodeProvider;
use crate::support::{assert_rejected, credentials, TempDir, AUDIENCE, CLIENT, SECRET};

#[track_caller]
fn assert_unavailable<T: std::fmt::Debug>(result: Result<T, IdentityError>) -> String {
    match result {
        Err(IdentityError::Unavailable(e)) => {
            assert!(
                e.chain().any(|c| c.is::<ProviderUnavailable>()),
                "not marked as the provider being unavailable: {e:#}"
            );
            format!("{e:#}")
        }
        other => panic!("expected the provider unavailable, got {other:?}"),
    }
}

async fn jwks_fetches(provider: &NodeProvider) -> u64 {
    let stats: Value = reqwest::get(format!("{}/__test/stats", provider.issuer))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    stats["jwks"].as_u64().unwrap()
}

#[tokio::test]
async fn a_token_fetched_from_the_provider_directly_verifies_the_same_way() {
    let oidc = Oidc::start();
    let token = oidc.provider.token(CLIENT, SECRET).await;
    let claims = oidc.identity.verify(&token).await.unwrap();
    assert_eq!(claims.client_id, CLIENT);
    assert_eq!(claims.terminal.as_str(), "T0001");
    assert_eq!(claims.roles, vec![Role::SvcTerminal]);
}

#[tokio::test]
async fn a_token_the_provider_issued_expires_at_its_exp() {
    let clients = json!([
        {"client_id": CLIENT, "client_secret": SECRET, "ttl": 2,
         "claims": {"roles": ["SvcTerminal"]}},
    ]);
    let oidc = Oidc::start_with(clients, |config| config.leeway_secs = 0);
    let issued = oidc
        .identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    assert!(issued.expires_in <= 2, "expiresIn {}", issued.expires_in);
    oidc.identity.verify(issued.token.expose()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(3100)).await;
    assert_rejected(
        oidc.identity.verify(issued.token.expose()).await,
        AuthFailure::ExpiredToken,
    );
}

#[tokio::test]
async fn a_provider_client_with_no_terminal_here_is_refused() {
    let oidc = Oidc::start();
    // Its tokens verify at the provider, but the service has no terminal for it: SVC_005.
    let token = oidc.provider.token(UNREGISTERED, SECRET).await;
    match oidc.identity.verify(&token).await {
        Err(IdentityError::UnregisteredClient) => {}
        other => panic!("expected UnregisteredClient, got {other:?}"),
    }
    // And the service's token route gives it no token.
    assert_rejected(
        oidc.identity
            .issue_token(&credentials(UNREGISTERED, SECRET))
            .await,
        AuthFailure::InvalidCredentials,
    );
}

#[tokio::test]
async fn client_secret_post_is_used_when_the_provider_takes_only_it() {
    let provider = NodeProvider::start(json!({
        "audience": AUDIENCE,
        "auth_methods": ["client_secret_post"],
        "clients": [{"client_id": CLIENT, "client_secret": SECRET,
                     "auth_method": "client_secret_post", "claims": {"roles": ["SvcTerminal"]}}],
    }));
    let identity = OidcIdentity::new(
        crate::contract::oidc_config(&provider),
        MutableClients::standard(),
    )
    .unwrap();
    let issued = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    assert_eq!(issued.expires_in, 600);
    assert_eq!(
        identity
            .verify(issued.token.expose())
            .await
            .unwrap()
            .client_id,
        CLIENT
    );
    assert_rejected(
        identity.issue_token(&credentials(CLIENT, "wrong")).await,
        AuthFailure::InvalidCredentials,
    );
}

#[tokio::test]
async fn the_role_is_read_from_the_configured_claims() {
    let clients = json!([
        {"client_id": CLIENT, "client_secret": SECRET,
         "claims": {"realm_access": {"roles": ["offline_access", "SvcTerminal"]}}},
        {"client_id": crate::support::NO_ROLE, "client_secret": SECRET,
         "claims": {"roles": ["SvcTerminal"]}},
    ]);
    // Only realm_access.roles counts: the second client's `roles` claim is not read.
    let oidc = Oidc::start_with(clients, |config| {
        config.role_claims = vec!["realm_access.roles".into()];
    });
    let token = oidc.provider.token(CLIENT, SECRET).await;
    assert_eq!(
        oidc.identity.verify(&token).await.unwrap().roles,
        vec![Role::SvcTerminal]
    );
    let token = oidc.provider.token(crate::support::NO_ROLE, SECRET).await;
    assert!(oidc.identity.verify(&token).await.unwrap().roles.is_empty());
}

#[tokio::test]
async fn a_token_of_another_issuer_with_the_same_key_is_refused() {
    let oidc = Oidc::start();
    let keys = oidc.provider.keys().await;
    let other = NodeProvider::start(json!({
        "audience": AUDIENCE, "keys": keys, "clients": provider_clients(),
    }));
    let token = other.token(CLIENT, SECRET).await;
    assert_eq!(
        crate::support::header(&token)["kid"],
        keys[0]["kid"],
        "the other issuer signs with the same key"
    );
    assert_rejected(
        oidc.identity.verify(&token).await,
        AuthFailure::InvalidToken,
    );
    // The control: the same claims from the right issuer verify.
    let token = oidc.provider.token(CLIENT, SECRET).await;
    oidc.identity.verify(&token).await.unwrap();
}

#[tokio::test]
async fn a_flood_of_unknown_key_ids_fetches_the_keys_at_most_once_per_interval() {
    let oidc = Oidc::start_with(provider_clients(), |config| {
        config.key_refetch_interval = Duration::from_secs(60);
    });
    let token = oidc.provider.token(CLIENT, SECRET).await;
    oidc.identity.verify(&token).await.unwrap();
    let before = jwks_fetches(&oidc.provider).await;
    assert_eq!(before, 1);
    let claims = oidc.claims(CLIENT);
    for i in 0..40 {
        let forged = oidc
            .provider
            .sign(json!({"kid": format!("forged-{i}")}), claims.clone(), true)
            .await;
        assert_rejected(
            oidc.identity.verify(&forged).await,
            AuthFailure::InvalidToken,
        );
    }
    // No refetch: the first fetch was less than the interval ago.
    assert_eq!(jwks_fetches(&oidc.provider).await, before);
    // A rotated key is likewise learnt only once the interval allows: a short one.
    let oidc = Oidc::start();
    let token = oidc.provider.token(CLIENT, SECRET).await;
    oidc.identity.verify(&token).await.unwrap();
    oidc.provider.rotate().await;
    let rotated = oidc.provider.token(CLIENT, SECRET).await;
    tokio::time::sleep(Duration::from_millis(350)).await;
    for _ in 0..20 {
        oidc.identity.verify(&rotated).await.unwrap();
    }
    assert_eq!(jwks_fetches(&oidc.provider).await, 2);
}

#[tokio::test]
async fn a_retired_key_no_longer_verifies_once_the_keys_are_fetched_again() {
    let oidc = Oidc::start();
    let old = oidc.provider.token(CLIENT, SECRET).await;
    oidc.identity.verify(&old).await.unwrap();
    oidc.provider.rotate().await;
    oidc.provider.retire_old_keys().await;
    tokio::time::sleep(Duration::from_millis(350)).await;
    let new = oidc.provider.token(CLIENT, SECRET).await;
    oidc.identity.verify(&new).await.unwrap();
    assert_rejected(oidc.identity.verify(&old).await, AuthFailure::InvalidToken);
}

#[tokio::test]
async fn a_key_the_provider_removed_stops_verifying_after_the_refresh_interval() {
    let oidc = Oidc::start_with(provider_clients(), |config| {
        config.key_refresh_interval = Duration::from_secs(1);
    });
    let old = oidc.provider.token(CLIENT, SECRET).await;
    oidc.identity.verify(&old).await.unwrap();
    // The provider drops the key (a compromised key replaced); no token names the new one.
    oidc.provider.rotate().await;
    oidc.provider.retire_old_keys().await;
    oidc.identity.verify(&old).await.unwrap();
    assert_eq!(
        jwks_fetches(&oidc.provider).await,
        1,
        "no fetch before the interval"
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // The first verification after the interval still uses the cached keys and fetches
    // anew in the background; soon after, the removed key verifies nothing.
    let started = Instant::now();
    let refused = loop {
        match oidc.identity.verify(&old).await {
            Err(IdentityError::Rejected(AuthFailure::InvalidToken)) => break true,
            Ok(_) if started.elapsed() < Duration::from_secs(3) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            _ => break false,
        }
    };
    assert!(refused, "the removed key still verifies");
    assert_eq!(jwks_fetches(&oidc.provider).await, 2);
}

#[tokio::test]
async fn with_the_provider_down_tokens_are_unavailable_and_cached_keys_verify_until_they_expire() {
    let mut oidc = Oidc::start_with(provider_clients(), |config| {
        config.key_max_age = Duration::from_secs(4);
    });
    let issued = oidc
        .identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let keys = oidc.provider.keys().await;
    oidc.provider.stop();

    let started = Instant::now();
    let error = assert_unavailable(
        oidc.identity
            .issue_token(&credentials(CLIENT, SECRET))
            .await,
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(!error.contains(SECRET), "{error}");
    // Verification goes on with the cached keys...
    oidc.identity.verify(issued.token.expose()).await.unwrap();
    // ...until they are older than key_max_age: then it is unavailable, not a refusal.
    tokio::time::sleep(Duration::from_millis(4100)).await;
    assert_unavailable(oidc.identity.verify(issued.token.expose()).await);

    // The provider back (same port, same keys): everything works again without a restart.
    oidc.provider.restart(keys);
    tokio::time::sleep(Duration::from_millis(350)).await;
    oidc.identity.verify(issued.token.expose()).await.unwrap();
    let again = oidc
        .identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    oidc.identity.verify(again.token.expose()).await.unwrap();
}

#[tokio::test]
async fn a_provider_that_never_answers_is_unavailable_within_the_time_out() {
    // Accepts connections (the kernel's backlog) and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let mut config = OidcConfig::new(issuer, AUDIENCE);
    config.http_timeout = Duration::from_millis(700);
    let identity = OidcIdentity::new(config, MutableClients::standard()).unwrap();
    let started = Instant::now();
    assert_unavailable(identity.issue_token(&credentials(CLIENT, SECRET)).await);
    assert_unavailable(identity.verify(&crate::support::forge_any()).await);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    drop(listener);
}

#[tokio::test]
async fn no_secret_or_token_in_errors_or_debug_output() {
    let oidc = Oidc::start();
    let issued = oidc
        .identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let token = issued.token.expose().to_owned();
    let debug = format!(
        "{:?} {:?} {:?}",
        oidc.identity,
        issued,
        credentials(CLIENT, SECRET)
    );
    assert!(
        !debug.contains(SECRET) && !debug.contains(&token),
        "{debug}"
    );
    let refused = oidc
        .identity
        .issue_token(&credentials(CLIENT, "a-wrong-secret"))
        .await
        .unwrap_err();
    let text = format!("{refused:?} {refused}");
    assert!(!text.contains("a-wrong-secret"), "{text}");
    let mut tampered = token.clone();
    tampered.push('x');
    let refused = oidc.identity.verify(&tampered).await.unwrap_err();
    let text = format!("{refused:?} {refused}");
    assert!(!text.contains(&token), "{text}");
}

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &std::path::Path, args: &[&str]) {
    let status = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("running openssl");
    assert!(status.success(), "openssl {args:?}");
}

/// A private CA and a certificate it signed for 127.0.0.1: (CA PEM, key PEM, certificate PEM).
fn private_ca_certificate(dir: &std::path::Path) -> (String, String, String) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "1",
        "-subj",
        "/CN=test CA",
    ]);
    openssl(dir, &ca);
    let mut leaf = vec!["req"];
    leaf.extend(ec);
    leaf.extend([
        "-keyout",
        "leaf.key",
        "-out",
        "leaf.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(dir, &leaf);
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "1",
            "-extfile",
            "leaf.ext",
        ],
    );
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    (read("ca.pem"), read("leaf.key"), read("leaf.pem"))
}

#[tokio::test]
async fn a_provider_behind_a_private_ca_is_reached_only_with_that_ca() {
    let dir = TempDir::new();
    let (ca, key, cert) = private_ca_certificate(dir.path());
    let provider = NodeProvider::start(json!({
        "audience": AUDIENCE,
        "clients": provider_clients(),
        "tls": {"key": key, "cert": cert, "ca": ca},
    }));
    assert!(
        provider.issuer.starts_with("https://"),
        "{}",
        provider.issuer
    );

    // The public roots do not know its CA: the provider cannot be reached (503, never a
    // refusal of the merchant's credentials).
    let public_roots = OidcIdentity::new(
        crate::contract::oidc_config(&provider),
        MutableClients::standard(),
    )
    .unwrap();
    assert_unavailable(public_roots.issue_token(&credentials(CLIENT, SECRET)).await);

    let mut config = crate::contract::oidc_config(&provider);
    config.ca_certificates_pem = ca.into_bytes();
    let trusted = OidcIdentity::new(config, MutableClients::standard()).unwrap();
    let issued = trusted
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    let claims = trusted.verify(issued.token.expose()).await.unwrap();
    assert_eq!(claims.client_id, CLIENT);

    // A file with no certificate is refused when the adapter is made.
    let mut config = crate::contract::oidc_config(&provider);
    config.ca_certificates_pem = b"not a certificate".to_vec();
    assert!(OidcIdentity::new(config, MutableClients::standard()).is_err());
}
