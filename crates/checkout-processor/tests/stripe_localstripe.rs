//! The Stripe adapter in localstripe's dialect (`testing::localstripe`: no `return_url`, a
//! challenge answered through localstripe's `_authenticate`) against a real localstripe,
//! started by each test (a fresh, empty store). Needs `scripts/localstripe.sh` to have run once
//! (or `LOCALSTRIPE_BIN`).
//!
//! Each test pays as the service does (`tokenize`, then `authorize` with the payment method),
//! then checks what a payer and a merchant care about through localstripe itself: how many
//! PaymentIntents exist and whether money was taken.
//!
//! Not tested here: a replayed `authorize` of one attempt. localstripe (1.15) ignores the
//! `Idempotency-Key` header (nothing in its server reads it), so a replay against it creates a
//! second PaymentIntent, which real Stripe never does. The adapter's side of idempotency (the
//! same key and the same form on every send) is checked in `stripe_faults.rs`, and replays
//! against a Stripe-like server that honours keys in `fake_stripe.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::time::Duration;

use checkout_domain::ports::{CardProcessor, ProcessorError, ProcessorOutcome};
use checkout_processor::testing::localstripe::LocalstripeProcessor;
use checkout_processor::{StripeConfig, StripeProcessor};
use support::localstripe::Localstripe;
use support::{card, card_with, Payment};

fn processor(localstripe: &Localstripe) -> LocalstripeProcessor {
    processor_with_key(localstripe, "sk_test_hosted_checkout")
}

fn processor_with_key(localstripe: &Localstripe, key: &str) -> LocalstripeProcessor {
    LocalstripeProcessor::new(config(localstripe, key)).expect("valid config")
}

fn config(localstripe: &Localstripe, key: &str) -> StripeConfig {
    StripeConfig {
        base_url: localstripe.base_url.clone(),
        api_key: key.into(),
        timeout: Duration::from_secs(10),
    }
}

/// Pays with a challenge card and returns the processor reference of its challenge.
async fn challenged(stripe: &LocalstripeProcessor, payment: &mut Payment) -> String {
    match payment.pay(stripe).await {
        Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference,
            challenge_url: None,
        }) => processor_reference,
        other => panic!("expected a challenge on the service's page, got {other:?}"),
    }
}

/// Checks that localstripe holds exactly one PaymentIntent, `reference`, and returns it.
async fn the_only_intent(localstripe: &Localstripe, reference: &str) -> serde_json::Value {
    let intents = localstripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(intents[0]["id"], reference, "{intents:?}");
    intents[0].clone()
}

#[tokio::test]
async fn a_good_card_is_approved_and_captured_once() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let mut payment = Payment::new(card("4242424242424242"));

    let payment_method = payment.tokenize(&stripe).await.unwrap();
    assert!(payment_method.starts_with("pm_"), "{payment_method}");
    // Tokenizing made no intent and took no money.
    assert!(localstripe.payment_intents().await.is_empty());
    assert!(localstripe.succeeded_charges().await.is_empty());

    let outcome = stripe.authorize(payment.request()).await;
    let Ok(ProcessorOutcome::Approved {
        processor_reference,
        captured: true,
    }) = &outcome
    else {
        panic!("expected an approval, got {outcome:?}");
    };
    assert!(
        processor_reference.starts_with("pi_"),
        "{processor_reference}"
    );
    // retrieve agrees, and changes nothing.
    assert_eq!(stripe.retrieve(processor_reference).await, outcome.clone());

    let intent = the_only_intent(&localstripe, processor_reference).await;
    assert_eq!(intent["status"], "succeeded");
    assert_eq!(intent["amount"], 1050);
    assert_eq!(intent["currency"], "usd");
    assert_eq!(intent["payment_method"], payment_method.as_str());
    assert_eq!(
        intent["metadata"]["attempt"],
        payment.attempt.to_string().as_str()
    );
    assert_eq!(
        intent["metadata"]["session"],
        payment.session.to_string().as_str()
    );
    assert_eq!(
        intent["metadata"]["internal_reference"],
        payment.reference.as_str()
    );
    let charges = localstripe.succeeded_charges().await;
    assert_eq!(charges.len(), 1, "{charges:?}");
    assert_eq!(charges[0]["amount"], 1050);
    assert_eq!(charges[0]["captured"], true);
}

