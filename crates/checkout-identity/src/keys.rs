//! Ed25519 signing keys: generation, PKCS#8 (DER and PEM) files, key ids, and the key set
//! (the active signing key plus older verification-only keys during a rotation).

use std::fmt;
use std::io::{ErrorKind, Write};
use std::path::Path;

use anyhow::{anyhow, Context};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use jsonwebtoken::{DecodingKey, EncodingKey};
use ring::digest::{digest, SHA256};
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair};

use crate::files::{create_private_dir, private_file_options};
use crate::secrets::random_bytes;

const PEM_BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
const PEM_END: &str = "-----END PRIVATE KEY-----";

/// The public half of an Ed25519 key, with its key id: verifies tokens, signs nothing.
#[derive(Clone)]
pub struct VerifyingKey {
    kid: String,
    public: [u8; 32],
    decoding: DecodingKey,
}

impl VerifyingKey {
    /// A verifying key from a raw 32-byte Ed25519 public key (the JWK's decoded `x`).
    pub fn from_public_key(public: &[u8]) -> anyhow::Result<Self> {
        let public: [u8; 32] = public
            .try_into()
            .map_err(|_| anyhow!("an Ed25519 public key is 32 bytes, not {}", public.len()))?;
        Ok(VerifyingKey {
            kid: kid_of(&public),
            public,
            decoding: DecodingKey::from_ed_der(&public),
        })
    }

    /// A verifying key from a JWK's `x` member (base64url, no padding).
    pub fn from_jwk_x(x: &str) -> anyhow::Result<Self> {
        let public = URL_SAFE_NO_PAD
            .decode(x)
            .context("the JWK's x is not base64url")?;
        Self::from_public_key(&public)
    }

    /// The key id: base64url (no padding) of the first 16 bytes of the SHA-256 of the public
    /// key; 22 characters.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The raw 32-byte public key.
    pub fn public_key(&self) -> &[u8; 32] {
        &self.public
    }

    pub(crate) fn decoding_key(&self) -> &DecodingKey {
        &self.decoding
    }
}

impl fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

/// An Ed25519 private key that signs tokens, kept as its PKCS#8 document. `Debug` shows
/// only the key id.
pub struct SigningKey {
    pkcs8: Vec<u8>,
    encoding: EncodingKey,
    verifying: VerifyingKey,
}

impl SigningKey {
    /// A new random key.
    pub fn generate() -> anyhow::Result<Self> {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
            .map_err(|_| anyhow!("generating an Ed25519 key failed"))?;
        Self::from_pkcs8_der(pkcs8.as_ref())
    }

