//! Verifying the service's webhook deliveries (Standard Webhooks, symmetric `v1`).
//!
//! A delivery is a `POST` of the event's JSON with three headers: `webhook-id` (the event id,
//! the same on every retry), `webhook-timestamp` (unix seconds of the attempt) and
//! `webhook-signature`: space-separated `v1,<base64>` entries, one per secret the endpoint
//! signs with (two while a rotated-out secret still signs). Each entry is the HMAC-SHA256,
//! under the secret's key, of `{webhook-id}.{webhook-timestamp}.{body}` with the body's exact
//! bytes. The secret is `whsec_` and the base64 of the key.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use ring::hmac;

use crate::types::Event;

/// The header carrying the message (event) id.
pub const HEADER_ID: &str = "webhook-id";
/// The header carrying the attempt's time, in unix seconds.
pub const HEADER_TIMESTAMP: &str = "webhook-timestamp";
/// The header carrying the signatures.
pub const HEADER_SIGNATURE: &str = "webhook-signature";
/// The prefix of a secret's text.
pub const SECRET_PREFIX: &str = "whsec_";

/// How far a delivery's timestamp may be from this machine's clock by default (5 minutes,
/// as the Standard Webhooks libraries allow).
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(300);

/// Standard base64, with or without padding, as the reference libraries read secrets.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Signatures are standard base64 with padding.
const STANDARD: GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Why a delivery is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebhookError {
    /// A secret is not `whsec_` followed by base64 of a key.
    InvalidSecret,
    /// A header is missing or empty (its name).
    MissingHeader(&'static str),
    /// `webhook-timestamp` is not a whole number.
    InvalidTimestamp,
    /// The timestamp is older than the tolerance: a replay, or a very late delivery.
    TooOld,
    /// The timestamp is further ahead than the tolerance.
    TooNew,
    /// No `v1` signature matches under any of the secrets.
    NoMatchingSignature,
    /// Signed correctly, but the body is not an event (the JSON error).
    InvalidBody(String),
}

impl fmt::Display for WebhookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebhookError::InvalidSecret => {
                f.write_str("a webhook secret must be whsec_ followed by base64")
            }
            WebhookError::MissingHeader(name) => write!(f, "the {name} header is missing"),
            WebhookError::InvalidTimestamp => f.write_str("the webhook-timestamp is not a number"),
            WebhookError::TooOld => f.write_str("the webhook timestamp is too old"),
            WebhookError::TooNew => f.write_str("the webhook timestamp is too far ahead"),
            WebhookError::NoMatchingSignature => f.write_str("no signature matches"),
            WebhookError::InvalidBody(e) => write!(f, "the webhook body is not an event: {e}"),
        }
    }
}

impl std::error::Error for WebhookError {}

/// The three headers of a delivery, as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookHeaders<'a> {
    /// `webhook-id`.
    pub id: &'a str,
    /// `webhook-timestamp`.
    pub timestamp: &'a str,
    /// `webhook-signature`.
    pub signature: &'a str,
}

impl<'a> WebhookHeaders<'a> {
    /// The headers read by name (lower case) with `get`, e.g. from a web framework's header
    /// map.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use checkout_client::WebhookHeaders;
    ///
    /// let received: HashMap<&str, &str> = HashMap::from([
    ///     ("webhook-id", "6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55"),
    ///     ("webhook-timestamp", "1700000000"),
    ///     ("webhook-signature", "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="),
    /// ]);
    /// let headers = WebhookHeaders::from_lookup(|name| received.get(name).copied())?;
    /// assert_eq!(headers.timestamp, "1700000000");
    /// # Ok::<(), checkout_client::WebhookError>(())
    /// ```
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<WebhookHeaders<'a>, WebhookError> {
        let read = |name: &'static str| {
            get(name)
                .filter(|v| !v.trim().is_empty())
                .ok_or(WebhookError::MissingHeader(name))
        };
        Ok(WebhookHeaders {
            id: read(HEADER_ID)?,
            timestamp: read(HEADER_TIMESTAMP)?,
            signature: read(HEADER_SIGNATURE)?,
        })
    }
}

