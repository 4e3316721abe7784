//! The Stripe adapter against a real localstripe, started by each test.
//! Needs `scripts/localstripe.sh` to have run once (or `LOCALSTRIPE_BIN`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::time::Duration;

use checkout_domain::ports::{CardProcessor, ChallengeAnswer, ProcessorError, ProcessorOutcome};
use checkout_domain::values::AttemptId;
use checkout_processor::{StripeConfig, StripeProcessor};
use support::localstripe::Localstripe;
use support::{card, card_with, unique_bytes, Payment};

fn processor(localstripe: &Localstripe) -> StripeProcessor {
    processor_with_key(localstripe, "sk_test_hosted_checkout")
}

fn processor_with_key(localstripe: &Localstripe, key: &str) -> StripeProcessor {
    StripeProcessor::new(StripeConfig {
        base_url: localstripe.base_url.clone(),
        api_key: key.into(),
        timeout: Duration::from_secs(10),
    })
    .expect("valid config")
}

/// Authorises a challenge card and returns the processor reference of its challenge.
async fn challenged(stripe: &StripeProcessor, payment: &Payment) -> String {
    match stripe.authorize(payment.request()).await {
        Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference,
            challenge_url: None,
        }) => processor_reference,
        other => panic!("expected a challenge, got {other:?}"),
    }
}

#[tokio::test]
async fn a_good_card_is_approved_and_captured() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let payment = Payment::new(card("4242424242424242"));

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
    // lookup finds the intent through metadata[attempt].
    assert_eq!(
        stripe.lookup(payment.attempt).await,
        Ok(Some(outcome.unwrap()))
    );
}

#[tokio::test]
async fn amounts_in_other_currencies_are_accepted() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    for (value, currency) in [("1500", "JPY"), ("1.250", "KWD"), ("25000.75", "CRC")] {
        let payment = Payment::of(card("4242424242424242"), value, currency);
        let outcome = stripe.authorize(payment.request()).await;
        assert!(
            matches!(
                outcome,
                Ok(ProcessorOutcome::Approved { captured: true, .. })
            ),
            "{value} {currency}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn a_declined_card_is_declined() {
    // localstripe declines 4000000000000341 at charge time (it declines 4000000000000002 only
    // when the card is attached to a customer, which a one-off payment does not do).
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let payment = Payment::new(card("4000000000000341"));

    let outcome = stripe.authorize(payment.request()).await;
    let Ok(ProcessorOutcome::Declined { reason, .. }) = &outcome else {
        panic!("expected a decline, got {outcome:?}");
    };
    assert_eq!(reason, "card_declined");
    payment.assert_no_card_data(reason);
    // The intent holds the failed payment.
    let found = stripe.lookup(payment.attempt).await;
    assert!(
        matches!(&found, Ok(Some(ProcessorOutcome::Declined { processor_reference: Some(r), reason }))
            if r.starts_with("pi_") && reason == "card_declined"),
        "{found:?}"
    );
}

#[tokio::test]
async fn a_passed_challenge_is_approved() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let payment = Payment::new(card("4000002760003184"));

    let reference = challenged(&stripe, &payment).await;
    assert!(reference.starts_with("pi_"), "{reference}");
    assert!(matches!(
        stripe.lookup(payment.attempt).await,
        Ok(Some(ProcessorOutcome::ChallengeRequired { .. }))
    ));

    let approved = ProcessorOutcome::Approved {
        processor_reference: reference.clone(),
        captured: true,
    };
    let outcome = stripe
        .complete_challenge(&reference, ChallengeAnswer::Passed)
        .await;
    assert_eq!(outcome, Ok(approved.clone()));
    // Answering again reads the settled intent.
    let again = stripe
        .complete_challenge(&reference, ChallengeAnswer::Passed)
        .await;
    assert_eq!(again, Ok(approved.clone()));
    assert_eq!(stripe.lookup(payment.attempt).await, Ok(Some(approved)));
}

