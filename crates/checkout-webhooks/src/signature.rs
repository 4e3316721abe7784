//! Standard Webhooks signatures (symmetric, `v1`): the secret, the headers of one delivery, and a
//! verifier for tests.
//!
//! The signed content is `{webhook-id}.{webhook-timestamp}.{body}`, with the body's exact bytes;
//! the signature is HMAC-SHA256 under the secret's key, written `v1,<base64>`. One entry per
//! secret, separated by spaces, so that a merchant rotating its secret accepts either.

use std::fmt;

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

/// The prefix of a webhook secret's text.
pub const SECRET_PREFIX: &str = "whsec_";
/// The header carrying the message id (the same on every attempt of one message).
pub const HEADER_ID: &str = "webhook-id";
/// The header carrying the attempt's time, in unix seconds.
pub const HEADER_TIMESTAMP: &str = "webhook-timestamp";
/// The header carrying the space-separated `v1,<base64>` signatures.
pub const HEADER_SIGNATURE: &str = "webhook-signature";
/// The signature scheme's identifier: HMAC-SHA256.
pub const SCHEME_V1: &str = "v1";

/// Standard base64 that accepts a secret with or without its `=` padding and with non-zero
/// unused bits in its last character, as the reference libraries (Python's, Go's) do.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// A webhook signing secret: `whsec_` followed by the standard base64 of its key. The key is
/// what HMAC-SHA256 runs under.
///
/// Never printed: `Debug` is redacted and there is no `Display`; its text is given out only by
/// [`WebhookSecret::expose_secret`], to show it to the merchant once.
#[derive(Clone)]
pub struct WebhookSecret {
    key: Vec<u8>,
}

/// Why a text is not a webhook secret. The message never repeats the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidSecret {
    /// The text does not start with `whsec_`.
    #[error("a webhook secret must start with whsec_")]
    Prefix,
    /// What follows `whsec_` is not standard base64.
    #[error("a webhook secret must be whsec_ followed by standard base64")]
    Encoding,
    /// The key is shorter than 24 bytes or longer than 64.
    #[error("a webhook secret's key must be between 24 and 64 bytes")]
    Length,
}

/// The operating system's random number generator failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the system random number generator failed")]
pub struct RandomUnavailable;

impl WebhookSecret {
    /// The shortest key accepted (the specification's minimum).
    pub const MIN_KEY_LEN: usize = 24;
    /// The longest key accepted (the specification's maximum).
    pub const MAX_KEY_LEN: usize = 64;
    /// The length of a generated key.
    pub const GENERATED_KEY_LEN: usize = 32;

    /// A new secret: 32 bytes from the operating system's random number generator.
    pub fn generate() -> Result<WebhookSecret, RandomUnavailable> {
        let mut key = vec![0u8; Self::GENERATED_KEY_LEN];
        SystemRandom::new()
            .fill(&mut key)
            .map_err(|_| RandomUnavailable)?;
        Ok(WebhookSecret { key })
    }

    /// Reads a secret's text: `whsec_` and standard base64 (with or without padding) of a key
    /// of 24 to 64 bytes.
    pub fn parse(text: &str) -> Result<WebhookSecret, InvalidSecret> {
        let encoded = text
            .strip_prefix(SECRET_PREFIX)
            .ok_or(InvalidSecret::Prefix)?;
        let key = LENIENT_BASE64
            .decode(encoded)
            .map_err(|_| InvalidSecret::Encoding)?;
        WebhookSecret::from_key(key)
    }

    /// A secret whose key is `key` (24 to 64 bytes).
    pub fn from_key(key: Vec<u8>) -> Result<WebhookSecret, InvalidSecret> {
        if !(Self::MIN_KEY_LEN..=Self::MAX_KEY_LEN).contains(&key.len()) {
            return Err(InvalidSecret::Length);
        }
        Ok(WebhookSecret { key })
    }

