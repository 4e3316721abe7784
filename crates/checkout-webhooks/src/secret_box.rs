//! Webhook secrets at rest: sealed with AES-256-GCM, so that no database row holds one in clear.
//!
//! Every instance must sign, so the secret itself is stored (a hash would not do); the key that
//! seals it is never stored next to it (the server derives it from its signing key).

use std::fmt;

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};

use crate::signature::WebhookSecret;

/// Seals and opens webhook secrets with AES-256-GCM under one 32-byte key.
///
/// The sealed form is bytes: a random 12-byte nonce (new for every seal), then the ciphertext
/// of the secret's key, then the 16-byte tag. A `context` (for example the endpoint's id) is
/// authenticated with it: a sealed secret opens only with the context it was sealed with, so
/// one copied into another row does not open.
pub struct SecretBox {
    key: LessSafeKey,
}

/// Why a secret cannot be sealed or opened. The message never holds key material.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SecretBoxError {
    /// The key was refused by the cipher.
    #[error("the secret box key is not usable")]
    Key,
    /// The operating system's random number generator failed (no nonce).
    #[error("the system random number generator failed")]
    Random,
    /// Sealing failed.
    #[error("the webhook secret cannot be sealed")]
    Seal,
    /// The bytes are not a secret sealed under this key with this context (wrong key, wrong
    /// context, or damaged).
    #[error("the sealed webhook secret cannot be opened (wrong key or context, or damaged)")]
    Open,
}

impl SecretBox {
    /// The key's length.
    pub const KEY_LEN: usize = 32;
    /// The bytes a sealed secret adds to its key: nonce and tag.
    pub const OVERHEAD: usize = NONCE_LEN + 16;

    /// A box under `key`.
    pub fn new(key: &[u8; Self::KEY_LEN]) -> Result<SecretBox, SecretBoxError> {
        let key = UnboundKey::new(&AES_256_GCM, key).map_err(|_| SecretBoxError::Key)?;
        Ok(SecretBox {
            key: LessSafeKey::new(key),
        })
    }

    /// Seals `secret` for `context`: nonce || ciphertext || tag.
    pub fn seal(&self, secret: &WebhookSecret, context: &[u8]) -> Result<Vec<u8>, SecretBoxError> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| SecretBoxError::Random)?;
        let mut in_out = secret.expose_key().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context),
                &mut in_out,
            )
            .map_err(|_| SecretBoxError::Seal)?;
        let mut sealed = Vec::with_capacity(NONCE_LEN + in_out.len());
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&in_out);
        Ok(sealed)
    }

    /// Opens what [`SecretBox::seal`] made under the same key and `context`.
    pub fn open(&self, sealed: &[u8], context: &[u8]) -> Result<WebhookSecret, SecretBoxError> {
        if sealed.len() < Self::OVERHEAD {
            return Err(SecretBoxError::Open);
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| SecretBoxError::Open)?;
        let mut in_out = ciphertext.to_vec();
        let key = self
            .key
            .open_in_place(nonce, Aad::from(context), &mut in_out)
            .map_err(|_| SecretBoxError::Open)?;
        WebhookSecret::from_key(key.to_vec()).map_err(|_| SecretBoxError::Open)
    }
}

impl fmt::Debug for SecretBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretBox(AES-256-GCM, [redacted])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(key: u8) -> SecretBox {
        SecretBox::new(&[key; 32]).unwrap()
    }

    #[test]
    fn a_sealed_secret_opens_to_the_same_secret() {
        let secret = WebhookSecret::generate().unwrap();
        let sealed = boxed(1).seal(&secret, b"endpoint-1").unwrap();
        assert_eq!(sealed.len(), 32 + SecretBox::OVERHEAD);
        let opened = boxed(1).open(&sealed, b"endpoint-1").unwrap();
        assert_eq!(opened.expose_secret(), secret.expose_secret());
    }

    #[test]
    fn the_sealed_form_holds_neither_the_key_nor_its_text() {
        let secret = WebhookSecret::generate().unwrap();
        let sealed = boxed(1).seal(&secret, b"").unwrap();
        let key = secret.expose_key();
        assert!(!sealed.windows(8).any(|w| key.windows(8).any(|k| k == w)));
        let text = secret.expose_secret();
        assert!(!sealed
            .windows(8)
            .any(|w| text.as_bytes().windows(8).any(|t| t == w)));
    }

    #[test]
    fn every_seal_uses_a_new_nonce() {
        let secret = WebhookSecret::generate().unwrap();
        let a = boxed(1).seal(&secret, b"").unwrap();
        let b = boxed(1).seal(&secret, b"").unwrap();
        assert_ne!(a[..NONCE_LEN], b[..NONCE_LEN]);
        assert_ne!(a, b);
    }

    #[test]
    fn a_wrong_key_context_or_byte_does_not_open() {
        let secret = WebhookSecret::generate().unwrap();
        let sealed = boxed(1).seal(&secret, b"endpoint-1").unwrap();
        assert_eq!(
            boxed(2).open(&sealed, b"endpoint-1").unwrap_err(),
            SecretBoxError::Open
        );
        assert_eq!(
            boxed(1).open(&sealed, b"endpoint-2").unwrap_err(),
            SecretBoxError::Open
        );
        for i in 0..sealed.len() {
            let mut damaged = sealed.clone();
            damaged[i] ^= 0x01;
            assert_eq!(
                boxed(1).open(&damaged, b"endpoint-1").unwrap_err(),
                SecretBoxError::Open,
                "byte {i}"
            );
        }
        for len in [
            0,
            1,
            SecretBox::OVERHEAD - 1,
            SecretBox::OVERHEAD,
            sealed.len() - 1,
        ] {
            assert_eq!(
                boxed(1).open(&sealed[..len], b"endpoint-1").unwrap_err(),
                SecretBoxError::Open,
                "length {len}"
            );
        }
    }

    #[test]
    fn debug_shows_no_key() {
        let text = format!("{:?}", boxed(0x41));
        assert_eq!(text, "SecretBox(AES-256-GCM, [redacted])");
    }
}
