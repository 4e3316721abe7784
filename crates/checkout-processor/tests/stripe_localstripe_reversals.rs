//! The Stripe adapter's capture and refund (made through `testing::localstripe`, whose capture
//! and refund are the production adapter's) against a real localstripe (a fresh store per
//! test). Needs `scripts/localstripe.sh` to have run once (or `LOCALSTRIPE_BIN`).
//!
//! The adapter authorises with automatic capture, so an authorisation held without capture is
//! made here directly at localstripe (`capture_method=manual`), as a card that Stripe
//! authorises only would be. localstripe's intents carry no `amount_received`, so the amount
//! the adapter reports captured (Stripe's `amount_received`) reads 0 against it: these tests
//! check what localstripe holds instead (the intent succeeded, the charge captured; a partial
//! capture is kept by localstripe as a capture of the whole and a refund of the rest). Not
//! tested here: replaying a capture or a refund with the same
//! key, because localstripe (1.15) ignores `Idempotency-Key` (a replayed refund would refund
//! twice); `fake_stripe.rs` covers replays against a stand-in that honours keys.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::time::Duration;

use checkout_domain::ports::{
    CaptureRequest, CardProcessor, ProcessorError, ProcessorOutcome, RefundOutcome, RefundRequest,
};
use checkout_domain::values::{ActionId, Amount, Currency, RefundId};
use checkout_processor::testing::localstripe::LocalstripeProcessor;
use checkout_processor::StripeConfig;
use support::localstripe::Localstripe;
use support::{card, unique_bytes, Payment};

fn processor(localstripe: &Localstripe) -> LocalstripeProcessor {
    LocalstripeProcessor::new(StripeConfig {
        base_url: localstripe.base_url.clone(),
        api_key: "sk_test_hosted_checkout".into(),
        timeout: Duration::from_secs(10),
    })
    .expect("valid config")
}

fn usd(value: &str) -> Amount {
    Amount::new(value.parse().unwrap(), Currency::parse("USD").unwrap()).unwrap()
}

/// An authorisation of 10.50 USD held without capture at localstripe; its intent id.
async fn authorised_only(
    localstripe: &Localstripe,
    stripe: &LocalstripeProcessor,
) -> (Payment, String) {
    let mut payment = Payment::new(card("4242424242424242"));
    let payment_method = payment.tokenize(stripe).await.unwrap();
    let intent = localstripe
        .post(
            "v1/payment_intents",
            &[
                ("amount", "1050"),
                ("currency", "usd"),
                ("payment_method", &payment_method),
                ("capture_method", "manual"),
                ("confirm", "true"),
            ],
        )
        .await;
    assert_eq!(intent["status"], "requires_capture", "{intent}");
    (payment, intent["id"].as_str().unwrap().to_owned())
}

/// A payment of 10.50 USD approved and captured through the adapter; its intent id.
async fn captured(stripe: &LocalstripeProcessor) -> String {
    let mut payment = Payment::new(card("4242424242424242"));
    match payment.pay(stripe).await {
        Ok(ProcessorOutcome::Approved {
            processor_reference,
            captured: true,
        }) => processor_reference,
        other => panic!("expected an approval, got {other:?}"),
    }
}

fn refund<'a>(reference: &'a str, value: &str) -> RefundRequest<'a> {
    RefundRequest {
        refund: RefundId::from_random_bytes(unique_bytes()),
        processor_reference: reference,
        amount: usd(value),
    }
}

#[tokio::test]
async fn a_full_capture_takes_the_authorised_amount() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let (payment, intent) = authorised_only(&localstripe, &stripe).await;
    let captured = stripe
        .capture(CaptureRequest {
            action: ActionId::from_uuid(payment.attempt.as_uuid()),
            processor_reference: &intent,
            amount: usd("10.50"),
        })
        .await;
    assert!(captured.is_ok(), "{captured:?}");
    let held = localstripe.payment_intent(&intent).await;
    assert_eq!(held["status"], "succeeded", "{held}");
    let charges = localstripe.succeeded_charges().await;
    assert_eq!(charges.len(), 1, "{charges:?}");
    assert_eq!(charges[0]["captured"], true);
    assert_eq!(charges[0]["amount"], 1050);
    assert!(localstripe.refunds().await.is_empty());
}

