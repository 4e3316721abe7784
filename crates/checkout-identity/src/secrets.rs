//! Client secrets: Argon2id hashes in PHC string form, constant-time verification, and
//! random secrets and client ids.

use anyhow::anyhow;
use argon2::password_hash::{Output, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
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

/// Argon2 working memory that [`verify_secret_with_memory`] reuses from one verification to
/// the next, instead of allocating (and faulting in) a fresh block of tens of MiB each time.
///
/// Its blocks are always a mapping of their own, so dropping it gives the memory back to the
/// operating system (see `RESERVED_BLOCKS`).
#[derive(Default)]
pub struct HashingMemory {
    blocks: Vec<Block>,
}

impl HashingMemory {
    /// Empty: the blocks are allocated by the first verification that needs them.
    pub fn new() -> Self {
        HashingMemory::default()
    }

    /// The bytes held.
    pub fn size_bytes(&self) -> usize {
        self.blocks.len() * Block::SIZE
    }
}

impl std::fmt::Debug for HashingMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the blocks' content: it is derived from a secret.
        f.debug_struct("HashingMemory")
            .field("bytes", &self.size_bytes())
            .finish()
    }
}

/// The most Argon2 memory a [`HashingMemory`] keeps between verifications: the default cost
/// (19 MiB), that of every hash made by [`hash_secret`]. A stored hash with a larger memory
/// cost is verified in a block allocated for that call alone.
const KEPT_BLOCKS: usize = Params::DEFAULT_M_COST as usize;

/// The capacity reserved for a [`HashingMemory`]'s blocks: 33 MiB of address space, of which
/// only the blocks a hash uses (19 MiB by default) are ever written, hence resident. glibc
/// serves an allocation from its heaps, which keep what is freed, unless it is at least its
/// mmap threshold; that threshold rises to the size of each mmap-served block freed, up to
/// 32 MiB on 64-bit (mallopt(3)). A 19 MiB block would thus be mapped once, and then sit in a
/// heap for good; a reservation above the ceiling is mapped every time and unmapped when
/// dropped.
const RESERVED_BLOCKS: usize = 33 * 1024 * 1024 / Block::SIZE;

/// Like [`verify_secret`], but Argon2 works in `memory`, which grows once to the hash's
/// memory cost (up to 19 MiB) and is kept for the next call. The result is compared with the
/// stored one in constant time (`password_hash::Output`'s equality). A malformed hash never
/// matches.
///
/// Each call overwrites every block it uses, so what a previous verification left in
/// `memory` never affects the result.
///
/// CPU-heavy (tens of milliseconds): call it from a blocking context.
pub fn verify_secret_with_memory(hash: &str, secret: &str, memory: &mut HashingMemory) -> bool {
    let Ok(parsed) = PasswordHash::new(hash) else {
        return false;
    };
    let (Some(expected), Some(salt)) = (parsed.hash, parsed.salt) else {
        return false;
    };
    let mut salt_bytes = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    let Ok(algorithm) = Algorithm::try_from(parsed.algorithm) else {
        return false;
    };
    let version = match parsed.version.map(Version::try_from).transpose() {
        Ok(version) => version.unwrap_or_default(),
        Err(_) => return false,
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    let needed = params.block_count();
    let argon2 = Argon2::new(algorithm, version, params);
    let mut output = [0u8; Output::MAX_LENGTH];
    let Some(output) = output.get_mut(..expected.len()) else {
        return false;
    };
    let hashed = if needed <= KEPT_BLOCKS {
        if memory.blocks.len() < needed {
            if memory.blocks.capacity() < needed {
                memory.blocks = Vec::with_capacity(RESERVED_BLOCKS.max(needed));
            }
            memory.blocks.resize(needed, Block::default());
        }
        argon2.hash_password_into_with_memory(secret.as_bytes(), salt, output, &mut memory.blocks)
    } else {
        argon2.hash_password_into(secret.as_bytes(), salt, output)
    };
    if hashed.is_err() {
        return false;
    }
    Output::new(output).is_ok_and(|computed| computed == expected)
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

    /// `secret` hashed with explicit parameters, in PHC form.
    fn hash_with(algorithm: Algorithm, m_cost: u32, secret: &str) -> String {
        let params = Params::new(m_cost, 1, 1, None).unwrap();
        let salt = SaltString::encode_b64(b"sixteen-byte-slt").unwrap();
        Argon2::new(algorithm, Version::V0x13, params)
            .hash_password(secret.as_bytes(), &salt)
            .unwrap()
            .to_string()
    }

    #[test]
    fn verifying_in_kept_memory_agrees_with_the_crates_verifier() {
        let mut memory = HashingMemory::new();
        let default = hash_secret("s3cret").unwrap();
        let small = hash_with(Algorithm::Argon2id, 64, "s3cret");
        let argon2i = hash_with(Algorithm::Argon2i, 64, "s3cret");
        let larger = hash_with(Algorithm::Argon2id, KEPT_BLOCKS as u32 + 1024, "s3cret");
        // Each hash twice, in one memory reused across all of them, in an order where a
        // smaller hash follows a larger one.
        for hash in [
            &default, &small, &argon2i, &larger, DUMMY_HASH, &small, &default,
        ] {
            for candidate in ["s3cret", "s3creT", ""] {
                assert_eq!(
                    verify_secret_with_memory(hash, candidate, &mut memory),
                    verify_secret(hash, candidate),
                    "{hash} {candidate:?}"
                );
            }
        }
        assert!(verify_secret_with_memory(&default, "s3cret", &mut memory));
        assert!(verify_secret_with_memory(&argon2i, "s3cret", &mut memory));
        assert!(verify_secret_with_memory(&larger, "s3cret", &mut memory));
        // The larger hash was verified in memory of its own.
        assert_eq!(memory.size_bytes(), KEPT_BLOCKS * Block::SIZE);
        for malformed in [
            "",
            "plain:abc",
            "$argon2id$v=19$garbage",
            "$scrypt$ln=4,r=8,p=1$c2FsdA$aGFzaA",
        ] {
            assert!(!verify_secret_with_memory(malformed, "abc", &mut memory));
        }
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