    /// The secret's text, `whsec_` and the padded standard base64 of its key: what the merchant
    /// is shown (once) and gives to its Standard Webhooks library. Never log it.
    pub fn expose_secret(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.key))
    }

    /// The HMAC key. Never log it.
    pub fn expose_key(&self) -> &[u8] {
        &self.key
    }

    /// The `v1,<base64>` signature of `{message_id}.{timestamp}.{body}` under this secret.
    ///
    /// Signs whatever it is given; [`WebhookHeaders::sign`] is the checked way to sign a
    /// delivery.
    pub fn sign(&self, message_id: &str, timestamp: i64, body: &[u8]) -> String {
        let tag = hmac::sign(
            &self.hmac_key(),
            &signed_content(message_id, timestamp, body),
        );
        format!("{SCHEME_V1},{}", STANDARD.encode(tag.as_ref()))
    }

    fn hmac_key(&self) -> hmac::Key {
        hmac::Key::new(hmac::HMAC_SHA256, &self.key)
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret([redacted])")
    }
}

/// `{message_id}.{timestamp}.{body}`: the bytes a signature covers.
fn signed_content(message_id: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    let prefix = format!("{message_id}.{timestamp}.");
    let mut content = Vec::with_capacity(prefix.len() + body.len());
    content.extend_from_slice(prefix.as_bytes());
    content.extend_from_slice(body);
    content
}

/// Why a delivery cannot be signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignError {
    /// The message id is empty, longer than [`WebhookHeaders::MAX_ID_LEN`], or holds a
    /// character other than visible ASCII, or a `.` (which would make the signed content
    /// ambiguous).
    #[error("the message id must be 1 to 256 visible ASCII characters without '.'")]
    InvalidMessageId,
    /// The timestamp is before 1970.
    #[error("the timestamp must not be before 1970")]
    InvalidTimestamp,
    /// No secret to sign with.
    #[error("there is no secret to sign with")]
    NoSecret,
}

/// The three Standard Webhooks headers of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookHeaders {
    /// `webhook-id`: the message id.
    pub id: String,
    /// `webhook-timestamp`: the attempt's time in unix seconds.
    pub timestamp: String,
    /// `webhook-signature`: one `v1,<base64>` per secret, in the order given, space-separated.
    pub signature: String,
}

impl WebhookHeaders {
    /// The longest message id accepted.
    pub const MAX_ID_LEN: usize = 256;

    /// Signs `body` (the exact bytes that will be sent) for `message_id` at `timestamp` (unix
    /// seconds) with every secret in `secrets`.
    pub fn sign(
        message_id: &str,
        timestamp: i64,
        body: &[u8],
        secrets: &[WebhookSecret],
    ) -> Result<WebhookHeaders, SignError> {
        check_message_id(message_id)?;
        if timestamp < 0 {
            return Err(SignError::InvalidTimestamp);
        }
        if secrets.is_empty() {
            return Err(SignError::NoSecret);
        }
        let signature = secrets
            .iter()
            .map(|secret| secret.sign(message_id, timestamp, body))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(WebhookHeaders {
            id: message_id.to_owned(),
            timestamp: timestamp.to_string(),
            signature,
        })
    }

    /// The headers as (name, value) pairs.
    pub fn pairs(&self) -> [(&'static str, &str); 3] {
        [
            (HEADER_ID, self.id.as_str()),
            (HEADER_TIMESTAMP, self.timestamp.as_str()),
            (HEADER_SIGNATURE, self.signature.as_str()),
        ]
    }
}

/// Checks that `message_id` can be a `webhook-id`: 1 to 256 visible ASCII characters, none of
/// them a `.`.
pub fn check_message_id(message_id: &str) -> Result<(), SignError> {
    let ok = !message_id.is_empty()
        && message_id.len() <= WebhookHeaders::MAX_ID_LEN
        && message_id
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'.');
    if ok {
        Ok(())
    } else {
        Err(SignError::InvalidMessageId)
    }
}

/// A verifier as a merchant's library runs it, for this crate's tests: nothing in the service
/// verifies webhooks.
#[cfg(any(test, feature = "testing"))]
pub mod verify {
    use base64::Engine;
    use ring::hmac;

