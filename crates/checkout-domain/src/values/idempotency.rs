//! The `Idempotency-Key` a merchant sends with a create request, and the fingerprint of the
//! request it came with (IETF httpapi idempotency-key draft).

use std::fmt;

use crate::error::ValidationErrors;

/// A merchant's idempotency key: 1 to 255 visible ASCII characters (`!` to `~`, no spaces).
///
/// Keys are scoped to the caller's terminal: the same key sent by two terminals is two keys.
/// Not a secret, but never more than an opaque label: nothing is derived from it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// The longest key accepted, in characters.
    pub const MAX_LEN: usize = 255;

    /// The name errors about the key are reported under (the header's name).
    pub const FIELD: &'static str = "Idempotency-Key";

    /// Checks a key; a refusal names [`IdempotencyKey::FIELD`].
    pub fn parse(s: &str) -> Result<Self, ValidationErrors> {
        let valid =
            (1..=Self::MAX_LEN).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_graphic());
        if valid {
            return Ok(IdempotencyKey(s.to_owned()));
        }
        let mut errors = ValidationErrors::new();
        errors.add(
            Self::FIELD,
            format!(
                "{} must be 1 to {} visible ASCII characters (no spaces).",
                Self::FIELD,
                Self::MAX_LEN
            ),
        );
        Err(errors)
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IdempotencyKey({:?})", self.0)
    }
}

/// A digest of the request a key came with. What it covers is the HTTP adapter's choice
/// (the method, the path and the exact body bytes); the domain only compares two of them:
/// the same key with another fingerprint is another request.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestFingerprint([u8; 32]);

impl RequestFingerprint {
    /// Wraps a 32-byte digest.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        RequestFingerprint(bytes)
    }

    /// The digest's bytes (for storage).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for RequestFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RequestFingerprint(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        f.write_str("…)")
    }
}