/// Verifies deliveries against an endpoint's secrets and reads them as [`Event`]s.
///
/// Give it the secret from [`CreatedWebhookEndpoint::secret`](crate::CreatedWebhookEndpoint)
/// (and, while rotating, the new one too: a delivery verifies when any secret matches).
///
/// ```
/// use checkout_client::{WebhookHeaders, WebhookVerifier, WebhookError};
///
/// let verifier = WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
/// let headers = WebhookHeaders {
///     id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
///     timestamp: "1614265330",
///     signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
/// };
/// let body = br#"{"test": 2432232314}"#;
/// assert_eq!(verifier.verify_signature_at(&headers, body, 1614265330), Ok(()));
/// assert_eq!(
///     verifier.verify_signature_at(&headers, b"{}", 1614265330),
///     Err(WebhookError::NoMatchingSignature)
/// );
/// # Ok::<(), WebhookError>(())
/// ```
#[derive(Clone)]
pub struct WebhookVerifier {
    keys: Vec<hmac::Key>,
    tolerance: Duration,
}

impl fmt::Debug for WebhookVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookVerifier")
            .field("secrets", &self.keys.len())
            .field("tolerance", &self.tolerance)
            .finish()
    }
}

impl WebhookVerifier {
    /// A verifier of one secret (`whsec_...`).
    pub fn new(secret: &str) -> Result<WebhookVerifier, WebhookError> {
        WebhookVerifier::with_secrets([secret])
    }

    /// A verifier that accepts a signature under any of `secrets` (during a rotation).
    pub fn with_secrets<I, S>(secrets: I) -> Result<WebhookVerifier, WebhookError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let keys = secrets
            .into_iter()
            .map(|secret| {
                let encoded = secret
                    .as_ref()
                    .trim()
                    .strip_prefix(SECRET_PREFIX)
                    .ok_or(WebhookError::InvalidSecret)?;
                let key = LENIENT_BASE64
                    .decode(encoded)
                    .map_err(|_| WebhookError::InvalidSecret)?;
                if key.is_empty() {
                    return Err(WebhookError::InvalidSecret);
                }
                Ok(hmac::Key::new(hmac::HMAC_SHA256, &key))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if keys.is_empty() {
            return Err(WebhookError::InvalidSecret);
        }
        Ok(WebhookVerifier {
            keys,
            tolerance: DEFAULT_TOLERANCE,
        })
    }

    /// How far the timestamp may be from this machine's clock (default 5 minutes).
    pub fn tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Verifies a delivery's raw `body` and `headers` now, and reads the event.
    pub fn verify(&self, headers: &WebhookHeaders<'_>, body: &[u8]) -> Result<Event, WebhookError> {
        self.verify_signature(headers, body)?;
        Event::from_json(body).map_err(|e| WebhookError::InvalidBody(e.to_string()))
    }

    /// Verifies a delivery's raw `body` and `headers` now, without reading the body.
    pub fn verify_signature(
        &self,
        headers: &WebhookHeaders<'_>,
        body: &[u8],
    ) -> Result<(), WebhookError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        self.verify_signature_at(headers, body, now)
    }

