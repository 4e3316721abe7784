//! The sandbox processor: every documented card, challenges, lookup and idempotency.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use checkout_domain::ports::{CardProcessor, ChallengeAnswer, ProcessorError, ProcessorOutcome};
use checkout_domain::values::AttemptId;
use checkout_processor::sandbox::cards;
use checkout_processor::SandboxProcessor;
use support::{card, unique_bytes, Payment};

/// The outcome expected for a payment.
type Expected = fn(&Payment) -> Result<ProcessorOutcome, ()>;
/// What the processor should hold for a payment.
type Held = fn(&Payment) -> Option<ProcessorOutcome>;

fn approved(payment: &Payment, captured: bool) -> ProcessorOutcome {
    ProcessorOutcome::Approved {
        processor_reference: format!("sbx_{}", payment.attempt),
        captured,
    }
}

fn declined(payment: &Payment, reason: &str) -> ProcessorOutcome {
    ProcessorOutcome::Declined {
        processor_reference: Some(format!("sbx_{}", payment.attempt)),
        reason: reason.into(),
    }
}

fn challenge(payment: &Payment) -> ProcessorOutcome {
    ProcessorOutcome::ChallengeRequired {
        processor_reference: format!("sbx_{}", payment.attempt),
        challenge_url: None,
    }
}

#[tokio::test]
async fn every_documented_card_gets_its_outcome() {
    let sandbox = SandboxProcessor::new();
    let cases: Vec<(&str, Expected)> = vec![
        (cards::APPROVED, |p| Ok(approved(p, true))),
        ("4242 4242 4242 4242", |p| Ok(approved(p, true))),
        (cards::APPROVED_NOT_CAPTURED, |p| Ok(approved(p, false))),
        (cards::DECLINED, |p| Ok(declined(p, "card_declined"))),
        (cards::INSUFFICIENT_FUNDS, |p| {
            Ok(declined(p, "insufficient_funds"))
        }),
        (cards::CHALLENGE, |p| Ok(challenge(p))),
        (cards::CHALLENGE_OTHER, |p| Ok(challenge(p))),
        ("5555555555554444", |p| Ok(approved(p, true))),
        ("378282246310005", |p| Ok(approved(p, true))),
    ];
    for (number, expected) in cases {
        let cvv = if number.starts_with('3') {
            "1234"
        } else {
            "737"
        };
        let payment = Payment::new(support::card_with(number, cvv));
        let got = sandbox.authorize(payment.request()).await;
        assert_eq!(got.map_err(|_| ()), expected(&payment), "card {number}");
    }
}

#[tokio::test]
async fn the_error_cards_fail_as_documented_without_card_data() {
    let sandbox = SandboxProcessor::new();
    for number in [cards::COMMUNICATION_ERROR, cards::LOST_ANSWER] {
        let payment = Payment::new(card(number));
        let error = sandbox.authorize(payment.request()).await.unwrap_err();
        assert!(
            matches!(error, ProcessorError::Communication(_)),
            "{number}: {error:?}"
        );
        payment.assert_no_card_data(&error.to_string());
    }
    let payment = Payment::new(card(cards::CONTROLLED_ERROR));
    let error = sandbox.authorize(payment.request()).await.unwrap_err();
    assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
    payment.assert_no_card_data(&error.to_string());
}

#[tokio::test]
async fn a_passed_challenge_approves_and_captures() {
    let sandbox = SandboxProcessor::new();
    let payment = Payment::new(card(cards::CHALLENGE));
    let Ok(ProcessorOutcome::ChallengeRequired {
        processor_reference,
        challenge_url: None,
    }) = sandbox.authorize(payment.request()).await
    else {
        panic!("no challenge");
    };
    assert_eq!(
        sandbox.lookup(payment.attempt).await,
        Ok(Some(challenge(&payment)))
    );

    let outcome = sandbox
        .complete_challenge(&processor_reference, ChallengeAnswer::Passed)
        .await;
    assert_eq!(outcome, Ok(approved(&payment, true)));
    assert_eq!(
        sandbox.lookup(payment.attempt).await,
        Ok(Some(approved(&payment, true)))
    );
    // A repeated answer, even a different one, gets the settled outcome.
    let again = sandbox
        .complete_challenge(&processor_reference, ChallengeAnswer::Failed)
        .await;
    assert_eq!(again, Ok(approved(&payment, true)));
    assert_eq!(sandbox.authorizations(), 1);
}

