//! POST /api/public/security/auth bodies (spec 4.1, 2.1).

use checkout_domain::auth::{ClientCredentials, IssuedToken, Secret};
use checkout_domain::ValidationErrors;
use garde::Validate;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::json_body::pascal_case_path;

/// OAuth 2.0 client credentials of a terminal.
#[derive(Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    /// Terminal client identifier.
    #[garde(required, length(chars, min = 1, max = 128))]
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 128,
        example = "sandbox-client"
    )]
    pub client_id: Option<String>,
    /// Client secret.
    #[garde(required, length(chars, min = 1, max = 256))]
    #[schema(required = true, nullable = false, min_length = 1, max_length = 256, format = Password)]
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for TokenRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRequest")
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .finish()
    }
}

impl TokenRequest {
    /// Checks presence and length, keyed `ClientId` / `ClientSecret`.
    pub fn try_into_domain(self) -> Result<ClientCredentials, ValidationErrors> {
        if let Err(report) = self.validate() {
            let mut errors = ValidationErrors::new();
            for (path, error) in report.iter() {
                let field = pascal_case_path(&path.to_string());
                let message = if error.message() == "not set" {
                    format!("The {field} field is required.")
                } else {
                    format!("{field}: {}", error.message())
                };
                errors.add(field, message);
            }
            return Err(errors);
        }
        Ok(ClientCredentials {
            client_id: self.client_id.unwrap_or_default(),
            client_secret: Secret::new(self.client_secret.unwrap_or_default()),
        })
    }
}

/// A JWT access token.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenResponse {
    /// JWT access token.
    pub token: String,
    /// Token lifetime in seconds.
    pub expires_in: u64,
}

impl From<IssuedToken> for TokenResponse {
    fn from(t: IssuedToken) -> Self {
        TokenResponse {
            token: t.token.expose().to_owned(),
            expires_in: t.expires_in,
        }
    }
}
