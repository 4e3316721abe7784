//! [`OidcIdentity`]: the [`IdentityProvider`] backed by an external OpenID Connect provider
//! (Keycloak, Auth0, Entra ID, Okta, ZITADEL, …).

mod claims;
mod config;
mod remote;

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use async_trait::async_trait;
use checkout_domain::auth::{Claims, ClientCredentials, IssuedToken, Secret};
use checkout_domain::error::AuthFailure;
use checkout_domain::ports::{ClientStore, IdentityError, IdentityProvider};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use time::OffsetDateTime;
use url::form_urlencoded::byte_serialize;

pub use config::{OidcConfig, DEFAULT_ALGORITHMS};

use crate::revocation::{ClientStatus, DEFAULT_CLIENT_STATUS_TTL};
use crate::tokens::MAX_TOKEN_LEN;
use claims::ProviderClaims;
use remote::{read_limited, transport_error, unavailable, AuthMethod, KeySnapshot, Remote};

/// Why a token was refused, for the debug log (never the token itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    TooLong,
    Malformed,
    WrongAlgorithm,
    UnknownKey,
    Signature,
    Expired,
    Claims,
    NoClient,
}

impl Refusal {
    fn failure(self) -> AuthFailure {
        match self {
            Refusal::Expired => AuthFailure::ExpiredToken,
            _ => AuthFailure::InvalidToken,
        }
    }
}

/// The identity provider adapter for an external OpenID Connect provider.
///
/// - The provider is found by discovery (`<issuer>/.well-known/openid-configuration`, whose
///   `issuer` must be the configured one); its JWKS is fetched on first use and cached. A
///   token whose `kid` the cache lacks fetches the keys again, at most once per
///   [`key_refetch_interval`](OidcConfig::key_refetch_interval), so the provider may rotate
///   keys without a restart and forged key ids cannot flood it. Keys older than
///   [`key_refresh_interval`](OidcConfig::key_refresh_interval) are fetched again in the
///   background, so a key the provider removed stops verifying. While the provider cannot be
///   reached, the cached keys keep verifying for [`key_max_age`](OidcConfig::key_max_age).
/// - A token is verified with an allowlist of asymmetric algorithms (never `none`, never
///   HMAC), the key's own type and `alg`, `iss` and `aud` equal to the configured ones, `exp`
///   required and `nbf` when present, both with the configured leeway.
/// - The client comes from the first present claim of
///   [`client_claims`](OidcConfig::client_claims); the role SvcTerminal from the
///   [`role_claims`](OidcConfig::role_claims); the terminal from the service's own
///   [`ClientStore`] (the client registered for a terminal, spec 5.4), read at most every
///   [`with_client_status_ttl`](Self::with_client_status_ttl): a client deactivated here has
///   its tokens refused within that time, and a client with no record here is
///   `UnregisteredClient` (SVC_005).
/// - `issue_token` exchanges the client credentials at the provider's token endpoint
///   (client_secret_basic, else client_secret_post, as its metadata says) and verifies the
///   answer as any bearer token; a refusal is `InvalidCredentials`, a provider that does not
///   answer within the time-out (or answers 5xx or 429) is unavailable with
///   [`ProviderUnavailable`](checkout_domain::ports::ProviderUnavailable).
///
/// Secrets and tokens are never logged, nor put in an error.
pub struct OidcIdentity {
    config: Arc<OidcConfig>,
    remote: Arc<Remote>,
    clients: Arc<dyn ClientStore>,
    client_status: ClientStatus,
    algorithms: Vec<Algorithm>,
}

/// The token endpoint's success answer (RFC 6749 section 5.1).
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    expires_in: Option<u64>,
}

/// The token endpoint's error answer (RFC 6749 section 5.2): only the code is read.
#[derive(Deserialize)]
struct TokenError {
    error: Option<String>,
}

impl OidcIdentity {
    /// An adapter for the provider of `config`, resolving clients to terminals with
    /// `clients`. Nothing is fetched until the first token is issued or verified.
    pub fn new(config: OidcConfig, clients: Arc<dyn ClientStore>) -> anyhow::Result<Self> {
        let algorithms = config.asymmetric_algorithms();
        if algorithms.is_empty() {
            anyhow::bail!("the OpenID Connect adapter needs at least one asymmetric algorithm");
        }
        if config.client_claims.is_empty() {
            anyhow::bail!("the OpenID Connect adapter needs at least one client claim");
        }
        let config = Arc::new(config);
        Ok(OidcIdentity {
            remote: Arc::new(Remote::new(Arc::clone(&config))?),
            config,
            clients,
            client_status: ClientStatus::new(DEFAULT_CLIENT_STATUS_TTL),
            algorithms,
        })
    }

