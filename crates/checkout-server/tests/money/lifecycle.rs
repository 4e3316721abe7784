//! The merchant's actions after a payment through the Stripe adapter against the Stripe-like
//! stand-in: what the processor holds after each, and racing refunds.

use std::sync::Arc;

use serde_json::json;

use crate::{fake_stripe, intents_of, pay, service, state_of, APPROVED_CARD, CHALLENGE_CARD};

/// Authorised, not captured (`requires_capture`).
const AUTHORISE_ONLY: &str = "4000000000000077";
/// Charged; Stripe fails its refunds.
const REFUND_FAILS: &str = "4000000000005126";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_full_refunds_refund_once() {
    let stripe = fake_stripe().await;
    let server = Arc::new(service("money-refund-race", &stripe, &[]).await);
    let id = server.new_checkout("REFUND-RACE").await;
    pay(&server, &id, APPROVED_CARD).await;
    assert_eq!(state_of(&server, &id).await, "Successful");
    let token = server.token().await;

    let refunds: Vec<_> = (0..20)
        .map(|_| {
            let (server, token, id) = (server.clone(), token.clone(), id.clone());
            tokio::spawn(async move {
                server
                    .post(
                        &format!("/pay/api/payment/{id}/refunds"),
                        Some(&token),
                        &json!({ "amount": 12.34 }),
                    )
                    .await
            })
        })
        .collect();
    let mut done = 0;
    for refund in refunds {
        let reply = refund.await.unwrap();
        match reply.status.as_u16() {
            200 => {
                assert_eq!(reply.body["type"], "SVC_010");
                done += 1;
            }
            422 => assert_eq!(reply.body["type"], "SVC_011", "{}", reply.body),
            other => panic!("{other}: {}", reply.body),
        }
    }
    assert_eq!(done, 1, "exactly one refund answered done");

    let intent = intents_of(&stripe, &id)[0].id.clone();
    let at_processor: Vec<_> = stripe
        .refunds()
        .into_iter()
        .filter(|r| r.payment_intent == intent)
        .collect();
    assert_eq!(at_processor.len(), 1, "{at_processor:?}");
    assert_eq!(at_processor[0].amount, 1234);
    assert_eq!(at_processor[0].status, "succeeded");

    let list = server
        .get(&format!("/pay/api/payment/{id}/refunds"), Some(&token))
        .await;
    assert_eq!(
        list.body["refunds"].as_array().unwrap().len(),
        1,
        "{}",
        list.body
    );
    assert!(
        list.text.contains("\"refundedAmount\":12.34"),
        "{}",
        list.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_stripe_fails_is_svc_009_and_nothing_is_refunded() {
    let stripe = fake_stripe().await;
    let server = service("money-refund-fails", &stripe, &[]).await;
    let id = server.new_checkout("REFUND-FAILS").await;
    pay(&server, &id, REFUND_FAILS).await;
    assert_eq!(state_of(&server, &id).await, "Successful");
    let token = server.token().await;
    let reply = server
        .post(
            &format!("/pay/api/payment/{id}/refunds"),
            Some(&token),
            &json!({ "amount": 5.00 }),
        )
        .await;
    assert_eq!(reply.status, 422, "{}", reply.body);
    assert_eq!(reply.body["type"], "SVC_009");
    assert_eq!(stripe.refunds()[0].status, "failed");
    let record = server.status_record(&id).await;
    assert_eq!(record["refundedAmount"], 0.0);
    let list = server
        .get(&format!("/pay/api/payment/{id}/refunds"), Some(&token))
        .await;
    assert_eq!(list.body["refunds"][0]["state"], "Failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancelling_a_session_waiting_for_a_challenge_cancels_the_intent_first() {
    let stripe = fake_stripe().await;
    let server = service("money-cancel-challenge", &stripe, &[]).await;
    let id = server.new_checkout("CANCEL-3DS").await;
    pay(&server, &id, CHALLENGE_CARD).await;
    assert_eq!(state_of(&server, &id).await, "ChallengeRequired");
    let token = server.token().await;
    let reply = server
        .post(
            &format!("/pay/api/payment/{id}/cancel"),
            Some(&token),
            &json!({}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["state"], "Cancelled");
    let intents = intents_of(&stripe, &id);
    assert_eq!(intents.len(), 1);
    assert_eq!(intents[0].status, "canceled", "cancelled at the processor");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partial_capture_and_a_void_reach_the_processor() {
    let stripe = fake_stripe().await;
    let server = service("money-capture-void", &stripe, &[]).await;
    let token = server.token().await;

    let captured = server.new_checkout("CAPTURE").await;
    pay(&server, &captured, AUTHORISE_ONLY).await;
    assert_eq!(state_of(&server, &captured).await, "ApprovedTransaction");
    let reply = server
        .post(
            &format!("/pay/api/payment/{captured}/capture"),
            Some(&token),
            &json!({ "amount": 10.00 }),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply.text.contains("\"capturedAmount\":10.00"),
        "{}",
        reply.text
    );
    let intent = &intents_of(&stripe, &captured)[0];
    assert_eq!(
        (intent.status.as_str(), intent.amount_received),
        ("succeeded", 1000)
    );

    let voided = server.new_checkout("VOID").await;
    pay(&server, &voided, AUTHORISE_ONLY).await;
    let reply = server
        .post(
            &format!("/pay/api/payment/{voided}/void"),
            Some(&token),
            &json!({}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["type"], "SVC_010");
    assert_eq!(reply.body["payment"]["state"], "Voided");
    assert_eq!(intents_of(&stripe, &voided)[0].status, "canceled");
}
