//! The payer's receipt (issue 33 item 4) through the real binary: the result page's receipt,
//! and the e-mail receipt sent to a real SMTP server (`aiosmtpd`) the test starts. Each paid
//! session with the payer's address gets exactly one mail, in its language, with both parts
//! and nothing of the card but its brand and last four digits; a server that refuses and then
//! accepts gets it once, after a retry; a session without an address gets none; with no SMTP
//! server the mail stays in the outbox that `checkout mail list` shows.

use std::time::Duration;

use serde_json::json;

use crate::link_body;
use crate::operator::{checkout, stdout};
use crate::support::payer::CardForm;
use crate::support::server::{artifacts_dir, Mode};
use crate::support::smtp::{Received, SmtpReceiver};
use crate::support::TestServer;

const APPROVED: &str = "4242424242424242";
const CVV: &str = "918";

/// A sandbox server sending receipts to `smtp`, retrying after about a second.
async fn server_with(label: &str, smtp: &SmtpReceiver) -> TestServer {
    let port = smtp.port.to_string();
    TestServer::start(
        label,
        Mode::Sandbox,
        &[
            ("CHECKOUT__MAIL__SMTP_HOST", "127.0.0.1"),
            ("CHECKOUT__MAIL__SMTP_PORT", port.as_str()),
            ("CHECKOUT__MAIL__SMTP_TLS", "none"),
            ("CHECKOUT__MAIL__FROM", "Shop receipts <receipts@shop.test>"),
            ("CHECKOUT__MAIL__POLL_MS", "200"),
            ("CHECKOUT__MAIL__TIMEOUT_MS", "5000"),
            ("CHECKOUT__MAIL__SCHEDULE_SECONDS", "1,5,30"),
        ],
    )
    .await
}

/// Creates a payment link with `body`, pays it with the approved card on its own page, and
/// returns (session id, internal reference, the result page after the post).
async fn pay_link(server: &TestServer, body: serde_json::Value) -> (String, String, String) {
    let token = server.token().await;
    let reply = server
        .post("/pay/api/generate-payment-link", Some(&token), &body)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.str("checkoutSessionId").to_owned();
    let internal = reply.str("internalTransactionReferenceNumber").to_owned();
    let form = CardForm::try_open_at(&server.http, &server.base, &format!("/pay/link/{id}"), &id)
        .await
        .expect("the link's card form");
    let (status, _, result) = form.submit_and_read(&server.http, APPROVED).await;
    assert_eq!(status, 303, "{result}");
    (id, internal, result)
}

/// The card's number and code are nowhere in the message, raw or decoded.
fn assert_no_card_data(mail: &Received) {
    let spaced = "4242 4242 4242 4242";
    for text in std::iter::once(mail.raw.as_str()).chain(mail.parts.iter().map(|(_, t)| t.as_str()))
    {
        assert!(!text.contains(APPROVED), "the card number is in {text}");
        assert!(!text.contains(spaced), "the card number is in {text}");
    }
    for (_, text) in &mail.parts {
        assert!(
            !crate::support::card_data::contains_token(text, CVV),
            "the CVV is in {text}"
        );
    }
}

/// Waits until no more mails arrive for a few worker rounds, then returns them all.
async fn settled(smtp: &SmtpReceiver) -> Vec<Received> {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    smtp.received()
}