#[tokio::test]
async fn a_failed_challenge_declines() {
    let sandbox = SandboxProcessor::new();
    let payment = Payment::new(card(cards::CHALLENGE_OTHER));
    let reference = format!("sbx_{}", payment.attempt);
    assert_eq!(
        sandbox.authorize(payment.request()).await,
        Ok(challenge(&payment))
    );
    let outcome = sandbox
        .complete_challenge(&reference, ChallengeAnswer::Failed)
        .await;
    assert_eq!(
        outcome,
        Ok(declined(&payment, cards::REASON_AUTHENTICATION_FAILED))
    );
    assert_eq!(
        sandbox.lookup(payment.attempt).await,
        Ok(Some(declined(
            &payment,
            cards::REASON_AUTHENTICATION_FAILED
        )))
    );
}

#[tokio::test]
async fn a_challenge_answered_returned_is_not_completed() {
    let sandbox = SandboxProcessor::new();
    let payment = Payment::new(card(cards::CHALLENGE));
    sandbox.authorize(payment.request()).await.unwrap();
    let outcome = sandbox
        .complete_challenge(
            &format!("sbx_{}", payment.attempt),
            ChallengeAnswer::Returned,
        )
        .await;
    assert_eq!(
        outcome,
        Ok(declined(
            &payment,
            cards::REASON_AUTHENTICATION_NOT_COMPLETED
        ))
    );
}

#[tokio::test]
async fn an_unknown_challenge_is_a_controlled_error() {
    let sandbox = SandboxProcessor::new();
    let payment = Payment::new(card(cards::APPROVED));
    sandbox.authorize(payment.request()).await.unwrap();
    for reference in ["sbx_nope", &format!("sbx_{}", payment.attempt)] {
        let outcome = sandbox
            .complete_challenge(reference, ChallengeAnswer::Passed)
            .await;
        assert!(
            matches!(outcome, Err(ProcessorError::Controlled(_))),
            "{reference}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn lookup_reports_what_the_processor_holds() {
    let sandbox = SandboxProcessor::new();
    let expectations: Vec<(&str, Held)> = vec![
        (cards::APPROVED, |p| Some(approved(p, true))),
        (cards::APPROVED_NOT_CAPTURED, |p| Some(approved(p, false))),
        (cards::DECLINED, |p| Some(declined(p, "card_declined"))),
        (cards::CHALLENGE, |p| Some(challenge(p))),
        // Never reached the processor: certainly no charge.
        (cards::COMMUNICATION_ERROR, |_| None),
        // The answer was lost, the charge was not.
        (cards::LOST_ANSWER, |p| Some(approved(p, true))),
        // Refused: nothing charged.
        (cards::CONTROLLED_ERROR, |_| None),
    ];
    for (number, expected) in expectations {
        let payment = Payment::new(card(number));
        let _ = sandbox.authorize(payment.request()).await;
        assert_eq!(
            sandbox.lookup(payment.attempt).await,
            Ok(expected(&payment)),
            "card {number}"
        );
    }
    let never_seen = AttemptId::from_random_bytes(unique_bytes());
    assert_eq!(sandbox.lookup(never_seen).await, Ok(None));
}

#[tokio::test]
async fn the_same_attempt_twice_is_one_authorisation() {
    let sandbox = SandboxProcessor::new();
    let payment = Payment::new(card(cards::APPROVED_NOT_CAPTURED));
    let first = sandbox.authorize(payment.request()).await;
    let second = sandbox.authorize(payment.request()).await;
    assert_eq!(first, Ok(approved(&payment, false)));
    assert_eq!(second, first);

    // Same attempt with another card: still the first answer, no new charge.
    let mut other_card = Payment::new(card(cards::DECLINED));
    other_card.attempt = payment.attempt;
    assert_eq!(sandbox.authorize(other_card.request()).await, first);

    assert_eq!(sandbox.authorizations(), 1);
    assert_eq!(sandbox.authorize_calls(), 3);
}

#[tokio::test]
async fn repeating_a_lost_answer_returns_the_charge() {
    let sandbox = SandboxProcessor::new();
    let payment = Payment::new(card(cards::LOST_ANSWER));
    assert!(sandbox.authorize(payment.request()).await.is_err());
    assert_eq!(
        sandbox.authorize(payment.request()).await,
        Ok(approved(&payment, true))
    );
    assert_eq!(sandbox.authorizations(), 1);

    let unreachable = Payment::new(card(cards::COMMUNICATION_ERROR));
    assert!(sandbox.authorize(unreachable.request()).await.is_err());
    assert!(sandbox.authorize(unreachable.request()).await.is_err());
    assert_eq!(sandbox.lookup(unreachable.attempt).await, Ok(None));
}

#[tokio::test]
async fn the_counter_counts_every_new_attempt() {
    let sandbox = SandboxProcessor::new();
    for number in [cards::APPROVED, cards::DECLINED, cards::CHALLENGE] {
        sandbox
            .authorize(Payment::new(card(number)).request())
            .await
            .unwrap();
    }
    assert_eq!(sandbox.authorizations(), 3);
}