    /// Verifies as [`verify_signature`](Self::verify_signature) at `now` (unix seconds).
    pub fn verify_signature_at(
        &self,
        headers: &WebhookHeaders<'_>,
        body: &[u8],
        now: i64,
    ) -> Result<(), WebhookError> {
        if headers.id.is_empty() {
            return Err(WebhookError::MissingHeader(HEADER_ID));
        }
        if headers.signature.is_empty() {
            return Err(WebhookError::MissingHeader(HEADER_SIGNATURE));
        }
        let timestamp: i64 = headers
            .timestamp
            .trim()
            .parse()
            .map_err(|_| WebhookError::InvalidTimestamp)?;
        let tolerance = i64::try_from(self.tolerance.as_secs()).unwrap_or(i64::MAX);
        if timestamp < now.saturating_sub(tolerance) {
            return Err(WebhookError::TooOld);
        }
        if timestamp > now.saturating_add(tolerance) {
            return Err(WebhookError::TooNew);
        }
        let mut content = Vec::with_capacity(headers.id.len() + 24 + body.len());
        content.extend_from_slice(headers.id.as_bytes());
        content.push(b'.');
        content.extend_from_slice(timestamp.to_string().as_bytes());
        content.push(b'.');
        content.extend_from_slice(body);
        let matches = headers.signature.split(' ').any(|entry| {
            let Some(("v1", encoded)) = entry.split_once(',') else {
                return false;
            };
            let Ok(tag) = STANDARD.decode(encoded) else {
                return false;
            };
            self.keys
                .iter()
                .any(|key| hmac::verify(key, &content, &tag).is_ok())
        });
        if matches {
            Ok(())
        } else {
            Err(WebhookError::NoMatchingSignature)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector the Standard Webhooks libraries share.
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TS: i64 = 1614265330;
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn headers<'a>(id: &'a str, ts: &'a str, sig: &'a str) -> WebhookHeaders<'a> {
        WebhookHeaders {
            id,
            timestamp: ts,
            signature: sig,
        }
    }

    fn sign(secret: &str, id: &str, ts: i64, body: &[u8]) -> String {
        let key = LENIENT_BASE64
            .decode(secret.strip_prefix(SECRET_PREFIX).unwrap())
            .unwrap();
        let key = hmac::Key::new(hmac::HMAC_SHA256, &key);
        let mut content = format!("{id}.{ts}.").into_bytes();
        content.extend_from_slice(body);
        format!(
            "v1,{}",
            STANDARD.encode(hmac::sign(&key, &content).as_ref())
        )
    }

