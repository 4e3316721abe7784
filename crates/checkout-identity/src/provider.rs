//! [`BuiltinIdentity`]: the [`IdentityProvider`] that checks client credentials against a
//! [`ClientStore`] and issues and verifies EdDSA-signed JWTs.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;

use anyhow::anyhow;
use async_trait::async_trait;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use checkout_domain::auth::{Claims, ClientCredentials, IssuedToken, OAuthClient, Secret};
use checkout_domain::error::AuthFailure;
use checkout_domain::ports::{ClientStore, IdentityError, IdentityProvider};
use jsonwebtoken::Validation;
use time::OffsetDateTime;
use tokio::sync::Semaphore;

use crate::config::IdentityConfig;
use crate::keys::KeySet;
use crate::secrets::{random_bytes, verify_secret, DUMMY_HASH};
use crate::tokens::{self, AccessClaims};

/// Longer client secrets are refused without being hashed (ours are 43 characters).
const MAX_SECRET_LEN: usize = 1024;

/// The built-in identity provider: OAuth 2.0 client credentials checked against Argon2id
/// hashes in a [`ClientStore`], and short-lived EdDSA (Ed25519) JWTs.
///
/// Argon2 runs on tokio's blocking pool, at most
/// [`with_max_concurrent_verifications`](Self::with_max_concurrent_verifications) at a time
/// (one per CPU by default; each takes 19 MiB), so a burst of token requests neither stalls
/// the async workers nor exhausts memory. It needs a tokio runtime (actix-web's is one).
pub struct BuiltinIdentity {
    config: IdentityConfig,
    keys: KeySet,
    clients: Arc<dyn ClientStore>,
    validation: Validation,
    hashing: Arc<Semaphore>,
}

impl BuiltinIdentity {
    /// A provider that signs with `keys.active()`, verifies with every key of `keys`, and
    /// looks clients up in `clients`.
    pub fn new(config: IdentityConfig, keys: KeySet, clients: Arc<dyn ClientStore>) -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        BuiltinIdentity {
            validation: tokens::validation(&config),
            config,
            keys,
            clients,
            hashing: Arc::new(Semaphore::new(cpus)),
        }
    }

    /// Bounds how many secret verifications (Argon2id) run at once; others wait their turn.
    /// Zero counts as one.
    pub fn with_max_concurrent_verifications(mut self, max: usize) -> Self {
        self.hashing = Arc::new(Semaphore::new(max.max(1)));
        self
    }

    /// The configuration.
    pub fn config(&self) -> &IdentityConfig {
        &self.config
    }

    /// The keys.
    pub fn keys(&self) -> &KeySet {
        &self.keys
    }

    /// The JWKS of the keys (see [`KeySet::jwks`]).
    pub fn jwks(&self) -> serde_json::Value {
        self.keys.jwks()
    }

    /// The client when `secret` is its secret and it may get tokens; `None` otherwise, after
    /// the same amount of work in every case.
    async fn authenticate(
        &self,
        client: Option<OAuthClient>,
        secret: &Secret,
    ) -> Result<Option<OAuthClient>, IdentityError> {
        let usable = secret.expose().len() <= MAX_SECRET_LEN;
        let client = client.filter(|c| c.active && usable);
        // Unknown and inactive clients are checked against a dummy hash, so that the time
        // taken does not tell which client ids exist.
        let hash = client
            .as_ref()
            .map_or_else(|| DUMMY_HASH.to_owned(), |c| c.secret_hash.clone());
        let secret = if usable {
            secret.clone()
        } else {
            Secret::new("")
        };
        let _permit = self
            .hashing
            .acquire()
            .await
            .map_err(|e| anyhow!("the secret verification limiter is closed: {e}"))?;
        let matches = tokio::task::spawn_blocking(move || verify_secret(&hash, secret.expose()))
            .await
            .map_err(|e| anyhow!("secret verification did not finish: {e}"))?;
        Ok(client.filter(|_| matches))
    }
}

impl fmt::Debug for BuiltinIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltinIdentity")
            .field("config", &self.config)
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl IdentityProvider for BuiltinIdentity {
    #[tracing::instrument(skip_all, fields(client_id = ?credentials.client_id))]
    async fn issue_token(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<IssuedToken, IdentityError> {
        let client = self.clients.get_client(&credentials.client_id).await?;
        let Some(client) = self
            .authenticate(client, &credentials.client_secret)
            .await?
        else {
            tracing::debug!("client credentials refused");
            return Err(AuthFailure::InvalidCredentials.into());
        };

        let lifetime = self.config.token_lifetime.whole_seconds();
        let now = OffsetDateTime::now_utc().unix_timestamp();
        let claims = AccessClaims {
            iss: self.config.issuer.clone(),
            aud: self.config.audience.clone(),
            sub: client.client_id,
            terminal: client.terminal.as_str().to_owned(),
            roles: client.roles.iter().map(|r| r.as_str().to_owned()).collect(),
            env: self.config.environment.as_str().to_owned(),
            iat: now,
            nbf: now,
            exp: now.saturating_add(lifetime),
            jti: URL_SAFE_NO_PAD.encode(random_bytes::<16>()?),
        };
        let token = tokens::sign(self.keys.active(), &claims)?;
        Ok(IssuedToken {
            token: Secret::new(token),
            expires_in: u64::try_from(lifetime).unwrap_or(0),
        })
    }

    async fn verify(&self, token: &str) -> Result<Claims, IdentityError> {
        tokens::verify(
            &self.keys,
            &self.validation,
            self.config.environment.as_str(),
            token,
        )
        .map_err(|refusal| {
            tracing::debug!(?refusal, "bearer token refused");
            IdentityError::Rejected(refusal.failure())
        })
    }
}
