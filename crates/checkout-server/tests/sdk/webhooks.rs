//! Webhooks through the SDK: an endpoint registered with it, real deliveries of the server
//! to a receiver in the test verified from their raw bytes and headers, a rotated secret
//! (two signatures), the deliveries log, deletion.

use std::time::Duration;

use checkout_client::{
    CircuitState, DeliveryState, EventType, PaymentState, WebhookError, WebhookHeaders,
    WebhookVerifier,
};

use crate::support::{Mode, TestServer};
use crate::wire::{Receiver, Request};
use crate::{checkout, pay, reference, sdk, APPROVED, FAST_WEBHOOKS};

/// The delivery's three Standard Webhooks headers.
fn headers_of(request: &Request) -> WebhookHeaders<'_> {
    WebhookHeaders::from_lookup(|name| request.header(name)).expect("the three headers")
}

#[tokio::test]
async fn a_real_delivery_verifies_from_its_raw_bytes_and_reads_as_a_typed_event() {
    let server = TestServer::start("sdk-webhooks", Mode::Sandbox, FAST_WEBHOOKS).await;
    let client = sdk(&server, &server.base);
    let receiver = Receiver::start().await;
    let endpoint = client
        .create_webhook_endpoint(
            &format!("{}/hooks", receiver.base),
            Some(&[EventType::PaymentSucceeded, EventType::PaymentCancelled]),
        )
        .await
        .unwrap();
    assert!(endpoint.secret.starts_with("whsec_"));
    assert!(!format!("{endpoint:?}").contains(&endpoint.secret));
    assert_eq!(endpoint.events, ["payment.succeeded", "payment.cancelled"]);
    let listed = client.webhook_endpoints().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, endpoint.id);

    let created = client
        .start_payment(&checkout(&reference("HOOK"), "12.34"))
        .await
        .unwrap();
    let id = created.checkout_session_id;
    pay(&server, &id, APPROVED).await;

    let delivery = receiver.wait_for(&id, Duration::from_secs(30)).await;
    assert_eq!(delivery.method, "POST");
    assert_eq!(delivery.target, "/hooks");
    let headers = headers_of(&delivery);
    let verifier = WebhookVerifier::new(&endpoint.secret).unwrap();
    let event = verifier.verify(&headers, &delivery.body).expect("verified");
    assert_eq!(event.kind, EventType::PaymentSucceeded);
    assert_eq!(event.id, headers.id, "webhook-id is the event id");
    assert_eq!(event.data.checkout_session_id, id);
    assert_eq!(event.data.state, PaymentState::Successful);
    assert_eq!(event.data.captured_amount, crate::dec("12.34"));
    assert_eq!(event.data.attempts[0].card_last_four, "4242");

    // The bytes are what is signed: one byte more, another secret, an old timestamp fail.
    let mut altered = delivery.body.clone();
    altered.push(b' ');
    assert_eq!(
        verifier.verify(&headers, &altered).unwrap_err(),
        WebhookError::NoMatchingSignature
    );
    let stranger = WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    assert!(stranger.verify(&headers, &delivery.body).is_err());
    let sent_at: i64 = headers.timestamp.parse().unwrap();
    assert_eq!(
        verifier.verify_signature_at(&headers, &delivery.body, sent_at + 301),
        Err(WebhookError::TooOld)
    );

    // The deliveries log shows it delivered.
    let log = client.webhook_deliveries(&endpoint.id, None).await.unwrap();
    assert!(log.endpoint.enabled);
    assert_eq!(log.endpoint.circuit, CircuitState::Closed);
    let entry = log
        .deliveries
        .iter()
        .find(|d| d.event_id == event.id)
        .expect("logged");
    assert_eq!(entry.event_type, EventType::PaymentSucceeded);
    // The answer may be logged a moment after the receiver got the request.
    let mut state = entry.state.clone();
    for _ in 0..40 {
        if state == DeliveryState::Delivered {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let log = client.webhook_deliveries(&endpoint.id, None).await.unwrap();
        state = log
            .deliveries
            .iter()
            .find(|d| d.event_id == event.id)
            .map(|d| d.state.clone())
            .unwrap();
    }
    assert_eq!(state, DeliveryState::Delivered);

    // After a rotation each delivery carries two signatures: the old secret and the new one
    // each verify it.
    let rotated = client.rotate_webhook_secret(&endpoint.id).await.unwrap();
    assert_ne!(rotated.secret, endpoint.secret);
    let second = client
        .start_payment(&checkout(&reference("HOOK-2"), "3.00"))
        .await
        .unwrap();
    client
        .cancel_payment(&second.checkout_session_id)
        .await
        .unwrap();
    let delivery = receiver
        .wait_for(&second.checkout_session_id, Duration::from_secs(30))
        .await;
    let headers = headers_of(&delivery);
    assert_eq!(
        headers.signature.split(' ').count(),
        2,
        "{}",
        headers.signature
    );
    for secret in [&endpoint.secret, &rotated.secret] {
        let event = WebhookVerifier::new(secret)
            .unwrap()
            .verify(&headers, &delivery.body)
            .unwrap();
        assert_eq!(event.kind, EventType::PaymentCancelled);
    }

    // Deleted: listed no more.
    client.delete_webhook_endpoint(&endpoint.id).await.unwrap();
    assert!(client.webhook_endpoints().await.unwrap().is_empty());
    let error = client
        .delete_webhook_endpoint(&endpoint.id)
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(404));
}
