//! The merchant's calls through the SDK, end to end, and every SVC code the sandbox's JSON
//! API answers, each read as its `SvcCode`.
//!
//! SVC_002 is answered only by the payer's pages (an unknown or expired session there), and
//! SVC_003, SVC_004 and SVC_006 only to the card form: the JSON API reports a decline in the
//! status record (`attempts[].code`), which is checked here.

use checkout_client::{
    AttemptOutcome, CallOptions, CardBrand, Culture, Currency, Error, Item, Money,
    PaymentLinkRequest, PaymentState, RefundState, SessionType, StartPaymentRequest, SvcCode,
    IDEMPOTENCY_KEY_REUSED_TYPE,
};

use crate::support::TestServer;
use crate::{checkout, dec, paid, reference, sdk, AUTHORIZED, DECLINED, REFUNDS_REFUSED};

fn usd(amount: &str) -> Money {
    Money::new(dec(amount), Currency::USD).unwrap()
}

/// The code of an error, asserting the status the spec gives it.
fn code(error: Error) -> SvcCode {
    let code = error
        .svc_code()
        .unwrap_or_else(|| panic!("no SVC code: {error}"));
    assert_eq!(error.status(), code.http_status(), "{error}");
    assert!(error.operation_id().is_some());
    assert!(!error.problem().unwrap().instance.is_empty());
    code
}

#[tokio::test]
async fn every_svc_code_the_api_answers_is_typed() {
    let server = TestServer::sandbox("sdk-svc-codes").await;
    let client = sdk(&server, &server.base);

    // SVC_001: a reference already held; the problem names the session holding it.
    let merchant_reference = reference("DUP");
    let first = client
        .start_payment(&checkout(&merchant_reference, "10.00"))
        .await
        .unwrap();
    let error = client
        .start_payment(&checkout(&merchant_reference, "10.00"))
        .await
        .unwrap_err();
    assert_eq!(
        error.problem().unwrap().checkout_session_id.as_deref(),
        Some(first.checkout_session_id.as_str())
    );
    assert_eq!(code(error), SvcCode::Svc001);

    // SVC_005: a terminal that is not the token's.
    let error = client
        .start_payment(&checkout(&reference("OTHER"), "10.00").terminal_number("OTHER-001"))
        .await
        .unwrap_err();
    assert_eq!(code(error), SvcCode::Svc005);

    // SVC_007: unknown ids, on every route of a session.
    let unknown = "00000000-0000-4000-8000-000000000000";
    assert_eq!(
        code(client.payment_status(unknown).await.unwrap_err()),
        SvcCode::Svc007
    );
    assert_eq!(
        code(client.payment_status("not-an-id").await.unwrap_err()),
        SvcCode::Svc007
    );
    assert_eq!(
        code(client.cancel_payment(unknown).await.unwrap_err()),
        SvcCode::Svc007
    );
    assert_eq!(
        code(client.capture(unknown, None).await.unwrap_err()),
        SvcCode::Svc007
    );
    assert_eq!(
        code(client.void(unknown).await.unwrap_err()),
        SvcCode::Svc007
    );
    assert_eq!(
        code(client.refund(unknown, usd("1")).await.unwrap_err()),
        SvcCode::Svc007
    );
    assert_eq!(
        code(client.refunds(unknown).await.unwrap_err()),
        SvcCode::Svc007
    );

    // SVC_008: a capture of a session never authorised; a cancel of a paid one.
    assert_eq!(
        code(
            client
                .capture(&first.checkout_session_id, None)
                .await
                .unwrap_err()
        ),
        SvcCode::Svc008
    );
    let held = paid(&server, &client, "HELD", AUTHORIZED).await;
    assert_eq!(
        code(client.cancel_payment(&held).await.unwrap_err()),
        SvcCode::Svc008
    );

    // SVC_011: a capture above the authorised amount; a refund above the captured one; a
    // void of a captured payment.
    assert_eq!(
        code(client.capture(&held, Some(usd("12.35"))).await.unwrap_err()),
        SvcCode::Svc011
    );
    let captured = client.capture(&held, Some(usd("10.00"))).await.unwrap();
    assert_eq!(captured.state, PaymentState::Successful);
    assert_eq!(captured.captured_amount, dec("10.00"));
    assert_eq!(
        code(client.refund(&held, usd("10.01")).await.unwrap_err()),
        SvcCode::Svc011
    );
    assert_eq!(code(client.void(&held).await.unwrap_err()), SvcCode::Svc011);

    // SVC_009: the processor refuses every refund of this card.
    let refused = paid(&server, &client, "REFUSED", REFUNDS_REFUSED).await;
    assert_eq!(
        code(client.refund(&refused, usd("1.00")).await.unwrap_err()),
        SvcCode::Svc009
    );
    let refunds = client.refunds(&refused).await.unwrap();
    assert_eq!(refunds.refunds[0].state, RefundState::Failed);
    assert_eq!(refunds.refunds[0].svc_code.as_deref(), Some("SVC_009"));
    assert_eq!(refunds.refunded_amount, dec("0"));

    // SVC_010 is a success: a void or a refund done.
    let voided = paid(&server, &client, "VOID", AUTHORIZED).await;
    let done = client.void(&voided).await.unwrap();
    assert_eq!(SvcCode::parse(&done.kind), Some(SvcCode::Svc010));
    assert_eq!(done.payment.state, PaymentState::Voided);
    assert_eq!(done.payment.state_code, 8);

    // SVC_006 reaches the merchant in the status record: the declined attempt.
    let declined = paid(&server, &client, "DECLINED", DECLINED).await;
    let record = client.payment_status(&declined).await.unwrap();
    assert_eq!(record.state, PaymentState::Failed);
    assert_eq!(record.state_code, 2);
    assert_eq!(record.attempts.len(), 1);
    assert_eq!(record.attempts[0].outcome, AttemptOutcome::Declined);
    assert_eq!(record.attempts[0].code.as_deref(), Some("SVC_006"));
    assert_eq!(record.attempts[0].card_brand, CardBrand::Visa);
    assert_eq!(record.attempts[0].card_last_four, "0002");

    // Not SVC codes: a validation 400 with its errors, an idempotency key reused with
    // another body.
    let error = client
        .start_payment(&StartPaymentRequest::new(
            reference("BAD-URL"),
            usd("1.00"),
            "not a url",
            "https://merchant.example/fail",
        ))
        .await
        .unwrap_err();
    let problem = error.problem().unwrap();
    assert_eq!(error.status(), Some(400));
    assert!(problem.is_validation());
    assert!(
        problem.errors.contains_key("CallbackSuccessUrl"),
        "{problem:?}"
    );
    assert_eq!(error.svc_code(), None);
    let keyed = client.with_options(CallOptions::new().idempotency_key(reference("KEY")));
    keyed
        .start_payment(&checkout(&reference("KEYED-1"), "1.00"))
        .await
        .unwrap();
    let error = keyed
        .start_payment(&checkout(&reference("KEYED-2"), "1.00"))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(422));
    assert_eq!(error.problem().unwrap().kind, IDEMPOTENCY_KEY_REUSED_TYPE);
}

