//! Deliveries to a real receiver on loopback that verifies each one with a third-party Standard
//! Webhooks library: `scripts/webhook_receiver.py` with the `standardwebhooks` package from
//! PyPI (installed by `scripts/webhook-receiver.sh`). The receiver writes one JSON line per
//! request (headers, body, the library's verdict per secret), which these tests read.
//!
//! The interpreter is `WEBHOOK_RECEIVER_PYTHON`; without it the tests run the install script,
//! and only when that fails (no Python, no PyPI) do they skip, saying so on stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use std::path::PathBuf;
use std::time::Duration;

use checkout_webhooks::testing::Receiver;
use checkout_webhooks::{
    AddressKind, DeliveryError, DeliveryReport, Environment, UrlError, UrlPolicy, WebhookSecret,
    WebhookSender,
};
use serde_json::Value;
use url::Url;

/// A receiver verifying with each of `secrets`; `None` when the tests are skipped.
fn receiver(secrets: &[&WebhookSecret]) -> Option<Receiver> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("webhook-receiver");
    let secrets: Vec<String> = secrets.iter().map(|s| s.expose_secret()).collect();
    Receiver::start(&dir, &secrets)
}

/// The one request `receiver` received with `webhook-id: id`.
fn only_record(receiver: &Receiver, id: &str) -> Value {
    let mut found: Vec<Value> = receiver
        .requests()
        .into_iter()
        .filter(|r| r["headers"]["webhook-id"] == id)
        .collect();
    assert_eq!(found.len(), 1, "requests with id {id}: {found:?}");
    found.remove(0)
}

fn sandbox_sender(timeout: Duration) -> WebhookSender {
    WebhookSender::new(UrlPolicy::new(Environment::Sandbox), timeout)
}

fn new_secret() -> WebhookSecret {
    WebhookSecret::generate().expect("randomness")
}

/// A body like the service's events: compact JSON with a non-ASCII description, plus a space
/// inside a string and an escaped slash, so that any re-serialisation would break the signature.
fn event_body(id: &str) -> Vec<u8> {
    format!(
        r#"{{"id":"{id}","type":"payment.succeeded","timestamp":"2026-03-01T10:00:00Z","data":{{"checkoutSessionId":"{id}","state":1,"generalPurchaseDescription":"Taza azul — café ☕","url":"https:\/\/merchant.example\/a b"}}}}"#
    )
    .into_bytes()
}

/// Neither the secrets' text, nor their base64, nor the keys in hex appear in the report.
fn assert_no_secret(report: &DeliveryReport, secrets: &[&WebhookSecret]) {
    let texts = [
        format!("{report}"),
        format!("{report:?}"),
        report.error().map(|e| e.to_string()).unwrap_or_default(),
    ];
    for secret in secrets {
        let whsec = secret.expose_secret();
        let hex: String = secret
            .expose_key()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let bytes_debug = format!("{:?}", secret.expose_key());
        for text in &texts {
            assert!(!text.contains(&whsec), "secret in {text}");
            assert!(!text.contains(&whsec["whsec_".len()..]), "secret in {text}");
            assert!(!text.contains(&hex), "key in {text}");
            assert!(!text.contains(&bytes_debug), "key in {text}");
        }
    }
}

fn verified(record: &Value) -> Vec<bool> {
    record["verified"]
        .as_array()
        .expect("verified")
        .iter()
        .map(|v| v.as_bool().expect("bool"))
        .collect()
}

#[tokio::test]
async fn the_library_verifies_a_delivery() {
    let secret = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let id = "6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55";
    let body = event_body(id);
    let report = sandbox_sender(Duration::from_secs(10))
        .deliver(
            &receiver.url("/ok"),
            id,
            &body,
            std::slice::from_ref(&secret),
        )
        .await;
    assert!(report.delivered(), "{report}");
    assert_eq!(report.status(), Some(200));
    // The receiver is on loopback: not a byte of its answer is kept.
    assert_eq!(report.body_excerpt(), None);
    assert!(report.error().is_none());

    let record = only_record(&receiver, id);
    assert_eq!(verified(&record), [true], "{record}");
    assert_eq!(record["method"], "POST");
    assert_eq!(record["path"], "/ok");
    assert_eq!(
        record["body"].as_str().expect("body").as_bytes(),
        &body[..],
        "the exact bytes arrive"
    );
    let headers = &record["headers"];
    assert_eq!(
        headers["webhook-timestamp"],
        report.attempted_at.unix_timestamp().to_string()
    );
    assert_eq!(headers["content-type"], "application/json");
    let signature = headers["webhook-signature"].as_str().expect("signature");
    assert_eq!(signature.split(' ').count(), 1);
    assert!(signature.starts_with("v1,"));
    assert_no_secret(&report, &[&secret]);
}

