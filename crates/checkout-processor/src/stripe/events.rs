//! Stripe's webhooks as processor events: the `Stripe-Signature` scheme verified
//! (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, any number of `v1`, other schemes
//! such as test mode's `v0` ignored), a timestamp tolerance against replays, and two secrets
//! at once so that an endpoint secret can be rolled. Only the event's id, type and object id
//! (and the ledger id the adapter put in the object's metadata) are read: the service reads
//! the object itself from the API.

use std::fmt;

use checkout_domain::ports::{NoticeRejected, NoticeSubject, ProcessorNotice, ProcessorNotices};
use checkout_domain::values::{AttemptId, RefundId};
use ring::hmac;
use serde::Deserialize;
use time::{Duration, OffsetDateTime};

/// The header Stripe signs its deliveries in.
const SIGNATURE_HEADER: &str = "Stripe-Signature";

/// Stripe's own libraries refuse signatures older than this by default.
pub const DEFAULT_TOLERANCE: Duration = Duration::minutes(5);

/// Verifies and reads Stripe's webhook deliveries.
pub struct StripeEvents {
    keys: Vec<hmac::Key>,
    tolerance: Duration,
}

impl fmt::Debug for StripeEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StripeEvents")
            .field("secrets", &self.keys.len())
            .field("tolerance", &self.tolerance)
            .finish()
    }
}

impl StripeEvents {
    /// Verifies with every one of `secrets` (the endpoint's signing secrets, `whsec_...`: the
    /// current one, and the previous one while it is being rolled), refusing signatures
    /// further than `tolerance` from now.
    pub fn new<S: AsRef<str>>(secrets: &[S], tolerance: Duration) -> anyhow::Result<Self> {
        if secrets.is_empty() {
            anyhow::bail!("no Stripe webhook signing secret was given");
        }
        if secrets.iter().any(|s| s.as_ref().trim().is_empty()) {
            anyhow::bail!("a Stripe webhook signing secret is empty");
        }
        if tolerance <= Duration::ZERO {
            anyhow::bail!("the Stripe webhook tolerance must be greater than zero");
        }
        let keys = secrets
            .iter()
            .map(|s| hmac::Key::new(hmac::HMAC_SHA256, s.as_ref().trim().as_bytes()))
            .collect();
        Ok(StripeEvents { keys, tolerance })
    }

    /// Checks `header` against `payload` at `now`.
    fn verify(
        &self,
        payload: &[u8],
        header: &str,
        now: OffsetDateTime,
    ) -> Result<(), NoticeRejected> {
        let mut timestamp = None;
        let mut signatures = Vec::new();
        for part in header.split(',') {
            match part.trim().split_once('=') {
                Some(("t", t)) if timestamp.is_none() => timestamp = Some(t),
                Some(("v1", hex)) => signatures.extend(decode_hex(hex)),
                _ => {}
            }
        }
        let Some(t) = timestamp else {
            return Err(NoticeRejected::BadSignature);
        };
        let seconds: i64 = t.parse().map_err(|_| NoticeRejected::BadSignature)?;
        let mut signed = Vec::with_capacity(t.len() + 1 + payload.len());
        signed.extend_from_slice(t.as_bytes());
        signed.push(b'.');
        signed.extend_from_slice(payload);
        let matches = self.keys.iter().any(|key| {
            signatures
                .iter()
                .any(|signature| hmac::verify(key, &signed, signature).is_ok())
        });
        if !matches {
            return Err(NoticeRejected::BadSignature);
        }
        let signed_at = OffsetDateTime::from_unix_timestamp(seconds)
            .map_err(|_| NoticeRejected::BadSignature)?;
        if (now - signed_at).abs() > self.tolerance {
            return Err(NoticeRejected::Stale);
        }
        Ok(())
    }
}

/// The few fields of an Event the service reads.
#[derive(Deserialize)]
struct Event {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    data: EventData,
}