    /// A key from an unencrypted PKCS#8 (v1 or v2) DER document. When the document holds
    /// the public key too (v2), it must match the private key.
    pub fn from_pkcs8_der(der: &[u8]) -> anyhow::Result<Self> {
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der)
            .map_err(|e| anyhow!("not an Ed25519 PKCS#8 private key: {e}"))?;
        let verifying = VerifyingKey::from_public_key(pair.public_key().as_ref())?;
        Ok(SigningKey {
            pkcs8: der.to_vec(),
            encoding: EncodingKey::from_ed_der(der),
            verifying,
        })
    }

    /// A key from a PEM `PRIVATE KEY` block (unencrypted PKCS#8), such as
    /// `openssl genpkey -algorithm ed25519` writes.
    pub fn from_pem(pem: &str) -> anyhow::Result<Self> {
        let start = pem
            .find(PEM_BEGIN)
            .context("no -----BEGIN PRIVATE KEY----- line")?
            + PEM_BEGIN.len();
        let len = pem[start..]
            .find(PEM_END)
            .context("no -----END PRIVATE KEY----- line")?;
        let body: String = pem[start..start + len]
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = STANDARD
            .decode(body)
            .context("the PEM body is not base64")?;
        Self::from_pkcs8_der(&der)
    }

    /// The key as a PEM `PRIVATE KEY` block (PKCS#8), lines of 64 characters.
    pub fn to_pem(&self) -> String {
        let body = STANDARD.encode(&self.pkcs8);
        let mut pem = String::with_capacity(body.len() + 64);
        pem.push_str(PEM_BEGIN);
        pem.push('\n');
        for line in body.as_bytes().chunks(64) {
            pem.push_str(&String::from_utf8_lossy(line));
            pem.push('\n');
        }
        pem.push_str(PEM_END);
        pem.push('\n');
        pem
    }

    /// The PKCS#8 DER document.
    pub fn to_pkcs8_der(&self) -> Vec<u8> {
        self.pkcs8.clone()
    }

    /// A key from a file holding a PKCS#8 document, as DER or PEM. Warns when the file can
    /// be read by others than its owner.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        warn_if_readable_by_others(path);
        Self::from_file_bytes(&bytes).with_context(|| format!("parsing {}", path.display()))
    }

    /// The key stored at `path`, or, when there is no file there, a new key saved there as
    /// PKCS#8 DER with mode 0600 (its folder is created with mode 0700). The file appears
    /// atomically: two processes starting at once end up with the same key.
    pub fn load_or_create(path: &Path) -> anyhow::Result<Self> {
        if path.exists() {
            return Self::load(path);
        }
        let key = Self::generate()?;
        match write_new_file(path, &key.pkcs8) {
            Ok(()) => {
                tracing::info!(path = %path.display(), kid = %key.kid(), "created a signing key");
                Ok(key)
            }
            // Another process created it first: use theirs.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Self::load(path),
            Err(e) => Err(e).with_context(|| format!("writing {}", path.display())),
        }
    }

    /// The key id (see [`VerifyingKey::kid`]), written in every token's header.
    pub fn kid(&self) -> &str {
        self.verifying.kid()
    }

    /// The public half.
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.verifying
    }

    pub(crate) fn encoding_key(&self) -> &EncodingKey {
        &self.encoding
    }

    fn from_file_bytes(bytes: &[u8]) -> anyhow::Result<Self> {
        let text = std::str::from_utf8(bytes).ok();
        match text.filter(|t| t.trim_start().starts_with("-----BEGIN")) {
            Some(pem) => Self::from_pem(pem),
            None => Self::from_pkcs8_der(bytes),
        }
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid())
            .finish_non_exhaustive()
    }
}

/// The keys of a provider: the active key that signs new tokens, and older public keys that
/// still verify the tokens they signed until those expire (key rotation).
#[derive(Debug)]
pub struct KeySet {
    active: SigningKey,
    previous: Vec<VerifyingKey>,
}

impl KeySet {
    /// A set with one key, which signs and verifies.
    pub fn new(active: SigningKey) -> Self {
        KeySet {
            active,
            previous: Vec::new(),
        }
    }

    /// Adds a verification-only key (a retired signing key's public half). A key whose kid
    /// is already in the set is ignored.
    pub fn with_verification_key(mut self, key: VerifyingKey) -> Self {
        if self.find(key.kid()).is_none() {
            self.previous.push(key);
        }
        self
    }

    /// The key that signs new tokens.
    pub fn active(&self) -> &SigningKey {
        &self.active
    }

    /// Every key that verifies tokens, the active one first.
    pub fn verifying_keys(&self) -> impl Iterator<Item = &VerifyingKey> {
        std::iter::once(self.active.verifying_key()).chain(self.previous.iter())
    }

    /// The verifying key with this kid, if the set has one.
    pub fn find(&self, kid: &str) -> Option<&VerifyingKey> {
        self.verifying_keys().find(|k| k.kid() == kid)
    }
}

fn kid_of(public: &[u8; 32]) -> String {
    let hash = digest(&SHA256, public);
    URL_SAFE_NO_PAD.encode(&hash.as_ref()[..16])
}

