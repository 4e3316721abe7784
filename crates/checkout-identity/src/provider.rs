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

use crate::cache::{token_key, VerifiedTokens, DEFAULT_TOKEN_CACHE_CAPACITY};
use crate::config::IdentityConfig;
use crate::hashing::HashingPool;
use crate::keys::KeySet;
use crate::revocation::{ClientStatus, DEFAULT_CLIENT_STATUS_TTL};
use crate::secrets::{random_bytes, verify_secret_with_memory, DUMMY_HASH};
use crate::tokens::{self, AccessClaims, MAX_TOKEN_LEN};

/// Longer client secrets are refused without being hashed (ours are 43 characters).
const MAX_SECRET_LEN: usize = 1024;

/// The built-in identity provider: OAuth 2.0 client credentials checked against Argon2id
/// hashes in a [`ClientStore`], and short-lived EdDSA (Ed25519) JWTs.
///
/// Argon2 runs on tokio's blocking pool, at most
/// [`with_max_concurrent_verifications`](Self::with_max_concurrent_verifications) at a time
/// (one per CPU by default), so a burst of token requests neither stalls the async workers
/// nor exhausts memory. Each running verification has a block of Argon2 memory (19 MiB); a
/// burst reuses the blocks from one verification to the next, and the last verification of
/// the burst gives them back to the operating system, so the process holds at most
/// permits × 19 MiB for hashing while tokens are issued and none at rest. It needs a tokio
/// runtime (actix-web's is one).
///
/// Verified bearer tokens are kept in a small bounded cache until their `exp` (see
/// [`with_token_cache_capacity`](Self::with_token_cache_capacity)), so that a token reused
/// for its lifetime pays the signature check once.
///
/// Every verification, cached or not, also checks that the token's client is still active,
/// as read from the [`ClientStore`] at most every
/// [`with_client_status_ttl`](Self::with_client_status_ttl): deactivating a client revokes
/// its tokens on every instance within that time.
pub struct BuiltinIdentity {
    config: IdentityConfig,
    keys: KeySet,
    clients: Arc<dyn ClientStore>,
    validation: Validation,
    hashing: Arc<Semaphore>,
    /// The Argon2 memories of the verifications under way (at most one per permit).
    hashing_memory: Arc<HashingPool>,
    verified: VerifiedTokens,
    client_status: ClientStatus,
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
            hashing_memory: Arc::default(),
            verified: VerifiedTokens::new(DEFAULT_TOKEN_CACHE_CAPACITY),
            client_status: ClientStatus::new(DEFAULT_CLIENT_STATUS_TTL),
        }
    }

    /// Bounds how many secret verifications (Argon2id) run at once; others wait their turn.
    /// Zero counts as one.
    pub fn with_max_concurrent_verifications(mut self, max: usize) -> Self {
        self.hashing = Arc::new(Semaphore::new(max.max(1)));
        self.hashing_memory = Arc::default();
        self
    }

    /// Keeps at most `capacity` verified bearer tokens (by their SHA-256, never the token),
    /// each until its `exp` and never longer; 0 turns the cache off. The default is 1024.
    ///
    /// The cache holds what the signature check answered; whether the token's client is
    /// still active is checked on every hit too (see
    /// [`with_client_status_ttl`](Self::with_client_status_ttl)).
    pub fn with_token_cache_capacity(mut self, capacity: usize) -> Self {
        self.verified = VerifiedTokens::new(capacity);
        self
    }

    /// How long what was read of a client's active flag is trusted when verifying its
    /// tokens (zero: read on every verification); the default is
    /// [`DEFAULT_CLIENT_STATUS_TTL`](crate::DEFAULT_CLIENT_STATUS_TTL). A deactivated
    /// client's tokens are refused on every instance at most this long after.
    pub fn with_client_status_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.client_status = ClientStatus::new(ttl);
        self
    }

    /// The claims, unless their client is no longer active (revoked).
    async fn unless_revoked(&self, claims: Claims) -> Result<Claims, IdentityError> {
        if self
            .client_status
            .is_active(self.clients.as_ref(), &claims.client_id)
            .await?
        {
            Ok(claims)
        } else {
            tracing::debug!("bearer token of an inactive client refused");
            Err(IdentityError::Rejected(AuthFailure::InvalidToken))
        }
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
        let mut matches = self.verify_hash(hash, secret.clone()).await?;
        if !matches {
            // A secret rotated in place: the previous one works until its overlap ends.
            if let Some(c) = &client {
                if let Some(previous) = self.clients.previous_secret_hash(&c.client_id).await? {
                    matches = self.verify_hash(previous, secret).await?;
                }
            }
        }
        Ok(client.filter(|_| matches))
    }

    /// Whether `secret` is the one `hash` was made of, on the blocking pool within the
    /// verification limit.
    async fn verify_hash(&self, hash: String, secret: Secret) -> Result<bool, IdentityError> {
        // The turn and the permit move into the blocking task and are released only when the
        // hash is done, even if this request is dropped meanwhile (a client that disconnects),
        // so that no more verifications run than there are permits.
        let turn = self.hashing_memory.turn();
        let permit = Arc::clone(&self.hashing)
            .acquire_owned()
            .await
            .map_err(|e| anyhow!("the secret verification limiter is closed: {e}"))?;
        // With a permit, one of the kept memories is free (or none is kept): at most one per
        // permit ever exists. A verification that panics loses its memory, and a later one
        // allocates anew, so the bound holds.
        let matches = tokio::task::spawn_blocking(move || {
            let mut memory = turn.take();
            let matches = verify_secret_with_memory(&hash, secret.expose(), &mut memory);
            turn.give_back(memory);
            drop(permit);
            drop(turn);
            matches
        })
        .await
        .map_err(|e| anyhow!("secret verification did not finish: {e}"))?;
        Ok(matches)
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
        let now = OffsetDateTime::now_utc();
        // Oversized strings are refused by the full verification before any hashing.
        let key = (token.len() <= MAX_TOKEN_LEN).then(|| token_key(token));
        if let Some(claims) = key.as_ref().and_then(|key| self.verified.get(key, now)) {
            return self.unless_revoked(claims).await;
        }
        let claims = tokens::verify(
            &self.keys,
            &self.validation,
            self.config.environment.as_str(),
            token,
        )
        .map_err(|refusal| {
            tracing::debug!(?refusal, "bearer token refused");
            IdentityError::Rejected(refusal.failure())
        })?;
        if let Some(key) = key {
            self.verified.insert(key, &claims, now);
        }
        self.unless_revoked(claims).await
    }
}