#[tokio::test]
async fn with_two_secrets_there_are_two_entries_and_the_library_accepts_either() {
    let old = new_secret();
    let new = new_secret();
    let unrelated = new_secret();
    // The receiver verifies each request with each of the three secrets, separately.
    let Some(receiver) = receiver(&[&old, &new, &unrelated]) else {
        return;
    };
    let sender = sandbox_sender(Duration::from_secs(10));
    let url = receiver.url("/ok");

    // Rotation: both active secrets sign.
    let report = sender
        .deliver(
            &url,
            "evt_both",
            &event_body("evt_both"),
            &[new.clone(), old.clone()],
        )
        .await;
    assert!(report.delivered(), "{report}");
    let record = only_record(&receiver, "evt_both");
    let signature = record["headers"]["webhook-signature"]
        .as_str()
        .expect("signature");
    let entries: Vec<&str> = signature.split(' ').collect();
    assert_eq!(entries.len(), 2, "{signature}");
    assert!(entries.iter().all(|e| e.starts_with("v1,")), "{signature}");
    assert_eq!(
        verified(&record),
        [true, true, false],
        "a merchant holding either secret verifies it: {record}"
    );

    // A message signed with the old secret only, then the new one only.
    for (id, secrets, expected) in [
        ("evt_old", vec![old.clone()], [true, false, false]),
        ("evt_new", vec![new.clone()], [false, true, false]),
    ] {
        let report = sender.deliver(&url, id, &event_body(id), &secrets).await;
        assert!(report.delivered(), "{id}: {report}");
        assert_eq!(verified(&only_record(&receiver, id)), expected, "{id}");
        assert_no_secret(&report, &[&old, &new, &unrelated]);
    }
}

#[tokio::test]
async fn the_library_rejects_a_tampered_body() {
    let secret = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let signed = event_body("evt_tampered");
    let sent = String::from_utf8(signed.clone())
        .expect("utf-8")
        .replace(r#""state":1"#, r#""state":2"#)
        .into_bytes();
    assert_ne!(signed, sent);
    let report = sandbox_sender(Duration::from_secs(10))
        .deliver_tampered(
            &receiver.url("/ok"),
            "evt_tampered",
            &sent,
            &signed,
            std::slice::from_ref(&secret),
        )
        .await;
    let record = only_record(&receiver, "evt_tampered");
    assert_eq!(verified(&record), [false], "{record}");
    assert!(
        record["errors"][0]
            .as_str()
            .expect("an error")
            .contains("No matching signature"),
        "{record}"
    );
    // The receiver, as a merchant would, refuses it.
    assert_eq!(report.status(), Some(400), "{report}");
    assert!(!report.delivered());
    assert_no_secret(&report, &[&secret]);
}

#[tokio::test]
async fn a_500_is_not_delivered_and_its_status_is_reported() {
    let secret = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let report = sandbox_sender(Duration::from_secs(10))
        .deliver(
            &receiver.url("/fail"),
            "evt_500",
            &event_body("evt_500"),
            std::slice::from_ref(&secret),
        )
        .await;
    assert!(!report.delivered());
    assert_eq!(report.status(), Some(500), "{report}");
    assert_eq!(
        report.body_excerpt(),
        None,
        "a loopback answer's body is not kept"
    );
    assert_eq!(verified(&only_record(&receiver, "evt_500")), [true]);
    assert_no_secret(&report, &[&secret]);
}

#[tokio::test]
async fn a_hanging_receiver_is_a_timeout_within_about_the_timeout() {
    let secret = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let timeout = Duration::from_secs(1);
    let report = sandbox_sender(timeout)
        .deliver(
            &receiver.url("/hang"),
            "evt_hang",
            &event_body("evt_hang"),
            std::slice::from_ref(&secret),
        )
        .await;
    assert!(!report.delivered());
    assert_eq!(report.status(), None);
    assert_eq!(report.error(), Some(&DeliveryError::Timeout(timeout)));
    assert!(
        report.duration >= timeout && report.duration < timeout + Duration::from_millis(1500),
        "{report}"
    );
    assert_eq!(verified(&only_record(&receiver, "evt_hang")), [true]);
    assert_no_secret(&report, &[&secret]);
}

#[tokio::test]
async fn a_closed_connection_is_a_network_error() {
    let secret = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let report = sandbox_sender(Duration::from_secs(10))
        .deliver(
            &receiver.url("/close"),
            "evt_close",
            &event_body("evt_close"),
            std::slice::from_ref(&secret),
        )
        .await;
    assert!(!report.delivered());
    assert_eq!(report.status(), None);
    assert!(
        matches!(report.error(), Some(DeliveryError::Network(_))),
        "{report}"
    );
    assert!(report.duration < Duration::from_secs(5), "{report}");
    assert_eq!(verified(&only_record(&receiver, "evt_close")), [true]);
    assert_no_secret(&report, &[&secret]);
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let secret = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let report = sandbox_sender(Duration::from_secs(10))
        .deliver(
            &receiver.url("/redirect"),
            "evt_302",
            &event_body("evt_302"),
            std::slice::from_ref(&secret),
        )
        .await;
    assert!(!report.delivered());
    assert_eq!(report.status(), Some(302), "{report}");
    assert_eq!(
        report.body_excerpt(),
        None,
        "a loopback answer's body is not kept"
    );
    // Exactly one request reached the receiver: the redirect's target (/ok) was not asked.
    let records = receiver.requests();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["path"], "/redirect");
    assert_no_secret(&report, &[&secret]);
}