#[tokio::test]
async fn a_partial_capture_takes_only_the_amount_asked_and_a_second_is_refused() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let (payment, intent) = authorised_only(&localstripe, &stripe).await;
    let request = CaptureRequest {
        action: ActionId::from_uuid(payment.attempt.as_uuid()),
        processor_reference: &intent,
        amount: usd("6.00"),
    };
    assert!(stripe.capture(request).await.is_ok());
    let held = localstripe.payment_intent(&intent).await;
    assert_eq!(held["status"], "succeeded", "{held}");
    // localstripe keeps 6.00 as the whole captured and 4.50 returned at once.
    let returned: Vec<i64> = localstripe
        .refunds()
        .await
        .iter()
        .map(|r| r["amount"].as_i64().unwrap())
        .collect();
    assert_eq!(returned, [450]);
    // A capture once captured takes nothing more: localstripe refuses it, the adapter reads
    // the intent and answers without error, and nothing changes.
    assert!(stripe.capture(request).await.is_ok());
    assert_eq!(localstripe.refunds().await.len(), 1);
    assert_eq!(localstripe.succeeded_charges().await.len(), 1);
}

#[tokio::test]
async fn capturing_a_cancelled_authorisation_is_a_controlled_error() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let (payment, intent) = authorised_only(&localstripe, &stripe).await;
    assert!(matches!(
        stripe.cancel(&intent).await,
        Ok(ProcessorOutcome::Canceled { .. })
    ));
    let answer = stripe
        .capture(CaptureRequest {
            action: ActionId::from_uuid(payment.attempt.as_uuid()),
            processor_reference: &intent,
            amount: usd("10.50"),
        })
        .await;
    assert!(
        matches!(answer, Err(ProcessorError::Controlled(_))),
        "{answer:?}"
    );
    assert_eq!(
        localstripe.payment_intent(&intent).await["status"],
        "canceled"
    );
}

#[tokio::test]
async fn refunds_return_part_then_the_rest_of_a_captured_payment() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let intent = captured(&stripe).await;

    let first = stripe.refund(refund(&intent, "4.00")).await.unwrap();
    let RefundOutcome::Succeeded { refund_reference } = &first else {
        panic!("expected a refund, got {first:?}");
    };
    assert!(refund_reference.starts_with("re_"), "{refund_reference}");
    let second = stripe.refund(refund(&intent, "6.50")).await.unwrap();
    assert!(
        matches!(second, RefundOutcome::Succeeded { .. }),
        "{second:?}"
    );

    let mut amounts: Vec<i64> = localstripe
        .refunds()
        .await
        .iter()
        .map(|r| r["amount"].as_i64().unwrap())
        .collect();
    amounts.sort_unstable();
    assert_eq!(amounts, [400, 650]);
}

#[tokio::test]
async fn refunding_a_declined_payment_is_refused_and_nothing_is_refunded() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let mut payment = Payment::new(card("4000000000000341"));
    let intent = match payment.pay(&stripe).await {
        Ok(ProcessorOutcome::Declined {
            processor_reference: Some(reference),
            ..
        }) => reference,
        other => panic!("expected a decline with an intent, got {other:?}"),
    };
    let answer = stripe.refund(refund(&intent, "10.50")).await;
    assert!(
        matches!(
            answer,
            Err(ProcessorError::Controlled(_)) | Ok(RefundOutcome::Failed { .. })
        ),
        "{answer:?}"
    );
    assert!(localstripe.refunds().await.is_empty());
}
