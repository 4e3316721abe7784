//! The JSON Web Key Set (RFC 7517, OKP keys of RFC 8037) that publishes the public keys.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

use crate::keys::{KeySet, VerifyingKey};

impl VerifyingKey {
    /// The key as a JWK: `{"kty":"OKP","crv":"Ed25519","x":…,"kid":…,"alg":"EdDSA","use":"sig"}`.
    pub fn jwk(&self) -> Value {
        json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": URL_SAFE_NO_PAD.encode(self.public_key()),
            "kid": self.kid(),
            "alg": "EdDSA",
            "use": "sig",
        })
    }
}

impl KeySet {
    /// The JWKS to publish: `{"keys":[…]}` with every verifying key, the active one first.
    pub fn jwks(&self) -> Value {
        json!({ "keys": self.verifying_keys().map(VerifyingKey::jwk).collect::<Vec<_>>() })
    }
}
