//! One contract for every identity adapter: issuing, verifying, expiry, missing role, wrong
//! audience, another issuer, another key, HMAC keyed with the public key, rotated keys and
//! revocation, run against the built-in provider and against the OpenID Connect adapter
//! talking to a real provider (the npm `oidc-provider` package).

// Test helpers panic on failure, like the tests that call them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use checkout_domain::auth::{OAuthClient, Role};
use checkout_domain::error::AuthFailure;
use checkout_domain::ports::{ClientStore, IdentityProvider};
use checkout_domain::values::TerminalNumber;
use checkout_identity::{
    hash_secret, BuiltinIdentity, Environment, KeySet, OidcConfig, OidcIdentity, SigningKey,
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use crate::node_provider::NodeProvider;
use crate::support::{
    assert_rejected, config, credentials, forge, now, valid_claims, AUDIENCE, CLIENT, NO_ROLE,
    SECRET, TERMINAL,
};

/// A client of the provider that has no record in the service.
pub const UNREGISTERED: &str = "T0005-unregistered";

/// Clients that tests may deactivate.
#[derive(Default)]
pub struct MutableClients(Mutex<HashMap<String, OAuthClient>>);

impl MutableClients {
    pub fn standard() -> Arc<Self> {
        let store = MutableClients::default();
        for (id, terminal, roles) in [
            (CLIENT, TERMINAL, vec![Role::SvcTerminal]),
            (NO_ROLE, "T0003", vec![]),
        ] {
            store.0.lock().unwrap().insert(
                id.to_owned(),
                OAuthClient {
                    client_id: id.to_owned(),
                    secret_hash: hash_secret(SECRET).unwrap(),
                    terminal: TerminalNumber::parse(terminal).unwrap(),
                    roles,
                    active: true,
                },
            );
        }
        Arc::new(store)
    }

    pub fn set_active(&self, client_id: &str, active: bool) {
        self.0.lock().unwrap().get_mut(client_id).unwrap().active = active;
    }
}

#[async_trait]
impl ClientStore for MutableClients {
    async fn get_client(&self, client_id: &str) -> anyhow::Result<Option<OAuthClient>> {
        Ok(self.0.lock().unwrap().get(client_id).cloned())
    }
}

/// What the contract needs of an adapter under test.
#[async_trait]
pub trait Subject: Send + Sync {
    /// The adapter as it is now (after any rotation).
    fn identity(&self) -> Arc<dyn IdentityProvider>;
    /// The service's client store behind it.
    fn clients(&self) -> &MutableClients;
    /// Claims a valid token for `client_id` carries, as the adapter's issuer writes them
    /// (with the SvcTerminal role).
    fn claims(&self, client_id: &str) -> Value;
    /// A token over `claims`, signed as the adapter's issuer signs.
    async fn sign(&self, claims: &Value) -> String;
    /// A token over `claims` under the issuer's current key id, signed by another key.
    async fn sign_with_other_key(&self, claims: &Value) -> String;
    /// A token over `claims`, HS256 keyed with the issuer's public key (each form tried).
    async fn hmac_with_public_key(&self, claims: &Value) -> Vec<String>;
    /// The issuer rotates its signing key (old tokens must keep verifying).
    async fn rotate(&self);
}

/// The whole contract, in order; each step says what failed.
pub async fn contract(subject: &dyn Subject) {
    issuing_and_verifying(subject).await;
    refusals_at_issue(subject).await;
    missing_role(subject).await;
    expiry_audience_issuer_and_keys(subject).await;
    rotation(subject).await;
    revocation(subject).await;
}

async fn issuing_and_verifying(subject: &dyn Subject) {
    let identity = subject.identity();
    let issued = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .expect("issuing a token for good credentials");
    assert!(
        (1..=3600).contains(&issued.expires_in),
        "expiresIn {}",
        issued.expires_in
    );
    let claims = identity.verify(issued.token.expose()).await.unwrap();
    assert_eq!(claims.client_id, CLIENT);
    assert_eq!(claims.terminal.as_str(), TERMINAL);
    assert_eq!(claims.roles, vec![Role::SvcTerminal]);
    let left = (claims.expires_at - time::OffsetDateTime::now_utc()).whole_seconds();
    assert!((0..=3600).contains(&left), "expires in {left} s");
    // The signer's own claims verify too (the forger is sound).
    let forged = subject.sign(&subject.claims(CLIENT)).await;
    assert_eq!(identity.verify(&forged).await.unwrap().client_id, CLIENT);
}

async fn refusals_at_issue(subject: &dyn Subject) {
    let identity = subject.identity();
    for creds in [
        credentials(CLIENT, "not the secret"),
        credentials("no-such-client", SECRET),
    ] {
        assert_rejected(
            identity.issue_token(&creds).await,
            AuthFailure::InvalidCredentials,
        );
    }
}

async fn missing_role(subject: &dyn Subject) {
    let identity = subject.identity();
    let issued = identity
        .issue_token(&credentials(NO_ROLE, SECRET))
        .await
        .unwrap();
    let claims = identity.verify(issued.token.expose()).await.unwrap();
    assert_eq!(claims.terminal.as_str(), "T0003");
    assert!(claims.roles.is_empty(), "{:?}", claims.roles);
}

async fn expiry_audience_issuer_and_keys(subject: &dyn Subject) {
    let identity = subject.identity();
    let mut expired = subject.claims(CLIENT);
    expired["exp"] = json!(now() - 120);
    expired["iat"] = json!(now() - 720);
    expired["nbf"] = json!(now() - 720);
    let token = subject.sign(&expired).await;
    assert_rejected(identity.verify(&token).await, AuthFailure::ExpiredToken);

    let mut early = subject.claims(CLIENT);
    early["nbf"] = json!(now() + 300);
    let token = subject.sign(&early).await;
    assert_rejected(identity.verify(&token).await, AuthFailure::InvalidToken);

    for (claim, value) in [
        ("aud", json!("another-api")),
        ("aud", json!(["another-api"])),
        ("iss", json!("https://another-issuer.example")),
    ] {
        let mut claims = subject.claims(CLIENT);
        claims[claim] = value;
        let token = subject.sign(&claims).await;
        assert_rejected(identity.verify(&token).await, AuthFailure::InvalidToken);
    }
    for claim in ["aud", "iss", "exp"] {
        let mut claims = subject.claims(CLIENT);
        claims.as_object_mut().unwrap().remove(claim);
        let token = subject.sign(&claims).await;
        assert_rejected(identity.verify(&token).await, AuthFailure::InvalidToken);
    }

    let token = subject.sign_with_other_key(&subject.claims(CLIENT)).await;
    assert_rejected(identity.verify(&token).await, AuthFailure::InvalidToken);
    for token in subject.hmac_with_public_key(&subject.claims(CLIENT)).await {
        assert_rejected(identity.verify(&token).await, AuthFailure::InvalidToken);
    }
    // alg none, with and without a signature.
    let valid = subject.sign(&subject.claims(CLIENT)).await;
    let mut parts = valid.split('.');
    let (header, payload, signature) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let mut none: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, header).unwrap(),
    )
    .unwrap();
    none["alg"] = json!("none");
    let none = crate::support::b64(none.to_string().as_bytes());
    for token in [
        format!("{none}.{payload}."),
        format!("{none}.{payload}.{signature}"),
    ] {
        assert_rejected(identity.verify(&token).await, AuthFailure::InvalidToken);
    }
}