#[tokio::test]
async fn a_failed_challenge_is_declined() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let payment = Payment::new(card("4000000000003220"));

    let reference = challenged(&stripe, &payment).await;
    let declined = ProcessorOutcome::Declined {
        processor_reference: Some(reference.clone()),
        reason: "payment_intent_authentication_failure".into(),
    };
    let outcome = stripe
        .complete_challenge(&reference, ChallengeAnswer::Failed)
        .await;
    assert_eq!(outcome, Ok(declined.clone()));
    assert_eq!(stripe.lookup(payment.attempt).await, Ok(Some(declined)));
}

#[tokio::test]
async fn a_card_declined_after_a_passed_challenge_is_declined() {
    // localstripe: 4000008260003178 needs authentication, then its charge is declined.
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let payment = Payment::new(card("4000008260003178"));

    let reference = challenged(&stripe, &payment).await;
    let declined = ProcessorOutcome::Declined {
        processor_reference: Some(reference.clone()),
        reason: "card_declined".into(),
    };
    let outcome = stripe
        .complete_challenge(&reference, ChallengeAnswer::Passed)
        .await;
    assert_eq!(outcome, Ok(declined.clone()));
    assert_eq!(stripe.lookup(payment.attempt).await, Ok(Some(declined)));
}

#[tokio::test]
async fn returning_without_authenticating_cancels_and_declines() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    let payment = Payment::new(card("4000002760003184"));

    let reference = challenged(&stripe, &payment).await;
    let outcome = stripe
        .complete_challenge(&reference, ChallengeAnswer::Returned)
        .await;
    assert_eq!(
        outcome,
        Ok(ProcessorOutcome::Declined {
            processor_reference: Some(reference),
            reason: "authentication_not_completed".into(),
        })
    );
    // A canceled intent holds no charge.
    assert_eq!(stripe.lookup(payment.attempt).await, Ok(None));
}

#[tokio::test]
async fn lookup_of_an_unknown_attempt_finds_no_charge() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    // Another attempt's intent is there, but not this one's.
    let other = Payment::new(card("4242424242424242"));
    stripe.authorize(other.request()).await.unwrap();

    let unknown = AttemptId::from_random_bytes(unique_bytes());
    assert_eq!(stripe.lookup(unknown).await, Ok(None));
}

#[tokio::test]
async fn a_request_localstripe_refuses_is_a_controlled_error_without_card_data() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    // localstripe takes 16-digit numbers and 3-digit CVCs only: an Amex card is refused (400).
    let payment = Payment::new(card_with("378282246310005", "7373"));

    let error = stripe.authorize(payment.request()).await.unwrap_err();
    assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
    assert!(error.to_string().contains("HTTP 400"), "{error}");
    payment.assert_no_card_data(&error.to_string());
}

#[tokio::test]
async fn a_key_localstripe_does_not_accept_is_a_controlled_error() {
    let localstripe = Localstripe::start();
    let stripe = processor_with_key(&localstripe, "pk_test_not_a_secret_key");
    let payment = Payment::new(card("4242424242424242"));

    let error = stripe.authorize(payment.request()).await.unwrap_err();
    assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
    assert!(error.to_string().contains("HTTP 401"), "{error}");
    assert!(
        !error.to_string().contains("pk_test_not_a_secret_key"),
        "{error}"
    );
}

#[tokio::test]
async fn a_malformed_reference_never_reaches_the_server() {
    let localstripe = Localstripe::start();
    let stripe = processor(&localstripe);
    for reference in ["", "pi_1/../../v1/charges", "pi_1?success=true"] {
        let outcome = stripe
            .complete_challenge(reference, ChallengeAnswer::Passed)
            .await;
        assert!(
            matches!(outcome, Err(ProcessorError::Controlled(_))),
            "{reference}: {outcome:?}"
        );
    }
}
