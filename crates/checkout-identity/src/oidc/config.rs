//! What the OpenID Connect adapter is configured with.

use std::time::Duration;

use jsonwebtoken::Algorithm;

/// The asymmetric algorithms accepted by default: RSA (PKCS#1 v1.5 and PSS), ECDSA on P-256
/// and P-384, and Ed25519. HMAC and `none` can never be configured.
pub const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Settings of [`OidcIdentity`](crate::OidcIdentity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcConfig {
    /// The provider's issuer identifier, exactly as its tokens' `iss` and its discovery
    /// document's `issuer` spell it (e.g. `https://sso.example.com/realms/payments`). The
    /// discovery document is read from `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    /// The `aud` every accepted token must name (a token with several audiences is accepted
    /// when one of them is this one).
    pub audience: String,
    /// Claims whose values grant roles, in dotted paths (`roles`, `realm_access.roles`,
    /// `resource_access.hosted-checkout.roles`, `scope`): an array of strings, or a string of
    /// space-separated names (as `scope` is). Every listed claim is read.
    pub role_claims: Vec<String>,
    /// The name that grants `SvcTerminal` in those claims (e.g. `SvcTerminal`, or a scope
    /// such as `checkout:terminal`).
    pub terminal_role: String,
    /// Claims naming the OAuth client, the first present one wins (e.g. `client_id`, `azp`).
    pub client_claims: Vec<String>,
    /// The signature algorithms accepted; only asymmetric ones are kept (see
    /// [`DEFAULT_ALGORITHMS`]).
    pub algorithms: Vec<Algorithm>,
    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    pub leeway_secs: u64,
    /// The time-out of every call to the provider (discovery, keys, token endpoint).
    pub http_timeout: Duration,
    /// A token with a key id the cached keys do not have fetches the keys again at most once
    /// per this interval (a flood of forged key ids makes one request per interval).
    pub key_refetch_interval: Duration,
    /// Keys older than this are fetched again in the background (the verification that
    /// notices goes on with the cached ones), so that a key the provider removed stops
    /// verifying within about this long even when no token names an unknown key id.
    pub key_refresh_interval: Duration,
    /// How long keys fetched once are trusted while the provider cannot be reached to fetch
    /// them again: after this, verification answers "unavailable" until it can.
    pub key_max_age: Duration,
    /// Extra form parameters of the token request, e.g. `[("resource", "urn:…")]` or
    /// `[("audience", "…")]`, as the provider needs to issue tokens for `audience`.
    pub token_params: Vec<(String, String)>,
    /// PEM certificates of certificate authorities trusted for the provider's TLS besides the
    /// public web roots (a provider behind a private CA); empty: the public roots only.
    pub ca_certificates_pem: Vec<u8>,
}

impl OidcConfig {
    /// A configuration with the defaults: roles from `roles`, `realm_access.roles` and
    /// `scope`, named `SvcTerminal`; the client from `client_id` then `azp`; every algorithm
    /// of [`DEFAULT_ALGORITHMS`]; 30 s leeway, 5 s time-out, keys refetched at most every
    /// 30 s, refreshed after 5 minutes and trusted for an hour without the provider.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        OidcConfig {
            issuer: issuer.into(),
            audience: audience.into(),
            role_claims: vec!["roles".into(), "realm_access.roles".into(), "scope".into()],
            terminal_role: "SvcTerminal".into(),
            client_claims: vec!["client_id".into(), "azp".into()],
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway_secs: 30,
            http_timeout: Duration::from_secs(5),
            key_refetch_interval: Duration::from_secs(30),
            key_refresh_interval: Duration::from_secs(300),
            key_max_age: Duration::from_secs(3600),
            token_params: Vec::new(),
            ca_certificates_pem: Vec::new(),
        }
    }

    /// The configured algorithms that are asymmetric (HMAC ones are dropped).
    pub(crate) fn asymmetric_algorithms(&self) -> Vec<Algorithm> {
        self.algorithms
            .iter()
            .copied()
            .filter(|alg| !matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect()
    }
}