    use super::{signed_content, WebhookSecret, SCHEME_V1, STANDARD};

    /// How far the timestamp may be from the verifier's clock, as the reference libraries
    /// allow: 5 minutes.
    pub const TOLERANCE_SECS: i64 = 300;

    /// Why a delivery does not verify.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    pub enum VerifyError {
        /// A header is missing or empty.
        #[error("missing required headers")]
        MissingHeader,
        /// The timestamp is not an integer.
        #[error("invalid timestamp")]
        InvalidTimestamp,
        /// The timestamp is more than 5 minutes old.
        #[error("message timestamp too old")]
        TooOld,
        /// The timestamp is more than 5 minutes ahead.
        #[error("message timestamp too new")]
        TooNew,
        /// No `v1` entry is the signature under the secret.
        #[error("no matching signature found")]
        NoMatchingSignature,
    }

    /// Verifies a delivery's headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`)
    /// and body against `secret` at `now` (unix seconds): the timestamp within 5 minutes, and
    /// one `v1` entry equal (compared in constant time) to the body's signature. Entries of
    /// other schemes are skipped.
    pub fn verify(
        secret: &WebhookSecret,
        id: &str,
        timestamp: &str,
        signature: &str,
        body: &[u8],
        now: i64,
    ) -> Result<(), VerifyError> {
        if id.is_empty() || timestamp.is_empty() || signature.is_empty() {
            return Err(VerifyError::MissingHeader);
        }
        let ts: i64 = timestamp
            .parse()
            .map_err(|_| VerifyError::InvalidTimestamp)?;
        if ts < now - TOLERANCE_SECS {
            return Err(VerifyError::TooOld);
        }
        if ts > now + TOLERANCE_SECS {
            return Err(VerifyError::TooNew);
        }
        let content = signed_content(id, ts, body);
        let key = secret.hmac_key();
        let matches = signature.split(' ').any(|entry| {
            let Some((scheme, encoded)) = entry.split_once(',') else {
                return false;
            };
            if scheme != SCHEME_V1 {
                return false;
            }
            match STANDARD.decode(encoded) {
                Ok(tag) => hmac::verify(&key, &content, &tag).is_ok(),
                Err(_) => false,
            }
        });
        if matches {
            Ok(())
        } else {
            Err(VerifyError::NoMatchingSignature)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::verify::{verify, VerifyError};
    use super::*;

    /// The test vector every reference library shares (Python, JavaScript, Go, Ruby, C#, PHP
    /// `test_sign_function`).
    const VECTOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const VECTOR_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const VECTOR_TIMESTAMP: i64 = 1614265330;
    const VECTOR_BODY: &[u8] = br#"{"test": 2432232314}"#;
    const VECTOR_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn vector_secret() -> WebhookSecret {
        WebhookSecret::parse(VECTOR_SECRET).unwrap()
    }

    #[test]
    fn the_shared_test_vector_signs_as_the_reference_libraries() {
        assert_eq!(
            vector_secret().sign(VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY),
            VECTOR_SIGNATURE
        );
        let headers =
            WebhookHeaders::sign(VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY, &[vector_secret()])
                .unwrap();
        assert_eq!(headers.signature, VECTOR_SIGNATURE);
        assert_eq!(headers.timestamp, "1614265330");
        assert_eq!(headers.id, VECTOR_ID);
    }

    /// The Rust reference library's `test_sign` vector.
    #[test]
    fn the_rust_library_vector_signs_as_it_does() {
        let secret = WebhookSecret::parse("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD").unwrap();
        assert_eq!(
            secret.sign(
                "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
                1649367553,
                br#"{"email":"test@example.com","username":"test_user"}"#
            ),
            "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
        );
    }

    #[test]
    fn the_vector_verifies_and_its_mutations_do_not() {
        let secret = vector_secret();
        let ts = VECTOR_TIMESTAMP.to_string();
        let check = |id: &str, ts: &str, sig: &str, body: &[u8]| {
            verify(&secret, id, ts, sig, body, VECTOR_TIMESTAMP)
        };
        assert_eq!(check(VECTOR_ID, &ts, VECTOR_SIGNATURE, VECTOR_BODY), Ok(()));
        // The reference libraries' "invalid signature" cases.
        for bad in [
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=",
            "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
            "v1,dawfeoifkpqwoekfpqoekf",
            "v1,",
            "v1",
            "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
            &VECTOR_SIGNATURE[..8],
        ] {
            assert_eq!(
                check(VECTOR_ID, &ts, bad, VECTOR_BODY),
                Err(VerifyError::NoMatchingSignature),
                "{bad}"
            );
        }
        // A changed body, id or timestamp.
        assert!(check(VECTOR_ID, &ts, VECTOR_SIGNATURE, br#"{"test": 2432232315}"#).is_err());
        assert!(check(VECTOR_ID, &ts, VECTOR_SIGNATURE, br#"{"test":2432232314}"#).is_err());
        assert!(check("msg_other", &ts, VECTOR_SIGNATURE, VECTOR_BODY).is_err());
        assert!(verify(
            &secret,
            VECTOR_ID,
            &(VECTOR_TIMESTAMP + 1).to_string(),
            VECTOR_SIGNATURE,
            VECTOR_BODY,
            VECTOR_TIMESTAMP
        )
        .is_err());
        // Missing headers and a bad timestamp.
        assert_eq!(
            check("", &ts, VECTOR_SIGNATURE, VECTOR_BODY),
            Err(VerifyError::MissingHeader)
        );
        assert_eq!(
            check(VECTOR_ID, "hello", VECTOR_SIGNATURE, VECTOR_BODY),
            Err(VerifyError::InvalidTimestamp)
        );
    }

    #[test]
    fn a_list_with_one_valid_entry_among_others_verifies() {
        // The reference libraries' "valid multi sig is valid".
        let multi = [
            "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
            "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
            VECTOR_SIGNATURE,
            "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
        ]
        .join(" ");
        let ts = VECTOR_TIMESTAMP.to_string();
        assert_eq!(
            verify(
                &vector_secret(),
                VECTOR_ID,
                &ts,
                &multi,
                VECTOR_BODY,
                VECTOR_TIMESTAMP
            ),
            Ok(())
        );
    }

    #[test]
    fn timestamps_outside_five_minutes_are_refused() {
        let secret = vector_secret();
        let sign_at = |ts: i64| secret.sign(VECTOR_ID, ts, VECTOR_BODY);
        let now = 1_700_000_000;
        for (ts, expected) in [
            (now - 301, Err(VerifyError::TooOld)),
            (now - 300, Ok(())),
            (now + 300, Ok(())),
            (now + 301, Err(VerifyError::TooNew)),
        ] {
            assert_eq!(
                verify(
                    &secret,
                    VECTOR_ID,
                    &ts.to_string(),
                    &sign_at(ts),
                    VECTOR_BODY,
                    now
                ),
                expected,
                "{ts}"
            );
        }
    }

    #[test]
    fn two_secrets_give_two_entries_each_verifying_under_its_own_secret() {
        let old = WebhookSecret::generate().unwrap();
        let new = WebhookSecret::generate().unwrap();
        let other = WebhookSecret::generate().unwrap();
        let now = 1_700_000_000;
        let body = br#"{"id":"x"}"#;
        let headers =
            WebhookHeaders::sign("evt_1", now, body, &[new.clone(), old.clone()]).unwrap();
        let entries: Vec<&str> = headers.signature.split(' ').collect();
        assert_eq!(entries.len(), 2);
        assert!(entries.iter().all(|e| e.starts_with("v1,")));
        assert_eq!(entries[0], new.sign("evt_1", now, body));
        assert_eq!(entries[1], old.sign("evt_1", now, body));
        for secret in [&old, &new] {
            assert_eq!(
                verify(
                    secret,
                    &headers.id,
                    &headers.timestamp,
                    &headers.signature,
                    body,
                    now
                ),
                Ok(())
            );
        }
        assert_eq!(
            verify(
                &other,
                &headers.id,
                &headers.timestamp,
                &headers.signature,
                body,
                now
            ),
            Err(VerifyError::NoMatchingSignature)
        );
    }

    #[test]
    fn the_exact_bytes_are_signed_even_when_not_utf8() {
        let secret = vector_secret();
        let body = [0xff, 0x00, b'{', b'}'];
        let sig = secret.sign("m", 1, &body);
        assert_eq!(verify(&secret, "m", "1", &sig, &body, 1), Ok(()));
        assert!(verify(&secret, "m", "1", &sig, &body[1..], 1).is_err());
    }

    #[test]
    fn generated_secrets_are_32_random_bytes_in_whsec_padded_base64() {
        let a = WebhookSecret::generate().unwrap();
        let b = WebhookSecret::generate().unwrap();
        assert_eq!(a.expose_key().len(), 32);
        assert_ne!(a.expose_key(), b.expose_key());
        let text = a.expose_secret();
        assert!(text.starts_with("whsec_"));
        // 32 bytes: 43 base64 characters and one `=`.
        assert_eq!(text.len(), "whsec_".len() + 44);
        assert!(text.ends_with('='));
        assert_eq!(
            WebhookSecret::parse(&text).unwrap().expose_key(),
            a.expose_key()
        );
    }

    #[test]
    fn secrets_parse_with_or_without_padding_and_are_checked() {
        // 24 bytes need no padding; 25 bytes need two `=`, 26 bytes one.
        let unpadded = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr").unwrap();
        let padded = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr==").unwrap();
        assert_eq!(unpadded.expose_key(), padded.expose_key());
        assert_eq!(unpadded.expose_key().len(), 25);

        assert_eq!(
            WebhookSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap_err(),
            InvalidSecret::Prefix
        );
        assert_eq!(
            WebhookSecret::parse("whsec_").unwrap_err(),
            InvalidSecret::Length
        );
        assert_eq!(
            WebhookSecret::parse("whsec_not base64!").unwrap_err(),
            InvalidSecret::Encoding
        );
        // 23 bytes: below the specification's minimum.
        assert_eq!(
            WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS").unwrap_err(),
            InvalidSecret::Length
        );
        // 65 bytes: above its maximum.
        let long = format!("whsec_{}", STANDARD.encode([7u8; 65]));
        assert_eq!(
            WebhookSecret::parse(&long).unwrap_err(),
            InvalidSecret::Length
        );
        let longest = format!("whsec_{}", STANDARD.encode([7u8; 64]));
        assert!(WebhookSecret::parse(&longest).is_ok());
    }

    #[test]
    fn errors_and_debug_never_show_the_secret() {
        let secret = WebhookSecret::generate().unwrap();
        let text = secret.expose_secret();
        let encoded = &text["whsec_".len()..];
        assert_eq!(format!("{secret:?}"), "WebhookSecret([redacted])");
        for bad in [
            text.replacen("whsec_", "whsek_", 1),
            format!("{text}!"),
            text[..20].to_owned(),
        ] {
            let message = WebhookSecret::parse(&bad).unwrap_err().to_string();
            assert!(!message.contains(&encoded[..16]), "{message}");
        }
    }

    #[test]
    fn message_ids_are_checked() {
        let secrets = [vector_secret()];
        for id in ["", "a.b", "with space", "tab\t", "é", &"x".repeat(257)] {
            assert_eq!(
                WebhookHeaders::sign(id, 1, b"{}", &secrets).unwrap_err(),
                SignError::InvalidMessageId,
                "{id:?}"
            );
        }
        for id in [
            "6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55",
            VECTOR_ID,
            &"x".repeat(256),
        ] {
            assert!(WebhookHeaders::sign(id, 1, b"{}", &secrets).is_ok(), "{id}");
        }
        assert_eq!(
            WebhookHeaders::sign("m", 1, b"{}", &[]).unwrap_err(),
            SignError::NoSecret
        );
        assert_eq!(
            WebhookHeaders::sign("m", -1, b"{}", &secrets).unwrap_err(),
            SignError::InvalidTimestamp
        );
    }
}
