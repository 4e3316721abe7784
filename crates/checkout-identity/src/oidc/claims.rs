//! What a verified provider token says: its client, its roles, its expiry, read from the
//! configured claims.

use checkout_domain::auth::Role;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::config::OidcConfig;

/// The longest client id accepted from a token.
const MAX_CLIENT_ID_LEN: usize = 255;

/// A verified token's client, roles and expiry (its terminal is the service's to resolve).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProviderClaims {
    /// The OAuth client, from the first configured client claim present.
    pub client_id: String,
    /// SvcTerminal when a configured role claim holds the configured name; else none.
    pub roles: Vec<Role>,
    /// The token's `exp`.
    pub expires_at: OffsetDateTime,
}

/// The value at a dotted path (`realm_access.roles`): a whole-name claim first, so that a
/// claim whose name holds a dot (`https://example.com/roles`) is found too.
fn at_path<'a>(claims: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    if let Some(v) = claims.get(path) {
        return Some(v);
    }
    let mut parts = path.split('.');
    let mut value = claims.get(parts.next()?)?;
    for part in parts {
        value = value.as_object()?.get(part)?;
    }
    Some(value)
}

/// The names a role claim holds: an array's strings, or a string's space-separated words.
fn names(value: &Value) -> Vec<&str> {
    match value {
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::String(s) => s.split_whitespace().collect(),
        _ => Vec::new(),
    }
}

impl ProviderClaims {
    /// The claims, or `None` when no configured claim names a usable client or `exp` is not
    /// a time.
    pub fn read(claims: &Map<String, Value>, config: &OidcConfig) -> Option<Self> {
        let client_id = config
            .client_claims
            .iter()
            .find_map(|path| at_path(claims, path).and_then(Value::as_str))
            .filter(|id| {
                !id.trim().is_empty()
                    && id.len() <= MAX_CLIENT_ID_LEN
                    && !id.chars().any(char::is_control)
            })?
            .to_owned();
        let terminal = config
            .role_claims
            .iter()
            .filter_map(|path| at_path(claims, path))
            .any(|value| names(value).contains(&config.terminal_role.as_str()));
        let exp = claims.get("exp").and_then(|v| {
            v.as_i64()
                // A fractional NumericDate is allowed (RFC 7519 section 2).
                .or_else(|| v.as_f64().map(|f| f as i64))
        })?;
        let expires_at = OffsetDateTime::from_unix_timestamp(exp).ok()?;
        Some(ProviderClaims {
            client_id,
            roles: if terminal {
                vec![Role::SvcTerminal]
            } else {
                Vec::new()
            },
            expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn read(value: Value) -> Option<ProviderClaims> {
        let config = OidcConfig::new("https://idp.example", "hosted-checkout");
        ProviderClaims::read(value.as_object().unwrap(), &config)
    }

    #[test]
    fn roles_come_from_an_array_a_nested_array_or_a_scope_string() {
        for claims in [
            json!({"client_id": "c", "exp": 1, "roles": ["x", "SvcTerminal"]}),
            json!({"client_id": "c", "exp": 1, "realm_access": {"roles": ["SvcTerminal"]}}),
            json!({"client_id": "c", "exp": 1, "scope": "openid SvcTerminal"}),
        ] {
            assert_eq!(read(claims).unwrap().roles, vec![Role::SvcTerminal]);
        }
        for claims in [
            json!({"client_id": "c", "exp": 1, "roles": ["SvcTerminalX"]}),
            json!({"client_id": "c", "exp": 1, "scope": "SvcTerminalish"}),
            json!({"client_id": "c", "exp": 1, "roles": "Svc Terminal"}),
            json!({"client_id": "c", "exp": 1, "other": ["SvcTerminal"]}),
        ] {
            assert!(read(claims).unwrap().roles.is_empty());
        }
    }

    #[test]
    fn the_client_is_the_first_claim_present_and_must_be_usable() {
        let claims = read(json!({"azp": "b", "client_id": "a", "exp": 1})).unwrap();
        assert_eq!(claims.client_id, "a");
        assert_eq!(read(json!({"azp": "b", "exp": 1})).unwrap().client_id, "b");
        assert!(read(json!({"sub": "a", "exp": 1})).is_none());
        assert!(read(json!({"client_id": " ", "exp": 1})).is_none());
        assert!(read(json!({"client_id": "a\u{0}", "exp": 1})).is_none());
        assert!(read(json!({"client_id": 7, "exp": 1})).is_none());
    }
}
