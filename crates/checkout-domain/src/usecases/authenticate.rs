//! Use cases: issue a token for client credentials; authenticate a bearer token.

use super::Checkout;
use crate::auth::{Claims, ClientCredentials, IssuedToken, Role};
use crate::error::{AuthFailure, CheckoutError};

impl Checkout {
    /// POST /api/public/security/auth: a JWT for the client credentials, or 401.
    pub async fn issue_token(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<IssuedToken, CheckoutError> {
        // No client id holds control characters (and Postgres text cannot hold NUL): such an
        // id is simply not a client, and never reaches the store.
        let id = &credentials.client_id;
        if id.trim().is_empty()
            || id.chars().any(char::is_control)
            || credentials.client_secret.expose().is_empty()
        {
            return Err(AuthFailure::InvalidCredentials.into());
        }
        Ok(self.ports.identity.issue_token(credentials).await?)
    }

    /// Checks the bearer token of a protected route (spec 5.3, 5.7): present, valid, and
    /// carrying the role SvcTerminal. Every failure is a 401.
    pub async fn authenticate(&self, bearer: Option<&str>) -> Result<Claims, CheckoutError> {
        let token = bearer
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or(AuthFailure::MissingToken)?;
        let claims = self.ports.identity.verify(token).await?;
        if !claims.has_role(Role::SvcTerminal) {
            return Err(AuthFailure::MissingRole.into());
        }
        Ok(claims)
    }
}
