//! The merchant's metadata and a create's capture method through the real binary: kept as
//! sent, returned in the status record, the events feed and the signed webhook; a pair past a
//! limit is a 400 naming its key, and creates nothing.

use std::time::Duration;

use serde_json::{json, Value};

use crate::{body_of, fast_server, pay, receiver, register, wait_for, APPROVED};

fn checkout(reference: &str, metadata: Value) -> Value {
    json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "totalTransactionAmount": 12.34,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference,
        "captureMethod": "manual",
        "metadata": metadata,
    })
}

#[tokio::test]
async fn metadata_round_trips_through_status_feed_and_webhook() {
    let Some(receiver) = receiver("webhooks-metadata") else {
        return;
    };
    let server = fast_server("webhooks-metadata").await;
    let (_, secret) = register(&server, receiver.url("/hooks").as_str(), None).await;
    receiver.set_secrets(&[secret]);
    let token = server.token().await;
    let metadata = json!({ "orderId": "1001", "nota": "entregar después de las 5 — \"B\"" });
    let created = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &checkout("META-1", metadata.clone()),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.str("checkoutSessionId").to_owned();

    // Manual capture asked by the create, on an automatic terminal: the card is held.
    pay(&server, &id, APPROVED).await;
    let status = server.status_record(&id).await;
    assert_eq!(status["state"], "ApprovedTransaction", "{status}");
    assert_eq!(status["captureMethod"], "manual");
    assert_eq!(status["metadata"], metadata);

    let requests = wait_for(&receiver, Duration::from_secs(30), "the event", |r| {
        !r.is_empty()
    })
    .await;
    assert_eq!(requests[0]["verified"], json!([true]), "{:#?}", requests[0]);
    let delivered = body_of(&requests[0]);
    assert_eq!(delivered["type"], "payment.authorized");
    assert_eq!(delivered["data"]["metadata"], metadata);

    let feed = server.get("/pay/api/events?limit=10", Some(&token)).await;
    let event = &feed.body["events"][0];
    assert_eq!(event["id"], delivered["id"]);
    assert_eq!(event["data"]["metadata"], metadata);

    // Without metadata the field is absent, not empty.
    let plain = server.new_checkout("META-PLAIN").await;
    let record = server.status_record(&plain).await;
    assert!(record.get("metadata").is_none(), "{record}");
    assert!(record.get("captureMethod").is_none(), "{record}");
}

#[tokio::test]
async fn a_metadata_pair_past_a_limit_is_a_400_naming_its_key_and_creates_nothing() {
    let server = fast_server("metadata-limits").await;
    let token = server.token().await;
    let long_key = "k".repeat(41);
    let cases = [
        (
            json!({ "note": "v".repeat(501) }),
            "Metadata[note]".to_owned(),
        ),
        (
            json!({ long_key.clone(): "v" }),
            format!("Metadata[{long_key}]"),
        ),
        (json!({ "count": 3 }), "Metadata[count]".to_owned()),
        (
            Value::Object((0..51).map(|i| (format!("k{i}"), json!("v"))).collect()),
            "Metadata".to_owned(),
        ),
    ];
    for (i, (metadata, field)) in cases.into_iter().enumerate() {
        let reference = format!("META-BAD-{i}");
        let reply = server
            .post(
                "/pay/api/start-payment",
                Some(&token),
                &checkout(&reference, metadata),
            )
            .await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert_eq!(
            reply.body["errors"]
                .as_object()
                .map(|e| e.keys().cloned().collect::<Vec<_>>()),
            Some(vec![field.clone()]),
            "{}",
            reply.body
        );
        let lookup = server
            .get(
                &format!("/pay/api/payment?transactionReferenceNumber={reference}"),
                Some(&token),
            )
            .await;
        assert_eq!(lookup.status, 200, "{}", lookup.body);
        assert_eq!(lookup.body, json!([]), "nothing was created for {field}");
    }
    let reply = server
        .post(
            "/pay/api/generate-payment-link",
            Some(&token),
            &json!({
                "totalTransactionAmount": 5, "currencyCode": "USD",
                "transactionReferenceNumber": "META-LINK", "generalPurchaseDescription": "Link",
                "userEmail": "payer@example.com", "culture": "en",
                "captureMethod": "later",
            }),
        )
        .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(
        reply.body["errors"]["CaptureMethod"].is_array(),
        "{}",
        reply.body
    );
}