async fn rotation(subject: &dyn Subject) {
    let before = subject
        .identity()
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    subject.rotate().await;
    let identity = subject.identity();
    let after = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    assert_ne!(
        crate::support::header(before.token.expose())["kid"],
        crate::support::header(after.token.expose())["kid"],
        "the rotation changed the signing key"
    );
    for token in [&before, &after] {
        let claims = identity.verify(token.token.expose()).await.unwrap();
        assert_eq!(claims.client_id, CLIENT);
    }
}

async fn revocation(subject: &dyn Subject) {
    let identity = subject.identity();
    let issued = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    identity.verify(issued.token.expose()).await.unwrap();
    subject.clients().set_active(CLIENT, false);
    assert_rejected(
        identity.verify(issued.token.expose()).await,
        AuthFailure::InvalidToken,
    );
    assert_rejected(
        identity.issue_token(&credentials(CLIENT, SECRET)).await,
        AuthFailure::InvalidCredentials,
    );
    subject.clients().set_active(CLIENT, true);
    identity.verify(issued.token.expose()).await.unwrap();
}

// ---------------------------------------------------------------------------------------
// The built-in provider.

pub struct Builtin {
    clients: Arc<MutableClients>,
    state: Mutex<(Arc<BuiltinIdentity>, String)>,
}

impl Builtin {
    fn make(clients: &Arc<MutableClients>, key: SigningKey, old: Option<&str>) -> BuiltinIdentity {
        let mut keys = KeySet::new(key);
        if let Some(pem) = old {
            keys = keys
                .with_verification_key(SigningKey::from_pem(pem).unwrap().verifying_key().clone());
        }
        BuiltinIdentity::new(config(Environment::Sandbox), keys, clients.clone())
            .with_client_status_ttl(Duration::ZERO)
    }

    pub fn new() -> Self {
        let clients = MutableClients::standard();
        let key = SigningKey::generate().unwrap();
        let pem = key.to_pem();
        let identity = Arc::new(Self::make(&clients, key, None));
        Builtin {
            clients,
            state: Mutex::new((identity, pem)),
        }
    }

    fn pem(&self) -> String {
        self.state.lock().unwrap().1.clone()
    }
}

#[async_trait]
impl Subject for Builtin {
    fn identity(&self) -> Arc<dyn IdentityProvider> {
        self.state.lock().unwrap().0.clone()
    }

    fn clients(&self) -> &MutableClients {
        &self.clients
    }

    fn claims(&self, client_id: &str) -> Value {
        let mut claims = valid_claims();
        claims["sub"] = json!(client_id);
        claims
    }