/// Writes `bytes` to a new file at `path` (mode 0600) through a temporary file and a hard
/// link, so that the file is never seen half-written and an existing file is never replaced
/// (`AlreadyExists` then).
fn write_new_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    create_private_dir(dir)?;
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(ErrorKind::InvalidInput, "the key path has no file name")
    })?;
    let nonce = random_bytes::<8>().map_err(|e| std::io::Error::other(e.to_string()))?;
    let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
    let tmp = dir.join(format!(".{}.{nonce}.tmp", name.to_string_lossy()));

    let result = (|| {
        let mut file = private_file_options().open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::hard_link(&tmp, path)
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(path = %path.display(), mode = format!("{:o}", mode & 0o777), "the signing key file can be read by others than its owner; chmod 600 it");
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_path: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kid_is_22_base64url_characters_of_the_public_key_hash() {
        let key = SigningKey::generate().unwrap();
        let expected = URL_SAFE_NO_PAD
            .encode(&digest(&SHA256, key.verifying_key().public_key()).as_ref()[..16]);
        assert_eq!(key.kid(), expected);
        assert_eq!(key.kid().len(), 22);
        assert_ne!(key.kid(), SigningKey::generate().unwrap().kid());
    }

    #[test]
    fn der_and_pem_round_trip() {
        let key = SigningKey::generate().unwrap();
        let from_der = SigningKey::from_pkcs8_der(&key.to_pkcs8_der()).unwrap();
        assert_eq!(from_der.kid(), key.kid());
        let pem = key.to_pem();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{pem}");
        let from_pem = SigningKey::from_pem(&pem).unwrap();
        assert_eq!(from_pem.kid(), key.kid());
        assert_eq!(from_pem.to_pkcs8_der(), key.to_pkcs8_der());
    }

    #[test]
    fn openssl_style_pkcs8_v1_pem_loads() {
        // `openssl genpkey -algorithm ed25519` output (PKCS#8 v1, no public key), RFC 8410
        // section 10.3's example key.
        let pem = "-----BEGIN PRIVATE KEY-----\n\
                   MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n\
                   -----END PRIVATE KEY-----\n";
        let key = SigningKey::from_pem(pem).unwrap();
        assert_eq!(
            URL_SAFE_NO_PAD.encode(key.verifying_key().public_key()),
            "Gb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE"
        );
    }

    #[test]
    fn garbage_is_not_a_key() {
        assert!(SigningKey::from_pkcs8_der(b"not a key").is_err());
        assert!(SigningKey::from_pem("nothing").is_err());
        assert!(
            SigningKey::from_pem("-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----")
                .is_err()
        );
        assert!(VerifyingKey::from_public_key(&[0u8; 31]).is_err());
        assert!(VerifyingKey::from_jwk_x("***").is_err());
    }

    #[test]
    fn verifying_key_from_x_has_the_same_kid() {
        let key = SigningKey::generate().unwrap();
        let x = URL_SAFE_NO_PAD.encode(key.verifying_key().public_key());
        assert_eq!(VerifyingKey::from_jwk_x(&x).unwrap().kid(), key.kid());
    }

    #[test]
    fn key_set_finds_active_and_previous_keys_once() {
        let old = SigningKey::generate().unwrap();
        let new = SigningKey::generate().unwrap();
        let (old_kid, new_kid) = (old.kid().to_owned(), new.kid().to_owned());
        let set = KeySet::new(new)
            .with_verification_key(old.verifying_key().clone())
            .with_verification_key(old.verifying_key().clone());
        assert_eq!(set.verifying_keys().count(), 2);
        assert_eq!(set.active().kid(), new_kid);
        assert_eq!(set.find(&old_kid).unwrap().kid(), old_kid);
        assert_eq!(set.find(&new_kid).unwrap().kid(), new_kid);
        assert!(set.find("nope").is_none());
    }

    #[test]
    fn debug_shows_no_key_material() {
        let key = SigningKey::generate().unwrap();
        let shown = format!("{key:?}");
        assert!(shown.contains(key.kid()));
        assert!(!shown.contains(&STANDARD.encode(key.to_pkcs8_der())));
    }
}
