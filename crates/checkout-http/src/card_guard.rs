//! The card-testing guard's keys and its proof of work, under one secret of the service.
//!
//! - Card fingerprints and address keys are HMAC-SHA256 under keys derived from the secret
//!   (one purpose each), as 64 hex digits: the same on every instance sharing the secret.
//! - The proof of work follows the ALTCHA scheme, self-hosted: the server issues
//!   `{salt, challenge, signature, maxnumber}` where `salt` carries the expiry and the session
//!   (`<random>?expires=<unix>&session=<id>`), `challenge = SHA-256(salt + number)` for a
//!   secret random `number <= maxnumber`, and `signature = HMAC-SHA256(challenge)`. The page's
//!   script tries numbers with SubtleCrypto until the hash matches and posts the number back.
//!   The server checks the signature (its own challenge), the hash (the work was done), the
//!   session (bound to the post's) and the expiry; the store spends it once.

use std::net::IpAddr;

use checkout_domain::card::CardNumber;
use checkout_domain::guard::{AddressKey, CardFingerprint, ProofCheck};
use checkout_domain::ports::GuardKeys;
use checkout_domain::values::SessionId;
use ring::{digest, hmac};
use time::OffsetDateTime;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn derive(secret: &[u8; 32], purpose: &str) -> hmac::Key {
    let root = hmac::Key::new(hmac::HMAC_SHA256, secret);
    hmac::Key::new(
        hmac::HMAC_SHA256,
        hmac::sign(&root, purpose.as_bytes()).as_ref(),
    )
}

/// HMAC-SHA256 fingerprints of cards and keys of addresses.
pub struct HmacGuardKeys {
    card: hmac::Key,
    address: hmac::Key,
}

impl HmacGuardKeys {
    /// Keys derived from the guard's 32-byte secret.
    pub fn new(secret: &[u8; 32]) -> Self {
        HmacGuardKeys {
            card: derive(secret, "card-guard card fingerprint v1"),
            address: derive(secret, "card-guard address key v1"),
        }
    }
}

impl std::fmt::Debug for HmacGuardKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HmacGuardKeys(..)")
    }
}

impl GuardKeys for HmacGuardKeys {
    fn card(&self, number: &CardNumber) -> CardFingerprint {
        let tag = hmac::sign(&self.card, number.expose_digits().as_bytes());
        CardFingerprint::parse(&hex(tag.as_ref())).unwrap_or_else(|_| unreachable!())
    }

    fn address(&self, address: IpAddr) -> AddressKey {
        let tag = hmac::sign(&self.address, address.to_string().as_bytes());
        AddressKey::parse(&hex(tag.as_ref())).unwrap_or_else(|_| unreachable!())
    }
}

/// A challenge as the page carries it (hidden fields and data attributes).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Challenge {
    /// `<random hex>?expires=<unix seconds>&session=<session id>`.
    pub salt: String,
    /// Hex SHA-256 of `salt` followed by the secret number in decimal.
    pub challenge: String,
    /// Hex HMAC-SHA256 of `challenge` under the service's key.
    pub signature: String,
    /// The largest number to try.
    pub max_number: u64,
}

/// A solution posted back with the card form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Solution {
    /// The challenge's salt.
    pub salt: String,
    /// The challenge.
    pub challenge: String,
    /// The challenge's signature.
    pub signature: String,
    /// The number found.
    pub number: String,
}

/// Issues and checks proof-of-work challenges.
pub struct ProofOfWork {
    key: hmac::Key,
    max_number: u64,
    validity: time::Duration,
}

impl std::fmt::Debug for ProofOfWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProofOfWork")
            .field("max_number", &self.max_number)
            .finish_non_exhaustive()
    }
}

fn sha256_hex(salt: &str, number: u64) -> String {
    hex(digest::digest(&digest::SHA256, format!("{salt}{number}").as_bytes()).as_ref())
}

impl ProofOfWork {
    /// Challenges under a key derived from the guard's secret, of `max_number` numbers,
    /// answerable for `validity`.
    pub fn new(secret: &[u8; 32], max_number: u64, validity: time::Duration) -> Self {
        ProofOfWork {
            key: derive(secret, "card-guard proof of work v1"),
            max_number: max_number.max(1),
            validity,
        }
    }

    /// A fresh challenge for `session`, valid from `now` for the configured time.
    pub fn issue(&self, session: SessionId, now: OffsetDateTime) -> Challenge {
        let mut random = [0u8; 20];
        // The OS's generator does not fail on the platforms the service runs on; a zero
        // salt would still be bound to the session and its expiry.
        let _ = getrandom::getrandom(&mut random);
        let number_bytes: [u8; 8] = random[12..20].try_into().unwrap_or_default();
        let number = u64::from_le_bytes(number_bytes) % (self.max_number + 1);
        let expires = (now + self.validity).unix_timestamp();
        let salt = format!("{}?expires={expires}&session={session}", hex(&random[..12]));
        let challenge = sha256_hex(&salt, number);
        let signature = hex(hmac::sign(&self.key, challenge.as_bytes()).as_ref());
        Challenge {
            salt,
            challenge,
            signature,
            max_number: self.max_number,
        }
    }

