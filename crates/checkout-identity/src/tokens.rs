//! The access token: its claims, signing, and the checks that verification makes.

use anyhow::Context;
use checkout_domain::auth::{Claims, Role};
use checkout_domain::error::AuthFailure;
use checkout_domain::values::TerminalNumber;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::config::IdentityConfig;
use crate::keys::{KeySet, SigningKey};

/// Clock skew tolerated on `exp` and `nbf`, in seconds, between the nodes that issue and
/// verify tokens (they share keys, so clocks are NTP-synchronised and close).
pub const CLOCK_LEEWAY_SECS: u64 = 30;

/// Longer bearer strings are refused before any parsing. Our tokens are about 500 bytes.
pub(crate) const MAX_TOKEN_LEN: usize = 8 * 1024;

/// The claims of an access token. Every one is required when verifying; others are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AccessClaims {
    pub iss: String,
    pub aud: String,
    /// The client_id.
    pub sub: String,
    /// The terminal number bound to the client.
    pub terminal: String,
    /// Role names, e.g. `["SvcTerminal"]`.
    pub roles: Vec<String>,
    /// `sandbox` or `production`.
    pub env: String,
    pub iat: i64,
    pub nbf: i64,
    pub exp: i64,
    /// A random token id (128 bits, base64url).
    pub jti: String,
}

/// Signs `claims` with `key`: header `{"typ":"JWT","alg":"EdDSA","kid":…}`.
pub(crate) fn sign(key: &SigningKey, claims: &AccessClaims) -> anyhow::Result<String> {
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(key.kid().to_owned());
    jsonwebtoken::encode(&header, claims, key.encoding_key()).context("signing a token")
}

/// The checks every token passes: EdDSA only, signature, `exp` and `nbf` (with
/// [`CLOCK_LEEWAY_SECS`]), `iss` and `aud` equal to the configured ones, and `exp`, `nbf`,
/// `iss`, `aud`, `sub` present.
pub(crate) fn validation(config: &IdentityConfig) -> Validation {
    let mut v = Validation::new(Algorithm::EdDSA);
    v.leeway = CLOCK_LEEWAY_SECS;
    v.validate_exp = true;
    v.validate_nbf = true;
    v.validate_aud = true;
    v.set_issuer(&[&config.issuer]);
    v.set_audience(&[&config.audience]);
    v.set_required_spec_claims(&["exp", "nbf", "iss", "aud", "sub"]);
    v
}

/// Why a token was refused, for the debug log (never the token itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    TooLong,
    Malformed,
    WrongAlgorithm,
    UnknownKid,
    Signature,
    Expired,
    Claims,
    OtherEnvironment,
}

impl Refusal {
    pub(crate) fn failure(self) -> AuthFailure {
        match self {
            Refusal::Expired => AuthFailure::ExpiredToken,
            _ => AuthFailure::InvalidToken,
        }
    }
}

/// Verifies `token` against `keys` and `validation`, and that its `env` claim is `env`.
pub(crate) fn verify(
    keys: &KeySet,
    validation: &Validation,
    env: &str,
    token: &str,
) -> Result<Claims, Refusal> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(Refusal::TooLong);
    }
    // The header is read unverified only to pick the key; nothing else in it is trusted
    // (`jku`, `jwk`, `x5u` and the like are ignored).
    let header = jsonwebtoken::decode_header(token).map_err(|_| Refusal::Malformed)?;
    if header.alg != Algorithm::EdDSA {
        return Err(Refusal::WrongAlgorithm);
    }
    let key = header
        .kid
        .as_deref()
        .and_then(|kid| keys.find(kid))
        .ok_or(Refusal::UnknownKid)?;
    let data = jsonwebtoken::decode::<AccessClaims>(token, key.decoding_key(), validation)
        .map_err(|e| match e.kind() {
            ErrorKind::ExpiredSignature => Refusal::Expired,
            ErrorKind::InvalidSignature | ErrorKind::InvalidAlgorithm => Refusal::Signature,
            ErrorKind::InvalidToken | ErrorKind::Base64(_) | ErrorKind::Utf8(_) => {
                Refusal::Malformed
            }
            _ => Refusal::Claims,
        })?;
    let claims = data.claims;
    if claims.env != env {
        return Err(Refusal::OtherEnvironment);
    }
    if claims.sub.is_empty() {
        return Err(Refusal::Claims);
    }
    let terminal = TerminalNumber::parse(&claims.terminal).map_err(|_| Refusal::Claims)?;
    let expires_at =
        OffsetDateTime::from_unix_timestamp(claims.exp).map_err(|_| Refusal::Claims)?;
    Ok(Claims {
        client_id: claims.sub,
        terminal,
        roles: claims.roles.iter().filter_map(|r| Role::parse(r)).collect(),
        expires_at,
    })
}
