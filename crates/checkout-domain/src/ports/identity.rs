//! Token issuance and verification.

use async_trait::async_trait;

use crate::auth::{Claims, ClientCredentials, IssuedToken, OAuthClient};
use crate::error::{AuthFailure, CheckoutError, SvcCode};

/// Why the identity provider did not issue or verify a token.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The credentials or the token were refused.
    #[error(transparent)]
    Rejected(#[from] AuthFailure),
    /// A valid token of a client that no terminal of this service is bound to (an external
    /// provider's client never registered here): SVC_005, as a terminal not provisioned.
    #[error("the token's client is not registered with a terminal")]
    UnregisteredClient,
    /// The provider or its store failed. When the cause is a provider that cannot be reached
    /// right now, the error's chain holds a [`ProviderUnavailable`] (answered 503, not 500).
    #[error(transparent)]
    Unavailable(#[from] anyhow::Error),
}

/// Marks an [`IdentityError::Unavailable`] whose cause is an external identity provider that
/// did not answer in time, could not be reached, or answered with a server error: the request
/// may be retried shortly (the HTTP layer answers 503 with `Retry-After`). Its text names
/// what failed and never holds a secret or a token.
#[derive(Debug, thiserror::Error)]
#[error("the identity provider is unavailable: {0}")]
pub struct ProviderUnavailable(pub String);

impl From<IdentityError> for CheckoutError {
    fn from(e: IdentityError) -> Self {
        match e {
            IdentityError::Rejected(failure) => CheckoutError::Unauthenticated(failure),
            IdentityError::UnregisteredClient => CheckoutError::svc(SvcCode::Svc005),
            IdentityError::Unavailable(e) => CheckoutError::from(e),
        }
    }
}

/// Issues and verifies the service's bearer tokens (the built-in provider, or an external
/// OpenID Connect provider).
#[async_trait]
pub trait IdentityProvider: Send + Sync {
    /// Issues a token for OAuth 2.0 client credentials.
    ///
    /// MUST return `Err(AuthFailure::InvalidCredentials)` for an unknown or inactive client or
    /// a wrong secret, without telling which; MUST compare secrets in constant time; MUST
    /// NOT log the secret or the token.
    async fn issue_token(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<IssuedToken, IdentityError>;

    /// Verifies a bearer token into claims.
    ///
    /// MUST pin the signing algorithm, check the signature, `exp`, `iss` and `aud`, and refuse
    /// a token of another environment, with `AuthFailure::InvalidToken` (or `ExpiredToken`).
    /// MUST refuse, with `AuthFailure::InvalidToken`, a token whose client has been
    /// deactivated since it was issued, on every instance within a short bounded delay (a
    /// second or so), cached verifications included.
    /// MUST answer `IdentityError::UnregisteredClient` for an otherwise valid token whose
    /// client has no terminal here (no client record in the service), and MUST NOT let such a
    /// token through with a guessed terminal. A provider whose keys are fetched over the
    /// network MUST keep verifying with keys it already holds while the provider is down (for
    /// a bounded time) and MUST NOT fetch keys more than once per bounded interval however
    /// many tokens with unknown key ids arrive.
    /// Checking the role is the caller's (the use case's) job.
    async fn verify(&self, token: &str) -> Result<Claims, IdentityError>;
}

/// The store of OAuth clients that the built-in identity provider checks credentials against.
#[async_trait]
pub trait ClientStore: Send + Sync {
    /// The client with this id, active or not; `None` when there is none.
    async fn get_client(&self, client_id: &str) -> anyhow::Result<Option<OAuthClient>>;

    /// The hash of the client's secret before its last rotation in place, while that secret
    /// still works (the rotation's overlap); `None` when there is none.
    ///
    /// MUST answer `None` once the overlap has ended, so that the previous secret stops
    /// issuing tokens then. The default is a store without rotation: always `None`.
    async fn previous_secret_hash(&self, client_id: &str) -> anyhow::Result<Option<String>> {
        let _ = client_id;
        Ok(None)
    }
}
