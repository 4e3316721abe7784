//! Token issuance and verification.

use async_trait::async_trait;

use crate::auth::{Claims, ClientCredentials, IssuedToken, OAuthClient};
use crate::error::{AuthFailure, CheckoutError};

/// Why the identity provider did not issue or verify a token.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The credentials or the token were refused.
    #[error(transparent)]
    Rejected(#[from] AuthFailure),
    /// The provider or its store failed.
    #[error(transparent)]
    Unavailable(#[from] anyhow::Error),
}

impl From<IdentityError> for CheckoutError {
    fn from(e: IdentityError) -> Self {
        match e {
            IdentityError::Rejected(failure) => CheckoutError::Unauthenticated(failure),
            IdentityError::Unavailable(e) => CheckoutError::Unknown(e),
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
    /// Checking the role is the caller's (the use case's) job.
    async fn verify(&self, token: &str) -> Result<Claims, IdentityError>;
}

/// The store of OAuth clients that the built-in identity provider checks credentials against.
#[async_trait]
pub trait ClientStore: Send + Sync {
    /// The client with this id, active or not; `None` when there is none.
    async fn get_client(&self, client_id: &str) -> anyhow::Result<Option<OAuthClient>>;
}