#[tokio::test]
async fn amounts_in_other_currencies_are_sent_in_minor_units() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    for (value, currency, minor_units) in [
        ("1500", "JPY", 1500),
        ("1.250", "KWD", 1250),
        ("25000.75", "CRC", 2_500_075),
    ] {
        let mut payment = Payment::of(card("4242424242424242"), value, currency);
        let outcome = payment.pay(&stripe).await;
        let Ok(ProcessorOutcome::Approved {
            processor_reference,
            captured: true,
        }) = &outcome
        else {
            panic!("{value} {currency}: {outcome:?}");
        };
        let intent = localstripe.payment_intent(processor_reference).await;
        assert_eq!(intent["amount"], minor_units, "{value} {currency}");
        assert_eq!(
            intent["currency"],
            currency.to_ascii_lowercase(),
            "{value} {currency}"
        );
    }
    assert_eq!(localstripe.succeeded_charges().await.len(), 3);
}

#[tokio::test]
async fn a_declined_card_is_declined_and_nothing_is_taken() {
    // localstripe declines 4000000000000341 at charge time, with a 402 (it declines
    // 4000000000000002 only when the card is attached to a customer, which a one-off payment
    // does not do).
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let mut payment = Payment::new(card("4000000000000341"));

    let outcome = payment.pay(&stripe).await;
    let Ok(ProcessorOutcome::Declined { reason, .. }) = &outcome else {
        panic!("expected a decline, got {outcome:?}");
    };
    assert_eq!(reason, "card_declined");
    payment.assert_no_card_data(reason);

    // One intent, left waiting for another payment method; no money taken.
    let intents = localstripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(intents[0]["status"], "requires_payment_method");
    assert!(localstripe.succeeded_charges().await.is_empty());
}

#[tokio::test]
async fn a_passed_challenge_is_approved_and_captured() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let mut payment = Payment::new(card("4000002760003184"));

    let reference = challenged(&stripe, &mut payment).await;
    assert!(reference.starts_with("pi_"), "{reference}");
    // Waiting for the payer: nothing taken yet, and retrieve says so.
    assert!(matches!(
        stripe.retrieve(&reference).await,
        Ok(ProcessorOutcome::ChallengeRequired { processor_reference, .. })
            if processor_reference == reference
    ));
    assert!(localstripe.succeeded_charges().await.is_empty());

    let approved = ProcessorOutcome::Approved {
        processor_reference: reference.clone(),
        captured: true,
    };
    assert_eq!(
        stripe.answer_challenge(&reference, true).await,
        Ok(approved.clone())
    );
    assert_eq!(stripe.retrieve(&reference).await, Ok(approved.clone()));
    // Answering again reads the settled intent and charges nothing more.
    assert_eq!(
        stripe.answer_challenge(&reference, true).await,
        Ok(approved.clone())
    );
    assert_eq!(
        stripe.answer_challenge(&reference, false).await,
        Ok(approved)
    );
    the_only_intent(&localstripe, &reference).await;
    assert_eq!(localstripe.succeeded_charges().await.len(), 1);
}

#[tokio::test]
async fn a_failed_challenge_is_declined_and_nothing_is_taken() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let mut payment = Payment::new(card("4000000000003220"));

    let reference = challenged(&stripe, &mut payment).await;
    let declined = ProcessorOutcome::Declined {
        processor_reference: Some(reference.clone()),
        reason: "payment_intent_authentication_failure".into(),
    };
    assert_eq!(
        stripe.answer_challenge(&reference, false).await,
        Ok(declined.clone())
    );
    assert_eq!(stripe.retrieve(&reference).await, Ok(declined.clone()));
    // A late "passed" cannot revive it.
    assert_eq!(
        stripe.answer_challenge(&reference, true).await,
        Ok(declined)
    );
    the_only_intent(&localstripe, &reference).await;
    assert!(localstripe.succeeded_charges().await.is_empty());
}

#[tokio::test]
async fn a_card_declined_after_a_passed_challenge_is_declined() {
    // localstripe: 4000008260003178 needs authentication, then its charge is declined.
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let mut payment = Payment::new(card("4000008260003178"));

    let reference = challenged(&stripe, &mut payment).await;
    let declined = ProcessorOutcome::Declined {
        processor_reference: Some(reference.clone()),
        reason: "card_declined".into(),
    };
    assert_eq!(
        stripe.answer_challenge(&reference, true).await,
        Ok(declined.clone())
    );
    assert_eq!(stripe.retrieve(&reference).await, Ok(declined));
    assert!(localstripe.succeeded_charges().await.is_empty());
}

