//! A retry after a lost answer: the SDK sends the same request again under the same
//! `Idempotency-Key`, and the server creates (or captures, or refunds) once.

use checkout_client::{CallOptions, Currency, Money, RefundState};

use crate::support::TestServer;
use crate::wire::Proxy;
use crate::{checkout, dec, pay, reference, sdk, APPROVED};

#[tokio::test]
async fn a_start_payment_whose_answer_was_lost_is_sent_again_and_creates_one_session() {
    let server = TestServer::sandbox("sdk-lost-answer").await;
    let proxy = Proxy::start(&server.base).await;
    let client = sdk(&server, &proxy.base);
    let merchant_reference = reference("LOST");
    proxy.lose_next_answer("POST", "/pay/api/start-payment");
    let created = client
        .start_payment(&checkout(&merchant_reference, "30.00"))
        .await
        .expect("the retry gets the answer");

    let sent = proxy.seen_for("POST", "/pay/api/start-payment");
    assert_eq!(sent.len(), 2, "sent, its answer lost, sent again");
    let key = sent[0].header("idempotency-key").expect("a key");
    assert_eq!(sent[1].header("idempotency-key"), Some(key));
    assert_eq!(
        sent[0].header("x-idoperacion"),
        sent[1].header("x-idoperacion")
    );
    assert_eq!(sent[0].body, sent[1].body, "the same bytes");

    // One session holds the reference, the one the retry answered with.
    let sessions = client
        .payments_by_reference(&merchant_reference)
        .await
        .unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    assert_eq!(sessions[0].checkout_session_id, created.checkout_session_id);
    assert_eq!(sessions[0].total_transaction_amount, dec("30.00"));
}

#[tokio::test]
async fn a_refund_whose_answer_was_lost_is_sent_again_and_refunds_once() {
    let server = TestServer::sandbox("sdk-lost-refund").await;
    let proxy = Proxy::start(&server.base).await;
    let client = sdk(&server, &proxy.base);
    let created = client
        .start_payment(&checkout(&reference("LOST-REFUND"), "20.00"))
        .await
        .unwrap();
    let id = created.checkout_session_id;
    pay(&server, &id, APPROVED).await;

    let path = format!("/pay/api/payment/{id}/refunds");
    proxy.lose_next_answer("POST", &path);
    let refund = client
        .with_options(CallOptions::new().idempotency_key(format!("{id}-refund-1")))
        .refund(&id, Money::new(dec("5.00"), Currency::USD).unwrap())
        .await
        .unwrap();
    assert_eq!(refund.kind, "SVC_010");
    assert_eq!(proxy.seen_for("POST", &path).len(), 2);
    for request in proxy.seen_for("POST", &path) {
        assert_eq!(
            request.header("idempotency-key"),
            Some(format!("{id}-refund-1").as_str())
        );
    }
    let refunds = client.refunds(&id).await.unwrap();
    assert_eq!(refunds.refunds.len(), 1, "{refunds:#?}");
    assert_eq!(refunds.refunds[0].state, RefundState::Succeeded);
    assert_eq!(refunds.refunded_amount, dec("5.00"));
    assert_eq!(
        refund.refund.as_ref().map(|r| r.refund_id.as_str()),
        Some(refunds.refunds[0].refund_id.as_str())
    );
}