#[tokio::test]
async fn a_merchants_day_through_the_sdk() {
    let server = TestServer::sandbox("sdk-day").await;
    let client = sdk(&server, &server.base);

    // A checkout with items and charges, its page, its record.
    let merchant_reference = reference("DAY");
    let request = checkout(&merchant_reference, "25.50")
        .user_email("payer@example.com")
        .culture(Culture::En)
        .item(Item::new("SKU-1", 2, "Blue mug", dec("10")))
        .additional_charge(checkout_client::AdditionalCharge::new(
            "Shipping",
            dec("5.5"),
        ));
    let created = client.start_payment(&request).await.unwrap();
    let page = server
        .http
        .get(client.checkout_page_url(&created.checkout_session_id))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let record = client
        .payment_status(&created.checkout_session_id)
        .await
        .unwrap();
    assert_eq!(record.state, PaymentState::Pending);
    assert_eq!(record.session_type, SessionType::IntegratedCheckout);
    assert_eq!(record.total_transaction_amount, dec("25.50"));
    assert_eq!(record.currency(), Some(Currency::USD));
    assert_eq!(record.captured_amount, dec("0"));
    assert!(record.attempts.is_empty() && record.disputes.is_empty());
    assert_eq!(record.expiration_date_time, created.expiration_date_time);

    // Withdrawn before it is paid.
    let cancelled = client
        .cancel_payment(&created.checkout_session_id)
        .await
        .unwrap();
    assert_eq!(cancelled.state, PaymentState::Cancelled);

    // A link in colones, looked up by its reference.
    let link_reference = reference("LINK");
    let link = client
        .generate_payment_link(
            &PaymentLinkRequest::new(
                &link_reference,
                Money::new(dec("15000"), Currency::CRC).unwrap(),
                "Invoice 77",
                "payer@example.com",
                Culture::Es,
            )
            .expiration(time::OffsetDateTime::now_utc() + time::Duration::hours(2)),
        )
        .await
        .unwrap();
    assert!(
        link.payment_link
            .ends_with(&format!("/pay/link/{}", link.checkout_session_id)),
        "{}",
        link.payment_link
    );
    let found = client.payments_by_reference(&link_reference).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].session_type, SessionType::PaymentLink);
    assert_eq!(found[0].total_transaction_amount, dec("15000.00"));

    // A held authorisation captured in part, then refunded in parts.
    let held = paid(&server, &client, "CAPTURE", AUTHORIZED).await;
    assert_eq!(
        client.payment_status(&held).await.unwrap().state,
        PaymentState::ApprovedTransaction
    );
    let captured = client.capture(&held, Some(usd("10.00"))).await.unwrap();
    assert_eq!(captured.captured_amount, dec("10.00"));
    let first = client.refund(&held, usd("4")).await.unwrap();
    assert_eq!(first.status, 200);
    assert_eq!(first.refund.as_ref().unwrap().state, RefundState::Succeeded);
    assert_eq!(first.refund.as_ref().unwrap().amount, dec("4.00"));
    client.refund(&held, usd("6.00")).await.unwrap();
    let refunds = client.refunds(&held).await.unwrap();
    assert_eq!(refunds.refunds.len(), 2);
    assert_eq!(refunds.refunded_amount, dec("10.00"));
    assert_eq!(refunds.captured_amount, dec("10.00"));
    let record = client.payment_status(&held).await.unwrap();
    assert_eq!(record.refunded_amount, dec("10.00"));
    assert_eq!(record.attempts[0].card_last_four, "0077");
}