    /// How long what was read of a client (its terminal and active flag) is trusted (zero:
    /// read on every verification); the default is
    /// [`DEFAULT_CLIENT_STATUS_TTL`](crate::DEFAULT_CLIENT_STATUS_TTL).
    pub fn with_client_status_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.client_status = ClientStatus::new(ttl);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// The keys that verify a token with this header: the cached ones, fetched first when
    /// none are held, when they are older than the maximum age, or when none has the
    /// token's key id (each fetch at most once per refetch interval); keys older than the
    /// refresh interval are fetched again in the background meanwhile.
    async fn key_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Arc<remote::ProviderKey>, IdentityError> {
        let snapshot = self.remote.snapshot();
        let now = Instant::now();
        let fresh =
            |s: &KeySnapshot| now.saturating_duration_since(s.fetched_at) < self.config.key_max_age;
        let snapshot = match snapshot {
            Some(s) if fresh(&s) => s,
            stale => {
                // None, or too old: fetch; without the provider, old keys are not trusted.
                let seen = stale.as_ref().map(|s| s.fetched_at);
                match self.remote.refresh(seen).await {
                    Ok(Some(s)) if fresh(&s) => s,
                    Ok(_) => {
                        return Err(IdentityError::Unavailable(unavailable(
                            "no current signing keys (a recent fetch failed)",
                        )))
                    }
                    Err(e) => return Err(IdentityError::Unavailable(e)),
                }
            }
        };
        if now.saturating_duration_since(snapshot.fetched_at) >= self.config.key_refresh_interval {
            self.remote.refresh_in_background(snapshot.fetched_at);
        }
        if let Some(key) = snapshot.find(kid, alg) {
            return Ok(key);
        }
        // An unknown key id: the provider may have rotated its keys. Fetch again (at most
        // once per interval); a failed fetch leaves the token refused.
        let again = match self.remote.refresh(Some(snapshot.fetched_at)).await {
            Ok(Some(s)) => s,
            Ok(None) => snapshot,
            Err(e) => {
                tracing::warn!(
                    error = format!("{e:#}"),
                    "identity provider keys not refetched"
                );
                snapshot
            }
        };
        again
            .find(kid, alg)
            .ok_or(IdentityError::Rejected(AuthFailure::InvalidToken))
            .inspect_err(
                |_| tracing::debug!(refusal = ?Refusal::UnknownKey, "bearer token refused"),
            )
    }