    async fn sign(&self, claims: &Value) -> String {
        let pem = self.pem();
        forge(&pem, &crate::support::header_for(&pem), claims)
    }

    async fn sign_with_other_key(&self, claims: &Value) -> String {
        let other = SigningKey::generate().unwrap().to_pem();
        forge(&other, &crate::support::header_for(&self.pem()), claims)
    }

    async fn hmac_with_public_key(&self, claims: &Value) -> Vec<String> {
        let key = SigningKey::from_pem(&self.pem()).unwrap();
        let public = key.verifying_key().public_key().to_vec();
        let jwks = self.state.lock().unwrap().0.jwks().to_string();
        [public, jwks.into_bytes()]
            .iter()
            .map(|secret| {
                let mut header = Header::new(Algorithm::HS256);
                header.kid = Some(key.kid().to_owned());
                jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret)).unwrap()
            })
            .collect()
    }

    async fn rotate(&self) {
        let mut state = self.state.lock().unwrap();
        let key = SigningKey::generate().unwrap();
        let pem = key.to_pem();
        let identity = Self::make(&self.clients, key, Some(&state.1));
        *state = (Arc::new(identity), pem);
    }
}

#[tokio::test]
async fn the_builtin_provider_keeps_the_contract() {
    contract(&Builtin::new()).await;
}

// ---------------------------------------------------------------------------------------
// The OpenID Connect adapter against the npm provider.

/// The provider's clients: the contract's two, and one the service does not know.
pub fn provider_clients() -> Value {
    json!([
        {"client_id": CLIENT, "client_secret": SECRET, "claims": {"roles": ["SvcTerminal"]}},
        {"client_id": NO_ROLE, "client_secret": SECRET},
        {"client_id": UNREGISTERED, "client_secret": SECRET, "claims": {"roles": ["SvcTerminal"]}},
    ])
}

/// The adapter's configuration for `provider`, with test-sized intervals.
pub fn oidc_config(provider: &NodeProvider) -> OidcConfig {
    let mut config = OidcConfig::new(provider.issuer.clone(), AUDIENCE);
    config.http_timeout = Duration::from_secs(2);
    config.key_refetch_interval = Duration::from_millis(300);
    config
}

pub struct Oidc {
    pub provider: NodeProvider,
    pub clients: Arc<MutableClients>,
    pub identity: Arc<OidcIdentity>,
}

impl Oidc {
    pub fn start() -> Self {
        Self::start_with(provider_clients(), |_| {})
    }

    pub fn start_with(clients: Value, edit: impl FnOnce(&mut OidcConfig)) -> Self {
        let provider = NodeProvider::start(json!({"audience": AUDIENCE, "clients": clients}));
        let store = MutableClients::standard();
        let mut config = oidc_config(&provider);
        edit(&mut config);
        let identity = OidcIdentity::new(config, store.clone())
            .unwrap()
            .with_client_status_ttl(Duration::ZERO);
        Oidc {
            provider,
            clients: store,
            identity: Arc::new(identity),
        }
    }
}

#[async_trait]
impl Subject for Oidc {
    fn identity(&self) -> Arc<dyn IdentityProvider> {
        self.identity.clone()
    }

    fn clients(&self) -> &MutableClients {
        &self.clients
    }

    fn claims(&self, client_id: &str) -> Value {
        let now = now();
        json!({
            "iss": self.provider.issuer,
            "aud": AUDIENCE,
            "sub": client_id,
            "client_id": client_id,
            "roles": ["SvcTerminal"],
            "iat": now,
            "exp": now + 600,
            "jti": "test-jti",
        })
    }

    async fn sign(&self, claims: &Value) -> String {
        self.provider.sign(json!({}), claims.clone(), false).await
    }

    async fn sign_with_other_key(&self, claims: &Value) -> String {
        self.provider.sign(json!({}), claims.clone(), true).await
    }

    async fn hmac_with_public_key(&self, claims: &Value) -> Vec<String> {
        let url = format!("{}/__test/public-pem", self.provider.issuer);
        let pem: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
        let pem = pem["pem"].as_str().unwrap().to_owned();
        let jwks = reqwest::get(format!("{}/jwks", self.provider.issuer))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let kid = self.provider.keys().await[0]["kid"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut tokens = Vec::new();
        for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
            for secret in [pem.as_bytes(), jwks.as_bytes()] {
                let mut header = Header::new(alg);
                header.kid = Some(kid.clone());
                tokens.push(
                    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret))
                        .unwrap(),
                );
            }
        }
        tokens
    }

    async fn rotate(&self) {
        self.provider.rotate().await;
        // The provider answers the new key at once; the adapter learns it by the new kid,
        // once the refetch interval since its last fetch has passed.
        tokio::time::sleep(Duration::from_millis(350)).await;
    }
}

#[tokio::test]
async fn the_oidc_adapter_keeps_the_contract_against_a_real_provider() {
    contract(&Oidc::start()).await;
}
