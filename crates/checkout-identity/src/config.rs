//! What the built-in provider is configured with: issuer, audience, environment, lifetime.

use std::fmt;

/// The environment a provider serves. Sandbox and production have separate keys and
/// issuers, and every token names its environment in the `env` claim: a token of one is
/// refused by the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Environment {
    /// The sandbox (test cards, sandbox credentials).
    Sandbox,
    /// Production.
    Production,
}

impl Environment {
    /// The `env` claim's value: `sandbox` or `production`.
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Production => "production",
        }
    }
}

impl fmt::Display for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Settings of [`BuiltinIdentity`](crate::BuiltinIdentity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityConfig {
    /// The `iss` claim written and required, e.g. `hosted-checkout-sandbox`.
    pub issuer: String,
    /// The `aud` claim written and required, e.g. `hosted-checkout`.
    pub audience: String,
    /// The environment written into and required in the `env` claim.
    pub environment: Environment,
    /// How long an issued token is valid (`expiresIn`); whole seconds count. It must be
    /// positive: with zero or less every token is born expired.
    pub token_lifetime: time::Duration,
}