#[tokio::test]
async fn a_localhost_url_reaches_the_receiver_in_the_sandbox() {
    let secret = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let url = Url::parse(&format!("http://localhost:{}/ok", receiver.port())).expect("url");
    let report = sandbox_sender(Duration::from_secs(10))
        .deliver(&url, "evt_localhost", b"{}", std::slice::from_ref(&secret))
        .await;
    assert!(report.delivered(), "{report}");
    assert_eq!(verified(&only_record(&receiver, "evt_localhost")), [true]);
}

#[tokio::test]
async fn production_rules_keep_the_loopback_receiver_out_of_reach() {
    let secret = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let sender = WebhookSender::new(
        UrlPolicy::new(Environment::Production),
        Duration::from_secs(10),
    );
    let port = receiver.port();
    for (url, expected) in [
        (format!("http://127.0.0.1:{port}/ok"), UrlError::NotHttps),
        (format!("http://localhost:{port}/ok"), UrlError::NotHttps),
        (
            format!("https://127.0.0.1:{port}/ok"),
            UrlError::ForbiddenAddress {
                address: "127.0.0.1".parse().expect("ip"),
                kind: AddressKind::Loopback,
            },
        ),
        (
            format!("https://[::ffff:127.0.0.1]:{port}/ok"),
            UrlError::ForbiddenAddress {
                address: "::ffff:127.0.0.1".parse().expect("ip"),
                kind: AddressKind::Loopback,
            },
        ),
    ] {
        let url = Url::parse(&url).expect("url");
        let report = sender
            .deliver(&url, "evt_prod", b"{}", std::slice::from_ref(&secret))
            .await;
        assert_eq!(
            report.error(),
            Some(&DeliveryError::Refused(expected)),
            "{url}"
        );
    }
    // localhost over https resolves to loopback only: refused after the lookup.
    let url = Url::parse(&format!("https://localhost:{port}/ok")).expect("url");
    let report = sender
        .deliver(&url, "evt_prod", b"{}", std::slice::from_ref(&secret))
        .await;
    assert!(
        matches!(
            report.error(),
            Some(DeliveryError::Refused(UrlError::ForbiddenAddress {
                kind: AddressKind::Loopback,
                ..
            }))
        ),
        "{report}"
    );
    assert!(
        receiver.requests().is_empty(),
        "nothing reached the receiver"
    );
}

#[tokio::test]
async fn no_report_or_error_holds_a_secret() {
    let secret = new_secret();
    let other = new_secret();
    let Some(receiver) = receiver(&[&secret]) else {
        return;
    };
    let sender = sandbox_sender(Duration::from_millis(500));
    let secrets = [secret.clone(), other.clone()];
    let mut reports = Vec::new();
    for (n, path) in ["/ok", "/fail", "/hang", "/close", "/redirect"]
        .into_iter()
        .enumerate()
    {
        let id = format!("evt_secret_{n}");
        reports.push(
            sender
                .deliver(&receiver.url(path), &id, &event_body(&id), &secrets)
                .await,
        );
    }
    // Not sent: refused, unsignable, nothing listening.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
        l.local_addr().expect("addr").port()
    };
    let refused = Url::parse("http://169.254.169.254/").expect("url");
    let nobody = Url::parse(&format!("http://127.0.0.1:{closed}/")).expect("url");
    reports.push(sender.deliver(&refused, "evt_x", b"{}", &secrets).await);
    reports.push(sender.deliver(&nobody, "evt.x", b"{}", &secrets).await);
    reports.push(sender.deliver(&nobody, "evt_x", b"{}", &secrets).await);
    let kinds: Vec<String> = reports
        .iter()
        .map(|r| match (r.status(), r.error()) {
            (Some(status), _) => status.to_string(),
            (None, Some(e)) => format!("{e:?}").split('(').next().unwrap_or("").to_owned(),
            (None, None) => "none".to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        ["200", "500", "Timeout", "Network", "302", "Refused", "Unsigned", "Connect"],
        "{reports:#?}"
    );
    for report in &reports {
        eprintln!("{report}");
        assert_no_secret(report, &[&secret, &other]);
    }
}