#[derive(Deserialize)]
struct EventData {
    object: EventObject,
}

#[derive(Deserialize)]
struct EventObject {
    id: String,
    #[serde(default)]
    metadata: Metadata,
}

/// The ledger ids the adapter sends in `metadata` (`attempt` on intents, `refund` on refunds).
#[derive(Deserialize, Default)]
struct Metadata {
    #[serde(default)]
    attempt: Option<String>,
    #[serde(default)]
    refund: Option<String>,
}

impl ProcessorNotices for StripeEvents {
    fn signature_header(&self) -> &'static str {
        SIGNATURE_HEADER
    }

    fn read(
        &self,
        payload: &[u8],
        signature: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<ProcessorNotice, NoticeRejected> {
        let header = signature.ok_or(NoticeRejected::Unsigned)?;
        self.verify(payload, header, now)?;
        let event: Event = serde_json::from_slice(payload)
            .map_err(|e| NoticeRejected::Malformed(format!("not a Stripe event: {e}")))?;
        let object = event.data.object;
        let subject = match event.kind.split_once('.').map(|(prefix, _)| prefix) {
            Some("payment_intent") => NoticeSubject::Payment {
                attempt: object.metadata.attempt.as_deref().and_then(parse_attempt),
                reference: object.id,
            },
            Some("refund") => refund_subject(object),
            Some("charge") if event.kind == "charge.refund.updated" => refund_subject(object),
            Some("charge") if event.kind.starts_with("charge.dispute.") => NoticeSubject::Dispute {
                reference: object.id,
            },
            _ => NoticeSubject::Other,
        };
        Ok(ProcessorNotice {
            id: event.id,
            kind: event.kind,
            subject,
        })
    }
}

fn refund_subject(object: EventObject) -> NoticeSubject {
    NoticeSubject::Refund {
        refund: object.metadata.refund.as_deref().and_then(parse_refund),
        reference: object.id,
    }
}

fn parse_attempt(id: &str) -> Option<AttemptId> {
    uuid::Uuid::parse_str(id).ok().map(AttemptId::from_uuid)
}

fn parse_refund(id: &str) -> Option<RefundId> {
    uuid::Uuid::parse_str(id).ok().map(RefundId::from_uuid)
}

