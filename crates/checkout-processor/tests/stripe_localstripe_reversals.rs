//! The Stripe adapter's capture and refund (made through `testing::localstripe`, whose capture
//! and refund are the production adapter's) against a real localstripe (a fresh store per
//! test). Needs `scripts/localstripe.sh` to have run once (or `LOCALSTRIPE_BIN`).
//!
//! An authorisation held without capture is made both directly at localstripe
//! (`capture_method=manual`) and by the adapter itself (a terminal with manual capture), then
//! captured in whole or part, or voided; refunds are made and read back. localstripe's intents carry no `amount_received`, so the amount
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

/// A held authorisation asked by the adapter itself (`capture_method=manual`, as a terminal
/// with manual capture asks): localstripe holds it `requires_capture` with nothing captured.
async fn held_by_the_adapter(stripe: &LocalstripeProcessor) -> (Payment, String) {
    let mut payment = Payment::new(card("4242424242424242"));
    payment.tokenize(stripe).await.unwrap();
    let request = checkout_domain::ports::AuthorizationRequest {
        capture: checkout_domain::terminal::CaptureMethod::Manual,
        ..payment.request()
    };
    let reference = match stripe.authorize(request).await {
        Ok(ProcessorOutcome::Approved {
            processor_reference,
            captured: false,
        }) => processor_reference,
        other => panic!("expected an authorisation held without capture, got {other:?}"),
    };
    (payment, reference)
}

#[tokio::test]
async fn the_adapters_manual_authorisation_is_held_then_captured_in_part() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let (payment, intent) = held_by_the_adapter(&stripe).await;
    let held = localstripe.payment_intent(&intent).await;
    assert_eq!(held["status"], "requires_capture", "{held}");
    assert_eq!(held["capture_method"], "manual", "{held}");
    let charges = localstripe.succeeded_charges().await;
    assert_eq!(charges.len(), 1, "{charges:?}");
    assert_eq!(charges[0]["captured"], false, "authorised, not captured");
    // A read of it says the same: approved, not captured.
    assert!(matches!(
        stripe.retrieve(&intent).await,
        Ok(ProcessorOutcome::Approved {
            captured: false,
            ..
        })
    ));

    let request = CaptureRequest {
        action: ActionId::from_uuid(payment.attempt.as_uuid()),
        processor_reference: &intent,
        amount: usd("7.00"),
    };
    assert!(stripe.capture(request).await.is_ok());
    assert_eq!(
        localstripe.payment_intent(&intent).await["status"],
        "succeeded"
    );
    let charges = localstripe.succeeded_charges().await;
    assert_eq!(charges[0]["captured"], true);
    // localstripe keeps a partial capture as the whole captured and the rest returned.
    let returned: Vec<i64> = localstripe
        .refunds()
        .await
        .iter()
        .map(|r| r["amount"].as_i64().unwrap())
        .collect();
    assert_eq!(returned, [1050 - 700]);
}

#[tokio::test]
async fn voiding_the_adapters_manual_authorisation_cancels_it_and_a_capture_is_refused() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let (payment, intent) = held_by_the_adapter(&stripe).await;
    assert!(matches!(
        stripe.cancel(&intent).await,
        Ok(ProcessorOutcome::Canceled { .. })
    ));
    assert_eq!(
        localstripe.payment_intent(&intent).await["status"],
        "canceled"
    );
    // A read afterwards says canceled, and a capture is refused with nothing taken.
    assert!(matches!(
        stripe.retrieve(&intent).await,
        Ok(ProcessorOutcome::Canceled { .. })
    ));
    let capture = stripe
        .capture(CaptureRequest {
            action: ActionId::from_uuid(payment.attempt.as_uuid()),
            processor_reference: &intent,
            amount: usd("10.50"),
        })
        .await;
    assert!(
        matches!(capture, Err(ProcessorError::Controlled(_))),
        "{capture:?}"
    );
    // The intent stays canceled. (localstripe 1.15 captures the charge of a canceled intent
    // anyway, which real Stripe refuses; the adapter reads the intent and reports the refusal.)
    assert_eq!(
        localstripe.payment_intent(&intent).await["status"],
        "canceled"
    );
}

#[tokio::test]
async fn a_refund_is_read_back_by_its_reference_and_names_its_ledger_row() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let intent = captured(&stripe).await;
    let request = refund(&intent, "2.50");
    let row = request.refund;
    let RefundOutcome::Succeeded { refund_reference } = stripe.refund(request).await.unwrap()
    else {
        panic!("expected a refund");
    };
    let read = stripe.refund_status(&refund_reference).await;
    assert!(
        matches!(&read, Ok(RefundOutcome::Succeeded { refund_reference: r }) if *r == refund_reference),
        "{read:?}"
    );
    let refunds = localstripe.refunds().await;
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(refunds[0]["amount"], 250);
    assert_eq!(refunds[0]["metadata"]["refund"], row.to_string());
    // A reference localstripe never issued is not an answer about any refund.
    assert!(matches!(
        stripe.refund_status("re_unknown0000000000").await,
        Err(ProcessorError::Communication(_))
    ));
}