#[tokio::test]
async fn cancelling_a_challenge_cancels_the_intent() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let mut payment = Payment::new(card("4000002760003184"));

    let reference = challenged(&stripe, &mut payment).await;
    let canceled = ProcessorOutcome::Canceled {
        processor_reference: reference.clone(),
    };
    assert_eq!(stripe.cancel(&reference).await, Ok(canceled.clone()));
    assert_eq!(stripe.retrieve(&reference).await, Ok(canceled.clone()));
    // Idempotent (localstripe refuses the second cancel; the adapter reads the intent).
    assert_eq!(stripe.cancel(&reference).await, Ok(canceled.clone()));
    // A payer answering the challenge afterwards cannot charge a cancelled intent.
    assert_eq!(
        stripe.answer_challenge(&reference, true).await,
        Ok(canceled)
    );
    let intent = the_only_intent(&localstripe, &reference).await;
    assert_eq!(intent["status"], "canceled");
    assert!(localstripe.succeeded_charges().await.is_empty());
}

#[tokio::test]
async fn cancelling_a_succeeded_intent_reports_the_capture_and_keeps_it() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let mut payment = Payment::new(card("4242424242424242"));

    let outcome = payment.pay(&stripe).await.unwrap();
    let ProcessorOutcome::Approved {
        processor_reference: reference,
        captured: true,
    } = &outcome
    else {
        panic!("expected an approval, got {outcome:?}");
    };
    // localstripe refuses to cancel a succeeded intent; the adapter reads and reports it.
    assert_eq!(stripe.cancel(reference).await, Ok(outcome.clone()));
    assert_eq!(stripe.retrieve(reference).await, Ok(outcome.clone()));
    let intent = the_only_intent(&localstripe, reference).await;
    assert_eq!(intent["status"], "succeeded");
    assert_eq!(localstripe.succeeded_charges().await.len(), 1);
}

#[tokio::test]
async fn retrieving_an_intent_localstripe_does_not_have_is_a_communication_error() {
    // A 404 on a read says nothing about a charge: never "nothing was charged".
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let outcome = stripe.retrieve("pi_doesnotexist").await;
    assert!(
        matches!(outcome, Err(ProcessorError::Communication(_))),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_payment_method_localstripe_never_issued_is_refused_and_nothing_is_made() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let payment = Payment::with_payment_method(card("4242424242424242"), "pm_doesnotexist");

    let error = stripe.authorize(payment.request()).await.unwrap_err();
    assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
    assert!(error.to_string().contains("HTTP 404"), "{error}");
    assert!(localstripe.payment_intents().await.is_empty());
}

#[tokio::test]
async fn a_card_localstripe_refuses_is_a_controlled_error_at_tokenize_without_card_data() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    // localstripe takes 16-digit numbers and 3-digit CVCs only: an Amex card is refused (400).
    let mut payment = Payment::new(card_with("378282246310005", "7373"));

    let error = payment.tokenize(&stripe).await.unwrap_err();
    assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
    assert!(error.to_string().contains("HTTP 400"), "{error}");
    payment.assert_error_has_no_card_data(&error);
    assert!(localstripe.payment_intents().await.is_empty());
}

#[tokio::test]
async fn a_key_localstripe_does_not_accept_is_a_controlled_error() {
    let localstripe = Localstripe::start();
    let stripe = processor_with_key(&localstripe, "pk_test_not_a_secret_key");
    let mut payment = Payment::new(card("4242424242424242"));

    let error = payment.pay(&stripe).await.unwrap_err();
    assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
    assert!(error.to_string().contains("HTTP 401"), "{error}");
    assert!(
        !error.to_string().contains("pk_test_not_a_secret_key"),
        "{error}"
    );
    payment.assert_error_has_no_card_data(&error);
    assert!(localstripe.payment_intents().await.is_empty());
}

#[tokio::test]
async fn the_production_adapter_sends_return_url_which_localstripe_refuses() {
    // Why the dialect exists: the production adapter always sends `return_url` and never
    // sends the intent again without it, so localstripe refuses the payment and makes nothing.
    let localstripe = Localstripe::start();
    let stripe =
        StripeProcessor::new(config(&localstripe, "sk_test_hosted_checkout")).expect("config");
    let mut payment = Payment::new(card("4242424242424242"));

    let error = payment.pay(&stripe).await.unwrap_err();
    assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
    assert!(
        error.to_string().contains("Unexpected return_url"),
        "{error}"
    );
    assert!(localstripe.payment_intents().await.is_empty());
    assert!(localstripe.succeeded_charges().await.is_empty());
}