/// Lower- or upper-case hex, `None` when it is not hex.
fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_test_secret";
    const BODY: &[u8] =
        br#"{"id":"evt_1","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","object":"payment_intent","metadata":{"attempt":"0b6c3a4e-6d1e-4c2b-9f5e-1a2b3c4d5e6f"}}}}"#;

    fn sign(secret: &str, t: i64, body: &[u8]) -> String {
        let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
        let mut signed = format!("{t}.").into_bytes();
        signed.extend_from_slice(body);
        let tag = hmac::sign(&key, &signed);
        tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn at(t: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(t).unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }

    fn events(secrets: &[&str]) -> StripeEvents {
        StripeEvents::new(secrets, DEFAULT_TOLERANCE).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_signed_event_is_read_as_a_hint_about_its_object() {
        let t = 1_800_000_000;
        let header = format!("t={t},v1={},v0=00ff", sign(SECRET, t, BODY));
        let notice = events(&[SECRET]).read(BODY, Some(&header), at(t + 10));
        let Ok(notice) = notice else {
            panic!("{notice:?}")
        };
        assert_eq!(notice.id, "evt_1");
        assert_eq!(notice.kind, "payment_intent.succeeded");
        let attempt = uuid::Uuid::parse_str("0b6c3a4e-6d1e-4c2b-9f5e-1a2b3c4d5e6f").ok();
        assert_eq!(
            notice.subject,
            NoticeSubject::Payment {
                reference: "pi_1".into(),
                attempt: attempt.map(AttemptId::from_uuid),
            }
        );
    }

    #[test]
    fn either_of_two_secrets_verifies_so_a_secret_can_be_rolled() {
        let t = 1_800_000_000;
        let old = format!("t={t},v1={}", sign("whsec_old", t, BODY));
        let new = format!("t={t},v1={}", sign("whsec_new", t, BODY));
        let both = events(&["whsec_new", "whsec_old"]);
        assert!(both.read(BODY, Some(&old), at(t)).is_ok());
        assert!(both.read(BODY, Some(&new), at(t)).is_ok());
        let only_new = events(&["whsec_new"]);
        assert_eq!(
            only_new.read(BODY, Some(&old), at(t)),
            Err(NoticeRejected::BadSignature)
        );
    }

    #[test]
    fn a_bad_missing_or_altered_signature_is_refused() {
        let t = 1_800_000_000;
        let good = sign(SECRET, t, BODY);
        let e = events(&[SECRET]);
        assert_eq!(e.read(BODY, None, at(t)), Err(NoticeRejected::Unsigned));
        let cases = [
            format!("t={t},v1={}", sign("whsec_other", t, BODY)),
            format!("t={},v1={good}", t + 1),
            format!("v1={good}"),
            format!("t={t}"),
            format!("t={t},v0={good}"),
            format!("t={t},v1=zz{}", &good[2..]),
            "garbage".to_owned(),
        ];
        for header in cases {
            assert_eq!(
                e.read(BODY, Some(&header), at(t)),
                Err(NoticeRejected::BadSignature),
                "{header}"
            );
        }
        let mut altered = BODY.to_vec();
        altered[10] ^= 1;
        let header = format!("t={t},v1={good}");
        assert_eq!(
            e.read(&altered, Some(&header), at(t)),
            Err(NoticeRejected::BadSignature)
        );
    }

    #[test]
    fn a_signature_outside_the_tolerance_is_stale() {
        let t = 1_800_000_000;
        let header = format!("t={t},v1={}", sign(SECRET, t, BODY));
        let e = events(&[SECRET]);
        assert!(e.read(BODY, Some(&header), at(t + 300)).is_ok());
        assert_eq!(
            e.read(BODY, Some(&header), at(t + 301)),
            Err(NoticeRejected::Stale)
        );
        assert_eq!(
            e.read(BODY, Some(&header), at(t - 301)),
            Err(NoticeRejected::Stale)
        );
    }

    #[test]
    fn refunds_and_disputes_are_told_apart_and_other_events_are_left_alone() {
        let t = 1_800_000_000;
        let e = events(&[SECRET]);
        let read = |body: &str| {
            let header = format!("t={t},v1={}", sign(SECRET, t, body.as_bytes()));
            e.read(body.as_bytes(), Some(&header), at(t))
                .map(|n| n.subject)
        };
        let refund = read(
            r#"{"id":"evt_2","type":"refund.failed","data":{"object":{"id":"re_1","metadata":{"refund":"not-a-uuid"}}}}"#,
        );
        assert_eq!(
            refund,
            Ok(NoticeSubject::Refund {
                reference: "re_1".into(),
                refund: None
            })
        );
        let dispute = read(
            r#"{"id":"evt_3","type":"charge.dispute.closed","data":{"object":{"id":"dp_1"}}}"#,
        );
        assert_eq!(
            dispute,
            Ok(NoticeSubject::Dispute {
                reference: "dp_1".into()
            })
        );
        let other =
            read(r#"{"id":"evt_4","type":"customer.created","data":{"object":{"id":"cus_1"}}}"#);
        assert_eq!(other, Ok(NoticeSubject::Other));
        let malformed = read(r#"{"id":"evt_5"}"#);
        assert!(matches!(malformed, Err(NoticeRejected::Malformed(_))));
    }

    #[test]
    fn no_secret_no_events() {
        let none: [&str; 0] = [];
        assert!(StripeEvents::new(&none, DEFAULT_TOLERANCE).is_err());
        assert!(StripeEvents::new(&[" "], DEFAULT_TOLERANCE).is_err());
    }
}
