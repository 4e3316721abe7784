//! What the built-in provider is configured with: issuer, audience, environment, lifetime.

use checkout_domain::Environment;

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
