//! A client store with real Argon2id hashes, providers, and a token forger.

// Test helpers panic on failure, like the tests that call them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use checkout_domain::auth::{ClientCredentials, OAuthClient, Role, Secret};
use checkout_domain::error::AuthFailure;
use checkout_domain::ports::{ClientStore, IdentityError};
use checkout_domain::values::TerminalNumber;
use checkout_identity::{
    hash_secret, BuiltinIdentity, Environment, IdentityConfig, KeySet, SigningKey,
};
use ring::signature::Ed25519KeyPair;
use serde_json::{json, Value};
use time::OffsetDateTime;

pub const LIFETIME_SECS: i64 = 600;
pub const AUDIENCE: &str = "hosted-checkout";

/// The sandbox client of every test: active, role SvcTerminal, terminal T0001.
pub const CLIENT: &str = "T0001-client";
pub const SECRET: &str = "correct horse battery staple";
pub const TERMINAL: &str = "T0001";
/// Same secret, but inactive.
pub const INACTIVE: &str = "T0002-inactive";
/// Same secret, active, no roles.
pub const NO_ROLE: &str = "T0003-norole";
/// Same secret, active, but its stored hash is not a PHC string.
pub const BAD_HASH: &str = "T0004-badhash";

/// OAuth clients in a map, with real Argon2id hashes.
pub struct StaticClients(HashMap<String, OAuthClient>);

#[async_trait]
impl ClientStore for StaticClients {
    async fn get_client(&self, client_id: &str) -> anyhow::Result<Option<OAuthClient>> {
        Ok(self.0.get(client_id).cloned())
    }
}

/// A store that always fails.
pub struct BrokenStore;

#[async_trait]
impl ClientStore for BrokenStore {
    async fn get_client(&self, _client_id: &str) -> anyhow::Result<Option<OAuthClient>> {
        anyhow::bail!("the database is down")
    }
}

fn client(id: &str, terminal: &str, roles: Vec<Role>, active: bool) -> OAuthClient {
    OAuthClient {
        client_id: id.to_owned(),
        secret_hash: hash_secret(SECRET).unwrap(),
        terminal: TerminalNumber::parse(terminal).unwrap(),
        roles,
        active,
    }
}

pub fn clients() -> Arc<StaticClients> {
    let mut bad = client(BAD_HASH, "T0004", vec![Role::SvcTerminal], true);
    bad.secret_hash = format!("plain:{SECRET}");
    let list = [
        client(CLIENT, TERMINAL, vec![Role::SvcTerminal], true),
        client(INACTIVE, "T0002", vec![Role::SvcTerminal], false),
        client(NO_ROLE, "T0003", vec![], true),
        bad,
    ];
    Arc::new(StaticClients(
        list.into_iter().map(|c| (c.client_id.clone(), c)).collect(),
    ))
}

pub fn issuer(env: Environment) -> String {
    format!("hosted-checkout-{env}")
}

pub fn config(env: Environment) -> IdentityConfig {
    IdentityConfig {
        issuer: issuer(env),
        audience: AUDIENCE.to_owned(),
        environment: env,
        token_lifetime: time::Duration::seconds(LIFETIME_SECS),
    }
}

/// A provider of `env` with a fresh key; also the key's PEM, to forge tokens with it.
pub fn provider(env: Environment, clients: Arc<dyn ClientStore>) -> (BuiltinIdentity, String) {
    let key = SigningKey::generate().unwrap();
    let pem = key.to_pem();
    (
        BuiltinIdentity::new(config(env), KeySet::new(key), clients),
        pem,
    )
}

pub fn sandbox() -> (BuiltinIdentity, String) {
    provider(Environment::Sandbox, clients())
}

pub fn credentials(client_id: &str, secret: &str) -> ClientCredentials {
    ClientCredentials {
        client_id: client_id.to_owned(),
        client_secret: Secret::new(secret),
    }
}

pub fn now() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

/// Claims that the sandbox provider accepts, for tests to spoil one at a time.
pub fn valid_claims() -> Value {
    let now = now();
    json!({
        "iss": issuer(Environment::Sandbox),
        "aud": AUDIENCE,
        "sub": CLIENT,
        "terminal": TERMINAL,
        "roles": ["SvcTerminal"],
        "env": "sandbox",
        "iat": now,
        "nbf": now,
        "exp": now + LIFETIME_SECS,
        "jti": "test-jti",
    })
}

/// The header our tokens carry, for the key in `pem`.
pub fn header_for(pem: &str) -> Value {
    let kid = SigningKey::from_pem(pem).unwrap().kid().to_owned();
    json!({"typ": "JWT", "alg": "EdDSA", "kid": kid})
}

pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `header.claims` in base64url, as JWS signs it.
pub fn signing_input(header: &Value, claims: &Value) -> String {
    format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    )
}

/// A JWS over any header and claims, signed with Ed25519 by the key in `pem`.
pub fn forge(pem: &str, header: &Value, claims: &Value) -> String {
    let der = SigningKey::from_pem(pem).unwrap().to_pkcs8_der();
    let pair = Ed25519KeyPair::from_pkcs8(&der).unwrap();
    let input = signing_input(header, claims);
    let signature = pair.sign(input.as_bytes());
    format!("{input}.{}", b64(signature.as_ref()))
}

/// The token's payload, decoded without any check.
pub fn payload(token: &str) -> Value {
    let part = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

/// The token's header, decoded without any check.
pub fn header(token: &str) -> Value {
    let part = token.split('.').next().unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

#[track_caller]
pub fn assert_rejected(result: Result<impl std::fmt::Debug, IdentityError>, failure: AuthFailure) {
    match result {
        Err(IdentityError::Rejected(f)) => assert_eq!(f, failure),
        other => panic!("expected Rejected({failure:?}), got {other:?}"),
    }
}

/// A fresh folder under the system's temporary folder, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let nonce: String = checkout_identity::generate_secret()
            .expose()
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(12)
            .collect();
        let path = std::env::temp_dir().join(format!("checkout-identity-{nonce}"));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A well-formed RS256 token with an unknown kid and a signature that proves nothing: it
/// makes a verifier look for the kid's key.
pub fn forge_any() -> String {
    let header = json!({"alg": "RS256", "typ": "JWT", "kid": "no-such-key"});
    format!(
        "{}.{}",
        signing_input(&header, &valid_claims()),
        b64(&[0u8; 256])
    )
}
