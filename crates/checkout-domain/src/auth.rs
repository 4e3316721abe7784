//! Who is calling: client credentials, tokens, claims, roles.

use std::fmt;

use time::OffsetDateTime;

use crate::values::TerminalNumber;

/// A secret (client secret, bearer token) whose `Debug` prints a mask. Read it only on the
/// line that uses it, through [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The raw value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// A role carried by a token. The spec's protected routes need [`Role::SvcTerminal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A merchant terminal's backend.
    SvcTerminal,
}

impl Role {
    /// The role's name in tokens: `SvcTerminal`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::SvcTerminal => "SvcTerminal",
        }
    }

    /// Parses a role name; unknown names are `None`.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "SvcTerminal" => Some(Role::SvcTerminal),
            _ => None,
        }
    }
}

/// OAuth 2.0 client credentials as presented to the auth endpoint.
#[derive(Debug, Clone)]
pub struct ClientCredentials {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`.
    pub client_secret: Secret,
}

/// A token issued for client credentials.
#[derive(Debug, Clone)]
pub struct IssuedToken {
    /// The JWT.
    pub token: Secret,
    /// Its lifetime in seconds (`expiresIn`).
    pub expires_in: u64,
}

/// What a verified bearer token says about its caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// The OAuth client the token was issued to.
    pub client_id: String,
    /// The terminal bound to that client (spec 5.4).
    pub terminal: TerminalNumber,
    /// The roles granted.
    pub roles: Vec<Role>,
    /// When the token expires.
    pub expires_at: OffsetDateTime,
}

impl Claims {
    /// True when the token grants `role`.
    pub fn has_role(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }
}

/// A registered OAuth client of a terminal, as the client store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    /// `client_id`.
    pub client_id: String,
    /// The secret's Argon2id hash in PHC string form; never the secret itself.
    pub secret_hash: String,
    /// The terminal the client acts for.
    pub terminal: TerminalNumber,
    /// The roles its tokens carry.
    pub roles: Vec<Role>,
    /// Inactive clients get no tokens.
    pub active: bool,
}
