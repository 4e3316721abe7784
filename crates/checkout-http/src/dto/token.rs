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

/// The OAuth 2.0 client-credentials grant as a form body (RFC 6749 section 4.4.2). The
/// credentials come in the body or in an HTTP Basic `Authorization` header (section 2.3.1),
/// never both; parameters the service does not know are ignored (section 3.2). The OpenAPI
/// document describes it in the token operation's text and as the `oauth2` security scheme,
/// not as a second request media type: openapi-python-client (0.29) generates a client that
/// does not import for a required body with two media types (its issue 1451).
#[derive(Deserialize)]
pub struct TokenForm {
    /// Always `client_credentials`.
    pub grant_type: Option<String>,
    /// Terminal client identifier (absent when the Basic header carries it).
    pub client_id: Option<String>,
    /// Client secret (absent when the Basic header carries it).
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for TokenForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenForm")
            .field("grant_type", &self.grant_type)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .finish()
    }
}

/// The only grant type a [`TokenForm`] may name.
pub const CLIENT_CREDENTIALS: &str = "client_credentials";

impl TokenForm {
    /// The credentials of the form, from its body or from `basic` (an HTTP Basic
    /// `Authorization` header's, decoded), checked like [`TokenRequest`]'s; a 400 names
    /// `GrantType` when it is not `client_credentials`, `Authorization` when both carry
    /// credentials.
    pub fn try_into_domain(
        self,
        basic: Option<(String, String)>,
    ) -> Result<ClientCredentials, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        match self.grant_type.as_deref() {
            Some(CLIENT_CREDENTIALS) => {}
            None | Some("") => errors.add("GrantType", "The GrantType field is required."),
            Some(_) => errors.add(
                "GrantType",
                "GrantType must be client_credentials (the only grant this service issues).",
            ),
        }
        let in_body = self.client_id.is_some() || self.client_secret.is_some();
        let request = match basic {
            Some(_) if in_body => {
                errors.add(
                    "Authorization",
                    "Send the client credentials either in the Basic header or in the body, not both.",
                );
                return Err(errors);
            }
            Some((client_id, client_secret)) => TokenRequest {
                client_id: Some(client_id),
                client_secret: Some(client_secret),
            },
            None => TokenRequest {
                client_id: self.client_id,
                client_secret: self.client_secret,
            },
        };
        match request.try_into_domain() {
            Ok(credentials) if errors.is_empty() => Ok(credentials),
            Ok(_) => Err(errors),
            Err(more) => {
                for (field, messages) in more.fields() {
                    for message in messages {
                        errors.add(field.clone(), message.clone());
                    }
                }
                Err(errors)
            }
        }
    }
}

/// The `token_type` of every token (RFC 6750).
pub const BEARER: &str = "Bearer";

/// A JWT access token: the spec's `token` and `expiresIn`, and the same as OAuth 2.0's
/// `access_token`, `token_type` and `expires_in` (RFC 6749 section 5.1), so that OAuth
/// libraries read it unchanged.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenResponse {
    /// JWT access token.
    pub token: String,
    /// Token lifetime in seconds.
    pub expires_in: u64,
    /// The same token, under its OAuth 2.0 name.
    #[serde(rename = "access_token")]
    pub access_token: String,
    /// Always `Bearer`.
    #[serde(rename = "token_type")]
    #[schema(example = "Bearer")]
    pub token_type: &'static str,
    /// The same lifetime, under its OAuth 2.0 name.
    #[serde(rename = "expires_in")]
    pub oauth_expires_in: u64,
}

impl From<IssuedToken> for TokenResponse {
    fn from(t: IssuedToken) -> Self {
        let token = t.token.expose().to_owned();
        TokenResponse {
            access_token: token.clone(),
            token,
            expires_in: t.expires_in,
            token_type: BEARER,
            oauth_expires_in: t.expires_in,
        }
    }
}