    /// Checks the token's signature and claims, without the client store.
    async fn verify_token(&self, token: &str) -> Result<ProviderClaims, IdentityError> {
        let refuse = |refusal: Refusal| {
            tracing::debug!(?refusal, "bearer token refused");
            IdentityError::Rejected(refusal.failure())
        };
        if token.len() > MAX_TOKEN_LEN {
            return Err(refuse(Refusal::TooLong));
        }
        // The header is read unverified only to pick the key; `jku`, `jwk`, `x5u` and the
        // like are ignored.
        let header = jsonwebtoken::decode_header(token).map_err(|_| refuse(Refusal::Malformed))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(refuse(Refusal::WrongAlgorithm));
        }
        let key = self.key_for(header.kid.as_deref(), header.alg).await?;
        if !key.algorithms.contains(&header.alg) {
            return Err(refuse(Refusal::WrongAlgorithm));
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.config.leeway_secs;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
            token,
            &key.key,
            &validation,
        )
        .map_err(|e| {
            refuse(match e.kind() {
                ErrorKind::ExpiredSignature => Refusal::Expired,
                ErrorKind::InvalidSignature | ErrorKind::InvalidAlgorithm => Refusal::Signature,
                ErrorKind::InvalidToken | ErrorKind::Base64(_) | ErrorKind::Utf8(_) => {
                    Refusal::Malformed
                }
                _ => Refusal::Claims,
            })
        })?;
        ProviderClaims::read(&data.claims, &self.config).ok_or_else(|| refuse(Refusal::Claims))
    }

    /// The claims of a verified token, with the terminal of its client, unless the client has
    /// no record here (`UnregisteredClient`) or is inactive (revoked).
    async fn with_terminal(&self, claims: ProviderClaims) -> Result<Claims, IdentityError> {
        match self
            .client_status
            .lookup(self.clients.as_ref(), &claims.client_id)
            .await?
        {
            Some((terminal, true)) => Ok(Claims {
                client_id: claims.client_id,
                terminal,
                roles: claims.roles,
                expires_at: claims.expires_at,
            }),
            Some((_, false)) => {
                tracing::debug!("bearer token of an inactive client refused");
                Err(IdentityError::Rejected(AuthFailure::InvalidToken))
            }
            None => {
                tracing::debug!(refusal = ?Refusal::NoClient, "bearer token of a client with no terminal here");
                Err(IdentityError::UnregisteredClient)
            }
        }
    }

    /// Posts the client credentials grant to the token endpoint; the access token, or why not.
    async fn exchange(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<TokenAnswer, IdentityError> {
        let metadata = self.remote.metadata().await?;
        let endpoint = metadata
            .token_endpoint
            .context("the provider's discovery document names no token_endpoint")?;
        let mut form: Vec<(&str, &str)> = vec![("grant_type", "client_credentials")];
        form.extend(
            self.config
                .token_params
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        let mut request = self
            .remote
            .http()
            .post(&endpoint)
            .header(reqwest::header::ACCEPT, "application/json");
        match metadata.auth_method {
            AuthMethod::Basic => {
                // RFC 6749 section 2.3.1: id and secret form-encoded before Basic.
                let id: String = byte_serialize(credentials.client_id.as_bytes()).collect();
                let secret: String =
                    byte_serialize(credentials.client_secret.expose().as_bytes()).collect();
                request = request.basic_auth(id, Some(secret));
            }
            AuthMethod::Post => {
                form.push(("client_id", credentials.client_id.as_str()));
                form.push(("client_secret", credentials.client_secret.expose()));
            }
        }
        let response = request.form(&form).send().await.map_err(|e| {
            IdentityError::Unavailable(unavailable(format!(
                "token endpoint: {}",
                transport_error(&e)
            )))
        })?;
        let status = response.status();
        let body = read_limited(response)
            .await
            .map_err(|e| IdentityError::Unavailable(unavailable(format!("token endpoint: {e}"))))?;
        if status.is_success() {
            return serde_json::from_slice::<TokenAnswer>(&body)
                .context("the token endpoint's answer has no access_token")
                .map_err(IdentityError::Unavailable);
        }
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return Err(IdentityError::Unavailable(unavailable(format!(
                "token endpoint: HTTP {}",
                status.as_u16()
            ))));
        }
        let code = serde_json::from_slice::<TokenError>(&body)
            .ok()
            .and_then(|e| e.error)
            .filter(|c| c.len() <= 64 && c.bytes().all(|b| b.is_ascii_graphic()));
        tracing::debug!(status = status.as_u16(), error = ?code, "client credentials refused by the provider");
        Err(IdentityError::Rejected(AuthFailure::InvalidCredentials))
    }
}

impl fmt::Debug for OidcIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcIdentity")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl IdentityProvider for OidcIdentity {
    #[tracing::instrument(skip_all, fields(client_id = ?credentials.client_id))]
    async fn issue_token(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<IssuedToken, IdentityError> {
        let answer = self.exchange(credentials).await?;
        // The answer is checked as any bearer token, so that a token the service would
        // refuse is never handed out as if it worked.
        let claims = match self.verify_token(&answer.access_token).await {
            Ok(claims) => claims,
            Err(IdentityError::Rejected(failure)) => {
                return Err(IdentityError::Unavailable(anyhow::anyhow!(
                    "the provider issued a token this service refuses ({failure}): check the issuer, audience, algorithms and client claims configured"
                )))
            }
            Err(e) => return Err(e),
        };
        if claims.client_id != credentials.client_id {
            return Err(IdentityError::Unavailable(anyhow::anyhow!(
                "the provider issued a token naming another client: check the client claims configured"
            )));
        }
        let claims = match self.with_terminal(claims).await {
            Ok(claims) => claims,
            // A client unknown or inactive here gets no token, as with the built-in provider.
            Err(IdentityError::Rejected(_) | IdentityError::UnregisteredClient) => {
                tracing::debug!("client credentials of a client not active here refused");
                return Err(AuthFailure::InvalidCredentials.into());
            }
            Err(e) => return Err(e),
        };
        let left = (claims.expires_at - OffsetDateTime::now_utc()).whole_seconds();
        let expires_in = answer
            .expires_in
            .unwrap_or_else(|| u64::try_from(left).unwrap_or(0));
        Ok(IssuedToken {
            token: Secret::new(answer.access_token),
            expires_in,
        })
    }

    async fn verify(&self, token: &str) -> Result<Claims, IdentityError> {
        let claims = self.verify_token(token).await?;
        self.with_terminal(claims).await
    }
}