    /// What `solution` is worth for a post to `session` at `now`.
    pub fn check(
        &self,
        solution: &Solution,
        session: SessionId,
        now: OffsetDateTime,
    ) -> ProofCheck {
        if solution.signature.is_empty() && solution.number.is_empty() {
            return ProofCheck::Absent;
        }
        let signed = decode_hex(&solution.signature).is_some_and(|tag| {
            hmac::verify(&self.key, solution.challenge.as_bytes(), &tag).is_ok()
        });
        let solved = solution.number.parse::<u64>().is_ok_and(|n| {
            n <= self.max_number && sha256_hex(&solution.salt, n) == solution.challenge
        });
        if !signed || !solved {
            return ProofCheck::Forged;
        }
        let params = solution.salt.split_once('?').map_or("", |(_, p)| p);
        let mut expires = None;
        let mut bound = None;
        for pair in params.split('&') {
            match pair.split_once('=') {
                Some(("expires", v)) => expires = v.parse::<i64>().ok(),
                Some(("session", v)) => bound = Some(v),
                _ => {}
            }
        }
        if bound != Some(session.to_string().as_str()) {
            return ProofCheck::Forged;
        }
        let Some(expires_at) = expires.and_then(|e| OffsetDateTime::from_unix_timestamp(e).ok())
        else {
            return ProofCheck::Forged;
        };
        if expires_at <= now {
            return ProofCheck::Expired;
        }
        ProofCheck::Solved {
            id: solution.signature.clone(),
            expires_at,
        }
    }

    /// Finds the number of `challenge` the way the page's script does (for tests and tools).
    pub fn solve(challenge: &Challenge) -> Option<u64> {
        (0..=challenge.max_number).find(|n| sha256_hex(&challenge.salt, *n) == challenge.challenge)
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() != 64 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn session() -> SessionId {
        SessionId::from_random_bytes([7; 16])
    }

    fn solution(c: &Challenge, number: u64) -> Solution {
        Solution {
            salt: c.salt.clone(),
            challenge: c.challenge.clone(),
            signature: c.signature.clone(),
            number: number.to_string(),
        }
    }

    #[test]
    fn a_solved_challenge_passes_and_a_forged_misbound_or_late_one_does_not() {
        let pow = ProofOfWork::new(&[1; 32], 2_000, time::Duration::minutes(10));
        let now = OffsetDateTime::now_utc();
        let c = pow.issue(session(), now);
        let n = ProofOfWork::solve(&c).unwrap();
        assert!(matches!(
            pow.check(&solution(&c, n), session(), now),
            ProofCheck::Solved { .. }
        ));
        // Wrong number: the work was not done.
        let wrong = (n + 1) % 2_001;
        assert_eq!(
            pow.check(&solution(&c, wrong), session(), now),
            ProofCheck::Forged
        );
        // Another session's challenge.
        let other = SessionId::from_random_bytes([8; 16]);
        assert_eq!(pow.check(&solution(&c, n), other, now), ProofCheck::Forged);
        // A challenge the attacker made up, solved, signed with another key.
        let forger = ProofOfWork::new(&[2; 32], 2_000, time::Duration::minutes(10));
        let f = forger.issue(session(), now);
        let fn_ = ProofOfWork::solve(&f).unwrap();
        assert_eq!(
            pow.check(&solution(&f, fn_), session(), now),
            ProofCheck::Forged
        );
        // Expired.
        assert_eq!(
            pow.check(
                &solution(&c, n),
                session(),
                now + time::Duration::minutes(11)
            ),
            ProofCheck::Expired
        );
        assert_eq!(
            pow.check(&Solution::default(), session(), now),
            ProofCheck::Absent
        );
    }

    #[test]
    fn keys_are_keyed_and_stable() {
        let a = HmacGuardKeys::new(&[1; 32]);
        let b = HmacGuardKeys::new(&[2; 32]);
        let card = CardNumber::parse("4242 4242 4242 4242").unwrap();
        assert_eq!(a.card(&card), a.card(&card));
        assert_ne!(a.card(&card), b.card(&card));
        assert!(!a.card(&card).as_str().contains("4242"));
        let ip: IpAddr = "203.0.113.7".parse().unwrap();
        assert_eq!(a.address(ip), a.address(ip));
        assert_ne!(a.address(ip).as_str(), a.card(&card).as_str());
    }
}