#[tokio::test]
async fn each_paid_session_with_an_address_gets_one_receipt_in_its_language() {
    let dir = artifacts_dir("receipts-smtp");
    let smtp = SmtpReceiver::start(&dir, "ok");
    let server = server_with("receipts", &smtp).await;

    // A payment link in Spanish: 15000 CRC, "Invoice 77" (link_body).
    let ana = "ana.perez@correo.example.cr";
    let mut es = link_body("RECEIPT-ES");
    es["userEmail"] = json!(ana);
    let (es_id, es_internal, page) = pay_link(&server, es).await;
    // The result page is the receipt.
    for shown in [
        "id=\"receipt\"",
        "Recibo",
        "Visa terminada en 4242",
        es_internal.as_str(),
        es_id.as_str(),
        "15.000,00\u{a0}₡ CRC",
        "UTC</time>",
    ] {
        assert!(
            page.contains(shown),
            "the receipt page shows {shown}: {page}"
        );
    }
    assert!(!page.contains(APPROVED));

    // An integrated checkout in English (start_body: 25.50 USD, "Order 1001").
    let token = server.token().await;
    let reply = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &crate::start_body("RECEIPT-EN"),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let en_id = reply.str("checkoutSessionId").to_owned();
    let en_internal = reply.str("internalTransactionReferenceNumber").to_owned();
    let form = CardForm::open(&server.http, &server.base, &en_id).await;
    assert_eq!(form.submit(&server.http, APPROVED).await.status(), 303);

    // A checkout without the payer's address: no receipt.
    let silent = server.paid_checkout("RECEIPT-NONE", APPROVED).await;

    let received = smtp
        .wait_for(Duration::from_secs(30), "both receipts", |m| {
            m.iter().filter(|m| m.accepted).count() >= 2
        })
        .await;
    assert_eq!(received.len(), 2, "{received:?}");
    let received = settled(&smtp).await;
    assert_eq!(received.len(), 2, "one mail per paid session: {received:?}");

    let es_mails = smtp.to(ana);
    let es_mail = &es_mails[0];
    assert!(
        es_mail.subject.starts_with("Recibo de su pago a"),
        "{}",
        es_mail.subject
    );
    assert!(
        es_mail.message_id.contains(&es_id),
        "{}",
        es_mail.message_id
    );
    for part in ["text/plain", "text/html"] {
        let text = es_mail.part(part);
        for shown in [
            "Pago aprobado",
            "15.000,00 CRC",
            "Invoice 77",
            "Visa terminada en 4242",
            "Número de transacción",
            es_internal.as_str(),
            es_id.as_str(),
            " UTC",
        ] {
            assert!(text.contains(shown), "{part} shows {shown}: {text}");
        }
    }
    assert!(es_mail.part("text/html").contains("<html lang=\"es\">"));
    assert_no_card_data(es_mail);

    let en_mails = smtp.to("payer@example.com");
    let en_mail = &en_mails[0];
    assert!(
        en_mail.subject.starts_with("Receipt for your payment to"),
        "{}",
        en_mail.subject
    );
    for part in ["text/plain", "text/html"] {
        let text = en_mail.part(part);
        for shown in [
            "Payment approved",
            "25.50 USD",
            "Order 1001",
            "Visa ending in 4242",
            "Transaction number",
            en_internal.as_str(),
            en_id.as_str(),
        ] {
            assert!(text.contains(shown), "{part} shows {shown}: {text}");
        }
    }
    assert_no_card_data(en_mail);

    // The operator sees both as sent, and nothing for the session without an address.
    let listed = stdout(&checkout(
        &server,
        &["mail", "list", "--terminal", server.terminal.as_str()],
    ));
    assert!(
        listed.contains(&es_id) && listed.contains(&en_id),
        "{listed}"
    );
    assert!(!listed.contains(&silent), "{listed}");
    assert_eq!(listed.matches("\tsent\t").count(), 2, "{listed}");
    assert!(!listed.contains(APPROVED), "{listed}");
}

#[tokio::test]
async fn a_server_that_refuses_then_accepts_gets_the_receipt_once_after_a_retry() {
    let dir = artifacts_dir("receipts-retry-smtp");
    let smtp = SmtpReceiver::start(&dir, "refuse");
    let server = server_with("receipts-retry", &smtp).await;
    let (id, _, _) = pay_link(&server, link_body("RECEIPT-RETRY")).await;

    smtp.wait_for(Duration::from_secs(30), "a refused sending", |m| {
        m.iter().any(|m| !m.accepted)
    })
    .await;
    // The outbox records the refusal and keeps the mail for a later sending.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let listed = stdout(&checkout(&server, &["mail", "list"]));
        if listed.contains("\tpending\t") && !listed.contains("\tpending\t0\t") {
            assert!(listed.contains("451"), "the refusal is kept: {listed}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not retried: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    smtp.set_mode("ok");

    smtp.wait_for(Duration::from_secs(30), "the receipt", |m| {
        m.iter().any(|m| m.accepted)
    })
    .await;
    let received = settled(&smtp).await;
    let accepted: Vec<&Received> = received.iter().filter(|m| m.accepted).collect();
    assert_eq!(accepted.len(), 1, "accepted once: {received:?}");
    assert!(accepted[0].message_id.contains(&id));
    // Every sending was the same message.
    assert!(received
        .iter()
        .all(|m| m.message_id == accepted[0].message_id));
    let listed = stdout(&checkout(&server, &["mail", "list"]));
    assert_eq!(listed.matches("\tsent\t").count(), 1, "{listed}");
}

#[tokio::test]
async fn with_no_smtp_server_the_receipt_stays_in_the_outbox_for_the_operator() {
    let server = TestServer::sandbox("receipts-outbox").await;
    let (id, internal, _) = pay_link(&server, link_body("RECEIPT-KEPT")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let listed = stdout(&checkout(&server, &["mail", "list"]));
    let line = listed
        .lines()
        .find(|l| l.contains(&id))
        .unwrap_or_else(|| panic!("the receipt is kept: {listed}"));
    for shown in [
        "\tpending\t0\t",
        "payer@example.com",
        internal.as_str(),
        "visa 4242",
        "Recibo de su pago a",
    ] {
        assert!(line.contains(shown), "{shown} in {line}");
    }
    let other = stdout(&checkout(
        &server,
        &["mail", "list", "--terminal", "T-OTHER"],
    ));
    assert!(!other.contains(&id), "{other}");
}
