//! An [`IdentityProvider`] decorator that counts every token issued or verified by outcome,
//! and times token issuance (an Argon2id check, or a call to an external provider).

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use checkout_domain::auth::{Claims, ClientCredentials, IssuedToken};
use checkout_domain::ports::{IdentityError, IdentityProvider, ProviderUnavailable};

/// Counter: identity provider calls, by `call` and `outcome`.
pub const CALLS_TOTAL: &str = "checkout_identity_calls_total";
/// Histogram: seconds a token issuance took, by `outcome`.
pub const ISSUE_DURATION: &str = "checkout_identity_issue_duration_seconds";

/// Wraps an identity provider; every call records [`CALLS_TOTAL`] with `call` `issue_token` or
/// `verify` and `outcome` one of `ok`, `refused` (401), `unregistered` (SVC_005),
/// `unavailable` (an external provider that cannot be reached: 503) or `failed` (any other
/// error); `issue_token` also records [`ISSUE_DURATION`]. Nothing of the request (client id,
/// secret, token) becomes a label.
pub struct MeteredIdentity {
    inner: Arc<dyn IdentityProvider>,
}

impl MeteredIdentity {
    /// Meters `inner`.
    pub fn new(inner: Arc<dyn IdentityProvider>) -> MeteredIdentity {
        MeteredIdentity { inner }
    }
}

fn outcome<T>(result: &Result<T, IdentityError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(IdentityError::Rejected(_)) => "refused",
        Err(IdentityError::UnregisteredClient) => "unregistered",
        Err(IdentityError::Unavailable(e))
            if e.chain().any(|cause| cause.is::<ProviderUnavailable>()) =>
        {
            "unavailable"
        }
        Err(IdentityError::Unavailable(_)) => "failed",
    }
}

#[async_trait]
impl IdentityProvider for MeteredIdentity {
    async fn issue_token(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<IssuedToken, IdentityError> {
        let started = Instant::now();
        let result = self.inner.issue_token(credentials).await;
        let labels = [("call", "issue_token"), ("outcome", outcome(&result))];
        metrics::counter!(CALLS_TOTAL, &labels).increment(1);
        metrics::histogram!(ISSUE_DURATION, &labels[1..]).record(started.elapsed().as_secs_f64());
        result
    }

    async fn verify(&self, token: &str) -> Result<Claims, IdentityError> {
        let result = self.inner.verify(token).await;
        metrics::counter!(CALLS_TOTAL, "call" => "verify", "outcome" => outcome(&result))
            .increment(1);
        result
    }
}