    #[test]
    fn the_shared_vector_verifies_and_its_mutations_do_not() {
        let v = WebhookVerifier::new(SECRET).unwrap();
        let ts = TS.to_string();
        assert_eq!(sign(SECRET, ID, TS, BODY), SIGNATURE);
        assert_eq!(
            v.verify_signature_at(&headers(ID, &ts, SIGNATURE), BODY, TS),
            Ok(())
        );
        for bad in [
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=",
            "v1,dawfeoifkpqwoekfpqoekf",
            "v1,",
            "v1",
            "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
        ] {
            assert_eq!(
                v.verify_signature_at(&headers(ID, &ts, bad), BODY, TS),
                Err(WebhookError::NoMatchingSignature),
                "{bad}"
            );
        }
        assert!(v
            .verify_signature_at(&headers(ID, &ts, SIGNATURE), br#"{"test":2432232314}"#, TS)
            .is_err());
        assert!(v
            .verify_signature_at(&headers("msg_other", &ts, SIGNATURE), BODY, TS)
            .is_err());
        assert_eq!(
            v.verify_signature_at(&headers(ID, "soon", SIGNATURE), BODY, TS),
            Err(WebhookError::InvalidTimestamp)
        );
        assert_eq!(
            v.verify_signature_at(&headers("", &ts, SIGNATURE), BODY, TS),
            Err(WebhookError::MissingHeader(HEADER_ID))
        );
    }

    #[test]
    fn any_v1_entry_under_any_secret_verifies() {
        let other = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
        let both = format!("{} {}", sign(other, ID, TS, BODY), SIGNATURE);
        let ts = TS.to_string();
        // One secret, two entries (the service signs with the old and the new secret).
        let old_only = WebhookVerifier::new(SECRET).unwrap();
        assert_eq!(
            old_only.verify_signature_at(&headers(ID, &ts, &both), BODY, TS),
            Ok(())
        );
        // Two secrets, one entry.
        let rotating = WebhookVerifier::with_secrets([other, SECRET]).unwrap();
        assert_eq!(
            rotating.verify_signature_at(&headers(ID, &ts, SIGNATURE), BODY, TS),
            Ok(())
        );
        let stranger = WebhookVerifier::new(other).unwrap();
        assert_eq!(
            stranger.verify_signature_at(&headers(ID, &ts, SIGNATURE), BODY, TS),
            Err(WebhookError::NoMatchingSignature)
        );
    }

    #[test]
    fn timestamps_beyond_the_tolerance_are_refused() {
        let v = WebhookVerifier::new(SECRET).unwrap();
        let now = 1_700_000_000;
        for (ts, expected) in [
            (now - 301, Err(WebhookError::TooOld)),
            (now - 300, Ok(())),
            (now + 300, Ok(())),
            (now + 301, Err(WebhookError::TooNew)),
        ] {
            let sig = sign(SECRET, ID, ts, BODY);
            let text = ts.to_string();
            assert_eq!(
                v.verify_signature_at(&headers(ID, &text, &sig), BODY, now),
                expected
            );
        }
        let strict = WebhookVerifier::new(SECRET)
            .unwrap()
            .tolerance(Duration::from_secs(10));
        let sig = sign(SECRET, ID, now - 11, BODY);
        let text = (now - 11).to_string();
        assert_eq!(
            strict.verify_signature_at(&headers(ID, &text, &sig), BODY, now),
            Err(WebhookError::TooOld)
        );
    }

    #[test]
    fn secrets_are_checked_and_never_printed() {
        for bad in [
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_",
            "whsec_not base64!",
        ] {
            assert_eq!(
                WebhookVerifier::new(bad).unwrap_err(),
                WebhookError::InvalidSecret
            );
        }
        assert!(WebhookVerifier::with_secrets(Vec::<String>::new()).is_err());
        // Padded or not.
        assert!(WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr==").is_ok());
        assert!(WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr").is_ok());
        let printed = format!("{:?}", WebhookVerifier::new(SECRET).unwrap());
        assert!(!printed.contains("MfKQ9r8"), "{printed}");
    }

    #[test]
    fn a_verified_body_is_read_as_an_event_of_any_type() {
        let body = br#"{"id":"6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55","type":"payment.something_new",
            "timestamp":"2026-11-23T11:32:10Z","data":{"checkoutSessionId":"9b2f6c1e",
            "state":"Successful","stateCode":1,"sessionType":"IntegratedCheckout",
            "transactionReferenceNumber":"ORDER-1","internalTransactionReferenceNumber":"IN-1",
            "terminalNumber":"SANDBOX-001","totalTransactionAmount":25.50,"currencyCode":"USD",
            "creationDateTime":"2026-11-23T11:30:00Z","lastUpdateDateTime":"2026-11-23T11:32:10Z",
            "expirationDateTime":"2026-11-23T12:30:00Z","capturedAmount":25.50,
            "refundedAmount":0.00,"attempts":[],"disputes":[]}}"#;
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let sig = sign(SECRET, "evt", now, body);
        let text = now.to_string();
        let event = WebhookVerifier::new(SECRET)
            .unwrap()
            .verify(&headers("evt", &text, &sig), body)
            .unwrap();
        assert_eq!(
            event.kind,
            crate::EventType::Other("payment.something_new".into())
        );
        assert_eq!(event.data.total_transaction_amount.to_string(), "25.50");
        assert_eq!(event.data.state, crate::PaymentState::Successful);
        let sig = sign(SECRET, "evt", now, b"[]");
        assert!(matches!(
            WebhookVerifier::new(SECRET)
                .unwrap()
                .verify(&headers("evt", &text, &sig), b"[]"),
            Err(WebhookError::InvalidBody(_))
        ));
    }
}
