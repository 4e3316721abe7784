//! Client secrets: Argon2id hashes in PHC string form, constant-time verification, and
//! random secrets and client ids.

use anyhow::anyhow;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use checkout_domain::auth::Secret;
use checkout_domain::values::TerminalNumber;
use ring::rand::{SecureRandom, SystemRandom};

/// An Argon2id hash (same parameters as [`hash_secret`]) of a secret nobody knows. Unknown and
/// inactive clients are checked against it, so that they cost as much time as a real client
/// and the answer's timing does not tell which client ids exist.
pub(crate) const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c2VjcmV0LWR1bW15LXNhbHQ$59qjVHRxnhh8Yi0/hGwn5zlzA5HWzvf8ZAnN2iQ9MlQ";

/// `N` bytes from the operating system's random number generator.
pub(crate) fn random_bytes<const N: usize>() -> anyhow::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| anyhow!("the system random number generator failed"))?;
    Ok(bytes)
}

/// Hashes a client secret with Argon2id (the `argon2` crate's default parameters: 19 MiB,
/// 2 passes, 1 lane) and a random 16-byte salt, into a PHC string
/// (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), which is what the client store keeps.
///
/// CPU-heavy (tens of milliseconds): call it from a blocking context.
pub fn hash_secret(secret: &str) -> anyhow::Result<String> {
    let salt = SaltString::encode_b64(&random_bytes::<16>()?)
        .map_err(|e| anyhow!("encoding the salt: {e}"))?;
    let hash = Argon2::default()
        .hash_password(secret.as_bytes(), &salt)
        .map_err(|e| anyhow!("hashing the secret: {e}"))?;
    Ok(hash.to_string())
}

/// True when `secret` matches the PHC string `hash`. The comparison is constant-time (the
/// `argon2` crate's verifier); the cost parameters are read from the hash. A malformed hash
/// never matches.
///
/// CPU-heavy (tens of milliseconds): call it from a blocking context.
pub fn verify_secret(hash: &str, secret: &str) -> bool {
    match PasswordHash::new(hash) {
        Ok(parsed) => Argon2::default()
            .verify_password(secret.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A new client secret: 32 random bytes, base64url without padding (43 characters).
pub fn try_generate_secret() -> anyhow::Result<Secret> {
    Ok(Secret::new(URL_SAFE_NO_PAD.encode(random_bytes::<32>()?)))
}

/// A new client secret: 32 random bytes, base64url without padding (43 characters).
///
/// # Panics
///
/// When the operating system's random number generator fails, which it does not once the
/// system has booted; [`try_generate_secret`] returns that error instead.
pub fn generate_secret() -> Secret {
    try_generate_secret().unwrap_or_else(|e| panic!("cannot generate a client secret: {e}"))
}

/// A new client id for a terminal: the terminal number, a dash and 20 random hex digits
/// (80 bits), e.g. `T0001-9f86d081884c7d659a2f`.
pub fn try_generate_client_id(terminal: &TerminalNumber) -> anyhow::Result<String> {
    let suffix: String = random_bytes::<10>()?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(format!("{}-{suffix}", terminal.as_str()))
}

/// A new client id for a terminal; see [`try_generate_client_id`].
///
/// # Panics
///
/// When the operating system's random number generator fails, which it does not once the
/// system has booted; [`try_generate_client_id`] returns that error instead.
pub fn generate_client_id(terminal: &TerminalNumber) -> String {
    try_generate_client_id(terminal).unwrap_or_else(|e| panic!("cannot generate a client id: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_then_verify() {
        let hash = hash_secret("s3cret").unwrap();
        assert!(hash.starts_with("$argon2id$v=19$"), "{hash}");
        assert!(verify_secret(&hash, "s3cret"));
        assert!(!verify_secret(&hash, "s3creT"));
        assert!(!verify_secret(&hash, ""));
    }

    #[test]
    fn salts_are_random() {
        assert_ne!(hash_secret("same").unwrap(), hash_secret("same").unwrap());
    }

    #[test]
    fn malformed_hash_never_matches() {
        assert!(!verify_secret("", ""));
        assert!(!verify_secret("plain:abc", "abc"));
        assert!(!verify_secret("$argon2id$v=19$garbage", "abc"));
    }

    #[test]
    fn dummy_hash_costs_what_a_real_hash_costs() {
        let dummy = PasswordHash::new(DUMMY_HASH).unwrap();
        let real_string = hash_secret("x").unwrap();
        let real = PasswordHash::new(&real_string).unwrap();
        assert_eq!(dummy.algorithm, real.algorithm);
        assert_eq!(dummy.version, real.version);
        assert_eq!(dummy.params, real.params);
        assert_eq!(
            dummy.hash.map(|h| h.len()),
            real.hash.map(|h| h.len()),
            "output length"
        );
        assert!(!verify_secret(DUMMY_HASH, ""));
    }

    #[test]
    fn secrets_are_43_base64url_characters_and_differ() {
        let a = generate_secret();
        let b = generate_secret();
        assert_eq!(a.expose().len(), 43);
        assert!(a
            .expose()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_ne!(a, b);
        assert_eq!(URL_SAFE_NO_PAD.decode(a.expose()).unwrap().len(), 32);
    }

    #[test]
    fn client_ids_name_their_terminal() {
        let terminal = TerminalNumber::parse("T0001").unwrap();
        let a = generate_client_id(&terminal);
        let b = generate_client_id(&terminal);
        assert!(a.starts_with("T0001-"), "{a}");
        assert_eq!(a.len(), "T0001-".len() + 20);
        assert_ne!(a, b);
    }
}
