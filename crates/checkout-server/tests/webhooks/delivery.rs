//! Deliveries: every terminal state arrives once, signed and verifiable by the Standard
//! Webhooks library; a failing receiver gets retries with the same `webhook-id` and growing
//! waits, each in the deliveries log; rotation signs twice; a deleted endpoint gets nothing
//! more; an event can be sent again.

use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::payer::CardForm;
use crate::{
    body_of, call, fast_server, pay, receiver, register, requests_for, wait_for, APPROVED,
    AUTHORIZED, DECLINED,
};

/// The ids of the events the merchant reads in its feed, by session.
async fn feed(server: &crate::support::TestServer) -> Vec<Value> {
    let token = server.token().await;
    let page = server.get("/pay/api/events?limit=100", Some(&token)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    page.body["events"].as_array().expect("events").clone()
}

#[tokio::test]
async fn every_event_a_payment_can_reach_arrives_once_signed_and_verified_by_the_library() {
    let Some(receiver) = receiver("webhooks-states") else {
        return;
    };
    let server = fast_server("webhooks-states").await;
    let (_, secret) = register(&server, receiver.url("/hooks").as_str(), None).await;
    receiver.set_secrets(&[secret]);

    let succeeded = server.new_checkout("succeeded").await;
    pay(&server, &succeeded, APPROVED).await;
    let authorized = server.new_checkout("authorized").await;
    pay(&server, &authorized, AUTHORIZED).await;
    let failed = server.new_checkout("failed").await;
    pay(&server, &failed, DECLINED).await;
    let cancelled = server.new_checkout("cancelled").await;
    let form = CardForm::open(&server.http, &server.base, &cancelled).await;
    assert_eq!(form.cancel(&server.http).await.status(), 303);
    let expired = server.new_checkout("expired").await;
    server.expire_session(&expired).await;
    // The merchant's own changes: a capture, a void, a refund.
    let token = server.token().await;
    let voided = server.new_checkout("voided").await;
    pay(&server, &voided, AUTHORIZED).await;
    for (path, body) in [
        (format!("/pay/api/payment/{authorized}/capture"), json!({})),
        (format!("/pay/api/payment/{voided}/void"), json!({})),
        (
            format!("/pay/api/payment/{succeeded}/refunds"),
            json!({ "amount": 2.0 }),
        ),
    ] {
        let reply = server.post(&path, Some(&token), &body).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
    }

    let requests = wait_for(&receiver, Duration::from_secs(30), "ten events", |r| {
        r.len() >= 10
    })
    .await;
    // A moment more: nothing is sent twice.
    let requests = crate::after_a_moment(&receiver, requests).await;
    assert_eq!(requests.len(), 10, "{requests:#?}");
    let mut seen = BTreeSet::new();
    for request in &requests {
        assert_eq!(
            request["verified"],
            serde_json::json!([true]),
            "{request:#?}"
        );
        assert_eq!(request["method"], "POST");
        assert_eq!(request["headers"]["content-type"], "application/json");
        let body = body_of(request);
        assert_eq!(
            request["headers"]["webhook-id"], body["id"],
            "webhook-id is the event id"
        );
        seen.insert((
            body["type"].as_str().unwrap().to_owned(),
            body["data"]["checkoutSessionId"]
                .as_str()
                .unwrap()
                .to_owned(),
        ));
    }
    let expected: BTreeSet<(String, String)> = [
        ("payment.succeeded", &succeeded),
        ("payment.authorized", &authorized),
        ("payment.failed", &failed),
        ("payment.attempt_failed", &failed),
        ("payment.cancelled", &cancelled),
        ("payment.expired", &expired),
        ("payment.captured", &authorized),
        ("payment.authorized", &voided),
        ("payment.voided", &voided),
        ("payment.refunded", &succeeded),
    ]
    .into_iter()
    .map(|(t, id)| (t.to_owned(), id.clone()))
    .collect();
    assert_eq!(seen, expected);
    // The body delivered is the feed's entry for the event, byte for byte in meaning.
    for event in feed(&server).await {
        let delivered = requests_for(&receiver, event["id"].as_str().unwrap());
        assert_eq!(delivered.len(), 1);
        assert_eq!(body_of(&delivered[0]), event);
    }
}

/// Registers an endpoint on a receiver answering `mode`, pays one session, waits for four
/// failed attempts, then lets the receiver answer; returns the event's attempts.
async fn retried_until_answered(label: &str, mode: &str) {
    let Some(receiver) = receiver(label) else {
        return;
    };
    let server = fast_server(label).await;
    let (endpoint, secret) = register(&server, receiver.url("/hooks").as_str(), None).await;
    receiver.set_secrets(&[secret]);
    receiver.set_mode(mode);
    let id = server.new_checkout(label).await;
    pay(&server, &id, APPROVED).await;
    let requests = wait_for(&receiver, Duration::from_secs(60), "four attempts", |r| {
        r.len() >= 4
    })
    .await;
    receiver.set_mode("ok");
    let event_id = requests[0]["headers"]["webhook-id"]
        .as_str()
        .unwrap()
        .to_owned();
    let all = wait_for(
        &receiver,
        Duration::from_secs(60),
        "the answered attempt",
        |r| r.iter().any(|q| q["mode"] == "ok"),
    )
    .await;
    assert!(
        all.iter()
            .all(|r| r["headers"]["webhook-id"] == event_id.as_str()),
        "every attempt carries the same webhook-id: {all:#?}"
    );
    assert!(all
        .iter()
        .all(|r| r["verified"] == serde_json::json!([true])));
    // The waits between attempts grow (from the end of one attempt to the start of the next:
    // a hanging receiver holds each attempt for the sender's timeout).
    let answers = receiver.answers();
    let started: Vec<f64> = all
        .iter()
        .map(|r| r["received_at"].as_f64().unwrap())
        .collect();
    let ended: Vec<f64> = started
        .iter()
        .map(|s| {
            answers
                .iter()
                .find(|a| a["received_at"].as_f64() == Some(*s))
                .and_then(|a| a["answered_at"].as_f64())
                .unwrap_or(*s)
        })
        .collect();
    let waits: Vec<f64> = (1..4).map(|i| started[i] - ended[i - 1]).collect();
    assert!(
        waits.windows(2).all(|w| w[1] > w[0]),
        "{mode}: the waits grow: {waits:?}"
    );

    // The deliveries log shows every attempt, then delivered.
    let log = wait_log(&server, &endpoint, |d| d["state"] == "delivered").await;
    let attempts = log["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), all.len(), "{log:#}");
    for failed in &attempts[..attempts.len() - 1] {
        match mode {
            "fail" => {
                assert_eq!(failed["status"], 500, "{failed}");
                // The receiver is on loopback: its answer's body is never kept.
                assert!(failed["responseExcerpt"].is_null(), "{failed}");
            }
            "hang" => assert!(
                failed["error"].as_str().unwrap().contains("no answer"),
                "{failed}"
            ),
            _ => assert!(
                failed["status"].is_null() && failed["error"].is_string(),
                "{failed}"
            ),
        }
        assert!(failed["durationMs"].is_u64());
    }
    assert_eq!(attempts.last().unwrap()["status"], 200);
    assert_eq!(log["eventId"], event_id.as_str());
}

/// The newest delivery of `endpoint` once `done` holds for it.
async fn wait_log(
    server: &crate::support::TestServer,
    endpoint: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let started = std::time::Instant::now();
    loop {
        let log = call(
            server,
            Method::GET,
            &format!("/pay/api/webhook-endpoints/{endpoint}/deliveries"),
        )
        .await;
        assert_eq!(log.status, 200, "{}", log.body);
        if let Some(newest) = log.body["deliveries"].get(0).filter(|d| done(d)) {
            return newest.clone();
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{}", log.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_receiver_answering_500_gets_retries_with_the_same_id_and_growing_waits() {
    retried_until_answered("webhooks-retry-500", "fail").await;
}

#[tokio::test]
async fn a_hanging_receiver_gets_retries_with_the_same_id_and_growing_waits() {
    retried_until_answered("webhooks-retry-hang", "hang").await;
}

#[tokio::test]
async fn a_receiver_closing_the_connection_gets_retries_with_the_same_id_and_growing_waits() {
    retried_until_answered("webhooks-retry-close", "close").await;
}

#[tokio::test]
async fn a_rotated_endpoint_is_signed_with_both_secrets_and_each_verifies() {
    let Some(receiver) = receiver("webhooks-rotation") else {
        return;
    };
    let server = fast_server("webhooks-rotation").await;
    let (endpoint, old) = register(&server, receiver.url("/hooks").as_str(), None).await;
    let rotated = call(
        &server,
        Method::POST,
        &format!("/pay/api/webhook-endpoints/{endpoint}/rotate-secret"),
    )
    .await;
    let new = rotated.str("secret").to_owned();
    receiver.set_secrets(&[old, new]);
    let id = server.new_checkout("rotation").await;
    pay(&server, &id, APPROVED).await;
    let requests = wait_for(&receiver, Duration::from_secs(30), "one delivery", |r| {
        !r.is_empty()
    })
    .await;
    let signature = requests[0]["headers"]["webhook-signature"]
        .as_str()
        .unwrap();
    assert_eq!(
        signature
            .split(' ')
            .filter(|s| s.starts_with("v1,"))
            .count(),
        2,
        "{signature}"
    );
    // The library, given either secret alone, verifies the delivery.
    assert_eq!(requests[0]["verified"], serde_json::json!([true, true]));
}

#[tokio::test]
async fn a_deleted_endpoint_gets_nothing_more_while_a_kept_one_does() {
    let Some(receiver) = receiver("webhooks-deleted") else {
        return;
    };
    let server = fast_server("webhooks-deleted").await;
    let (gone, gone_secret) = register(&server, receiver.url("/gone").as_str(), None).await;
    let (_, kept_secret) = register(&server, receiver.url("/kept").as_str(), None).await;
    receiver.set_secrets(&[gone_secret, kept_secret]);
    let deleted = call(
        &server,
        Method::DELETE,
        &format!("/pay/api/webhook-endpoints/{gone}"),
    )
    .await;
    assert_eq!(deleted.status, 204);
    for n in 0..3 {
        let id = server.new_checkout(&format!("after-delete-{n}")).await;
        pay(&server, &id, APPROVED).await;
    }
    let requests = wait_for(
        &receiver,
        Duration::from_secs(30),
        "three deliveries",
        |r| r.len() >= 3,
    )
    .await;
    let requests = crate::after_a_moment(&receiver, requests).await;
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert!(
        requests.iter().all(|r| r["path"] == "/kept"),
        "nothing went to the deleted endpoint: {requests:#?}"
    );
}

#[tokio::test]
async fn an_event_is_sent_again_on_request_with_the_same_id() {
    let Some(receiver) = receiver("webhooks-redeliver") else {
        return;
    };
    let server = fast_server("webhooks-redeliver").await;
    let (endpoint, secret) = register(&server, receiver.url("/hooks").as_str(), None).await;
    receiver.set_secrets(&[secret]);
    let id = server.new_checkout("redeliver").await;
    pay(&server, &id, APPROVED).await;
    let first = wait_for(&receiver, Duration::from_secs(30), "the delivery", |r| {
        !r.is_empty()
    })
    .await;
    let event_id = first[0]["headers"]["webhook-id"]
        .as_str()
        .unwrap()
        .to_owned();

    let again = call(
        &server,
        Method::POST,
        &format!("/pay/api/events/{event_id}/redeliver"),
    )
    .await;
    assert_eq!(again.status, 202, "{}", again.body);
    assert_eq!(again.body["deliveries"].as_array().map(Vec::len), Some(1));
    let both = wait_for(
        &receiver,
        Duration::from_secs(30),
        "the second delivery",
        |r| r.len() >= 2,
    )
    .await;
    assert_eq!(both[1]["headers"]["webhook-id"], event_id.as_str());
    assert_eq!(both[1]["verified"], serde_json::json!([true]));
    assert_eq!(both[1]["body"], both[0]["body"], "the same body");
    let log = wait_log(&server, &endpoint, |d| {
        d["redelivery"] == true && d["state"] == "delivered"
    })
    .await;
    assert_eq!(log["eventId"], event_id.as_str());

    let unknown = call(
        &server,
        Method::POST,
        "/pay/api/events/6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55/redeliver",
    )
    .await;
    assert_eq!(unknown.status, 404);
}
