//! A small bounded cache of bearer tokens that passed verification, so that a merchant that
//! reuses its token (as it should, for the token's lifetime) does not pay an Ed25519
//! signature check on every request.
//!
//! - Keyed by the SHA-256 of the whole token string: the token itself is not kept, and a
//!   changed token (another signature, payload or header) is another key, which goes through
//!   the full verification.
//! - Only accepted tokens are stored; refusals are never cached.
//! - An entry is served only while `now < exp`, never longer, and never with the 30 s of
//!   leeway that the full verification allows: after `exp` the token goes through the full
//!   verification again (and is refused as expired once the leeway has passed too).
//! - Everything else the full verification checks (issuer, audience, environment, the key
//!   set) is fixed for the provider's lifetime, so a served entry is exactly what the full
//!   verification would answer.
//! - Revocation: the provider checks that the token's client is still active after a cache
//!   hit as after a full verification (`revocation.rs`), so a deactivated client's tokens
//!   are refused whether cached or not. Retiring a signing key takes a restart, which
//!   empties the cache.
//! - Bounded: at most `capacity` entries; when full, expired entries are dropped first, then
//!   an arbitrary one. Tokens are signed by us, so only genuinely issued tokens can fill it.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use checkout_domain::auth::Claims;
use ring::digest::{digest, SHA256};
use time::OffsetDateTime;

/// How many verified tokens a provider keeps by default (each entry is a few hundred bytes).
pub const DEFAULT_TOKEN_CACHE_CAPACITY: usize = 1024;

/// The SHA-256 of a token.
pub(crate) type TokenKey = [u8; 32];

/// The cache key of `token`.
pub(crate) fn token_key(token: &str) -> TokenKey {
    let mut key = [0u8; 32];
    key.copy_from_slice(digest(&SHA256, token.as_bytes()).as_ref());
    key
}

/// Verified tokens' claims by token hash.
pub(crate) struct VerifiedTokens {
    capacity: usize,
    entries: Mutex<HashMap<TokenKey, Claims>>,
}

impl VerifiedTokens {
    /// An empty cache of at most `capacity` entries (0: caches nothing).
    pub(crate) fn new(capacity: usize) -> Self {
        VerifiedTokens {
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TokenKey, Claims>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The claims of the token whose key is `key`, if it was verified and `now` is before its
    /// `exp`. An expired entry is dropped.
    pub(crate) fn get(&self, key: &TokenKey, now: OffsetDateTime) -> Option<Claims> {
        if self.capacity == 0 {
            return None;
        }
        let mut entries = self.lock();
        match entries.get(key) {
            Some(claims) if now < claims.expires_at => Some(claims.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Remembers that the token whose key is `key` verified into `claims`, unless its `exp`
    /// has passed at `now`.
    pub(crate) fn insert(&self, key: TokenKey, claims: &Claims, now: OffsetDateTime) {
        if self.capacity == 0 || now >= claims.expires_at {
            return;
        }
        let mut entries = self.lock();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, c| now < c.expires_at);
            if entries.len() >= self.capacity {
                if let Some(victim) = entries.keys().next().copied() {
                    entries.remove(&victim);
                }
            }
        }
        entries.insert(key, claims.clone());
    }

    /// How many entries are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkout_domain::auth::Role;
    use checkout_domain::values::TerminalNumber;
    use time::macros::datetime;
    use time::Duration;

    const NOW: OffsetDateTime = datetime!(2026-11-23 12:00 UTC);

    fn claims(expires_at: OffsetDateTime) -> Claims {
        Claims {
            client_id: "client".to_owned(),
            terminal: TerminalNumber::parse("T-1").unwrap(),
            roles: vec![Role::SvcTerminal],
            expires_at,
        }
    }

    #[test]
    fn keys_differ_for_different_tokens() {
        assert_eq!(token_key("a.b.c"), token_key("a.b.c"));
        assert_ne!(token_key("a.b.c"), token_key("a.b.d"));
    }

    #[test]
    fn a_verified_token_is_served_until_its_exp_and_never_after() {
        let cache = VerifiedTokens::new(8);
        let key = token_key("token");
        assert_eq!(cache.get(&key, NOW), None);
        let c = claims(NOW + Duration::minutes(5));
        cache.insert(key, &c, NOW);
        assert_eq!(cache.get(&key, NOW), Some(c.clone()));
        assert_eq!(
            cache.get(&key, NOW + Duration::minutes(5) - Duration::microseconds(1)),
            Some(c)
        );
        assert_eq!(cache.get(&key, NOW + Duration::minutes(5)), None);
        assert_eq!(cache.len(), 0, "the expired entry is dropped");
        assert_eq!(cache.get(&token_key("other"), NOW), None);
    }

    #[test]
    fn an_expired_token_is_not_stored() {
        let cache = VerifiedTokens::new(8);
        // Accepted within the verification's leeway, but past its exp.
        cache.insert(token_key("late"), &claims(NOW - Duration::seconds(10)), NOW);
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn the_cache_never_holds_more_than_its_capacity() {
        let cache = VerifiedTokens::new(4);
        for i in 0..4 {
            cache.insert(
                token_key(&format!("short-{i}")),
                &claims(NOW + Duration::seconds(1)),
                NOW,
            );
        }
        assert_eq!(cache.len(), 4);
        // Once the first four have expired, they make room first.
        let later = NOW + Duration::seconds(2);
        for i in 0..10 {
            cache.insert(
                token_key(&format!("long-{i}")),
                &claims(later + Duration::hours(1)),
                later,
            );
            assert!(cache.len() <= 4);
        }
        assert_eq!(cache.len(), 4);
        assert!(cache.get(&token_key("long-9"), later).is_some());
    }

    #[test]
    fn capacity_zero_caches_nothing() {
        let cache = VerifiedTokens::new(0);
        let key = token_key("token");
        cache.insert(key, &claims(NOW + Duration::hours(1)), NOW);
        assert_eq!(cache.get(&key, NOW), None);
        assert_eq!(cache.len(), 0);
    }
}
