//! The sandbox processor through the port as the service uses it (`tokenize`, then
//! `authorize` with the payment-method reference): every documented card, the error cards,
//! challenges, cancels, reads, and idempotency by attempt.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use checkout_domain::ports::{CardProcessor, ProcessorError, ProcessorOutcome};
use checkout_processor::sandbox::cards;
use checkout_processor::SandboxProcessor;
use support::{card, card_with, Payment};

/// The outcome expected for a payment.
type Expected = fn(&Payment) -> ProcessorOutcome;

fn reference(payment: &Payment) -> String {
    format!("sbx_{}", payment.attempt)
}

fn approved(payment: &Payment, captured: bool) -> ProcessorOutcome {
    ProcessorOutcome::Approved {
        processor_reference: reference(payment),
        captured,
    }
}

fn declined(payment: &Payment, reason: &str) -> ProcessorOutcome {
    ProcessorOutcome::Declined {
        processor_reference: Some(reference(payment)),
        reason: reason.into(),
    }
}

fn challenge(payment: &Payment) -> ProcessorOutcome {
    ProcessorOutcome::ChallengeRequired {
        processor_reference: reference(payment),
        challenge_url: None,
    }
}

fn canceled(payment: &Payment) -> ProcessorOutcome {
    ProcessorOutcome::Canceled {
        processor_reference: reference(payment),
    }
}

/// A payment of `number` that has been tokenized and authorised, with the answer.
async fn paid(
    sandbox: &SandboxProcessor,
    number: &str,
) -> (Payment, Result<ProcessorOutcome, ProcessorError>) {
    let mut payment = Payment::new(card(number));
    let answer = payment.pay(sandbox).await;
    (payment, answer)
}

/// Checks that a payment-method reference is the sandbox's `pm_sbx_<behaviour>_<attempt>`:
/// a tag of letters and the attempt, so no card data can be in it.
fn assert_is_a_sandbox_payment_method(reference: &str, payment: &Payment) {
    let rest = reference
        .strip_prefix("pm_sbx_")
        .unwrap_or_else(|| panic!("not a sandbox payment method: {reference}"));
    let (tag, attempt) = rest
        .split_once('_')
        .unwrap_or_else(|| panic!("no behaviour tag: {reference}"));
    assert!(
        !tag.is_empty() && tag.bytes().all(|b| b.is_ascii_lowercase()),
        "{reference}"
    );
    assert_eq!(
        attempt,
        payment.attempt.to_string().replace('-', ""),
        "{reference}"
    );
}

#[tokio::test]
async fn every_documented_card_gets_its_outcome() {
    let sandbox = SandboxProcessor::new();
    let cases: Vec<(&str, &str, Expected)> = vec![
        (cards::APPROVED, "737", |p| approved(p, true)),
        ("4242 4242 4242 4242", "737", |p| approved(p, true)),
        ("4242-4242-4242-4242", "737", |p| approved(p, true)),
        (cards::APPROVED_NOT_CAPTURED, "737", |p| approved(p, false)),
        (cards::DECLINED, "737", |p| declined(p, "card_declined")),
        (cards::INSUFFICIENT_FUNDS, "737", |p| {
            declined(p, "insufficient_funds")
        }),
        (cards::CHALLENGE, "737", challenge),
        (cards::CHALLENGE_OTHER, "737", challenge),
        // Any other Luhn-valid number is approved and captured.
        ("5555555555554444", "737", |p| approved(p, true)),
        ("378282246310005", "1234", |p| approved(p, true)),
    ];
    for (number, cvv, expected) in cases {
        let mut payment = Payment::new(card_with(number, cvv));
        let payment_method = payment.tokenize(&sandbox).await.unwrap();
        assert_is_a_sandbox_payment_method(&payment_method, &payment);
        let answer = sandbox.authorize(payment.request()).await;
        assert_eq!(answer, Ok(expected(&payment)), "card {number}");
        // What the processor holds is what it answered.
        assert_eq!(
            sandbox.retrieve(&reference(&payment)).await,
            Ok(expected(&payment)),
            "card {number}"
        );
    }
    // One authorisation per payment, no more.
    assert_eq!(sandbox.authorizations(), 10);
    assert_eq!(sandbox.authorize_calls(), 10);
}

#[tokio::test]
async fn tokenizing_charges_nothing() {
    let sandbox = SandboxProcessor::new();
    for number in [
        cards::APPROVED,
        cards::APPROVED_NOT_CAPTURED,
        cards::LOST_ANSWER,
        cards::CONTROLLED_ERROR,
        cards::CHALLENGE,
    ] {
        let mut payment = Payment::new(card(number));
        payment.tokenize(&sandbox).await.unwrap();
        // No authorisation was asked for: the processor holds nothing for the attempt.
        assert!(
            matches!(
                sandbox.retrieve(&reference(&payment)).await,
                Err(ProcessorError::Controlled(_))
            ),
            "card {number}"
        );
    }
    assert_eq!(sandbox.authorizations(), 0);
    assert_eq!(sandbox.authorize_calls(), 0);
}

#[tokio::test]
async fn a_card_the_processor_cannot_take_fails_at_tokenize_and_charges_nothing() {
    let sandbox = SandboxProcessor::new();
    let mut payment = Payment::new(card(cards::COMMUNICATION_ERROR));
    let error = payment.tokenize(&sandbox).await.unwrap_err();
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
    payment.assert_error_has_no_card_data(&error);
    // Tried again, the same: and no authorisation was ever asked for.
    assert!(matches!(
        payment.pay(&sandbox).await,
        Err(ProcessorError::Communication(_))
    ));
    assert_eq!(sandbox.authorizations(), 0);
    assert_eq!(sandbox.authorize_calls(), 0);
}

#[tokio::test]
async fn a_refused_authorisation_is_a_controlled_error_and_a_replay_says_the_same() {
    let sandbox = SandboxProcessor::new();
    let (payment, answer) = paid(&sandbox, cards::CONTROLLED_ERROR).await;
    let error = answer.unwrap_err();
    assert!(matches!(error, ProcessorError::Controlled(_)), "{error:?}");
    payment.assert_error_has_no_card_data(&error);
    // A replay returns what the first request did: still refused, nothing charged.
    assert_eq!(sandbox.authorize(payment.request()).await, Err(error));
    assert_eq!(sandbox.authorizations(), 1);
    assert_eq!(sandbox.authorize_calls(), 2);
}

#[tokio::test]
async fn a_lost_answer_is_a_communication_error_without_card_data() {
    let sandbox = SandboxProcessor::new();
    let (payment, answer) = paid(&sandbox, cards::LOST_ANSWER).await;
    let error = answer.unwrap_err();
    assert!(
        matches!(error, ProcessorError::Communication(_)),
        "{error:?}"
    );
    payment.assert_error_has_no_card_data(&error);
    // The answer was lost, the charge was not.
    assert_eq!(
        sandbox.retrieve(&reference(&payment)).await,
        Ok(approved(&payment, true))
    );
}

#[tokio::test]
async fn replaying_a_lost_answer_returns_the_charge_without_charging_again() {
    let sandbox = SandboxProcessor::new();
    let (payment, answer) = paid(&sandbox, cards::LOST_ANSWER).await;
    assert!(matches!(answer, Err(ProcessorError::Communication(_))));

    let replay = sandbox.authorize(payment.request()).await;
    assert_eq!(replay, Ok(approved(&payment, true)));
    // Every later replay agrees, and there is still one authorisation.
    assert_eq!(sandbox.authorize(payment.request()).await, replay);
    assert_eq!(sandbox.authorizations(), 1);
    assert_eq!(sandbox.authorize_calls(), 3);
}

#[tokio::test]
async fn the_same_attempt_twice_is_one_authorisation() {
    let sandbox = SandboxProcessor::new();
    let (payment, first) = paid(&sandbox, cards::APPROVED_NOT_CAPTURED).await;
    assert_eq!(first, Ok(approved(&payment, false)));
    let second = sandbox.authorize(payment.request()).await;
    assert_eq!(second, first);

    // The same attempt with another card's payment method: still the first answer, no new
    // charge and no decline.
    let mut other = Payment::new(card(cards::DECLINED));
    other.attempt = payment.attempt;
    other.tokenize(&sandbox).await.unwrap();
    assert_eq!(sandbox.authorize(other.request()).await, first);

    assert_eq!(sandbox.authorizations(), 1);
    assert_eq!(sandbox.authorize_calls(), 3);
    assert_eq!(
        sandbox.retrieve(&reference(&payment)).await,
        Ok(approved(&payment, false))
    );
}

#[tokio::test]
async fn every_card_replayed_gets_its_first_answer() {
    let sandbox = SandboxProcessor::new();
    let numbers = [
        cards::APPROVED,
        cards::APPROVED_NOT_CAPTURED,
        cards::DECLINED,
        cards::INSUFFICIENT_FUNDS,
        cards::CHALLENGE,
        cards::CONTROLLED_ERROR,
    ];
    for number in numbers {
        let (payment, first) = paid(&sandbox, number).await;
        assert_eq!(
            sandbox.authorize(payment.request()).await,
            first,
            "card {number}"
        );
    }
    assert_eq!(sandbox.authorizations(), numbers.len() as u64);
    assert_eq!(sandbox.authorize_calls(), 2 * numbers.len() as u64);
}

#[tokio::test]
async fn a_payment_method_the_sandbox_never_issued_is_refused() {
    let sandbox = SandboxProcessor::new();
    for payment_method in ["pm_card_visa", "pm_sbx_nonsense_0", "", "4242424242424242"] {
        let payment = Payment::with_payment_method(card(cards::APPROVED), payment_method);
        let answer = sandbox.authorize(payment.request()).await;
        assert!(
            matches!(answer, Err(ProcessorError::Controlled(_))),
            "{payment_method}: {answer:?}"
        );
    }
    assert_eq!(sandbox.authorizations(), 0);
}

#[tokio::test]
async fn a_passed_challenge_approves_and_captures() {
    let sandbox = SandboxProcessor::new();
    let (payment, answer) = paid(&sandbox, cards::CHALLENGE).await;
    assert_eq!(answer, Ok(challenge(&payment)));
    let reference = reference(&payment);
    // Until the payer answers, the processor holds the challenge.
    assert_eq!(sandbox.retrieve(&reference).await, Ok(challenge(&payment)));

    let outcome = sandbox.answer_challenge(&reference, true).await;
    assert_eq!(outcome, Ok(approved(&payment, true)));
    assert_eq!(
        sandbox.retrieve(&reference).await,
        Ok(approved(&payment, true))
    );
    // A repeated answer, even a different one, gets what the processor holds.
    assert_eq!(
        sandbox.answer_challenge(&reference, false).await,
        Ok(approved(&payment, true))
    );
    assert_eq!(
        sandbox.answer_challenge(&reference, true).await,
        Ok(approved(&payment, true))
    );
    assert_eq!(sandbox.authorizations(), 1);
}

#[tokio::test]
async fn a_failed_challenge_declines() {
    let sandbox = SandboxProcessor::new();
    let (payment, answer) = paid(&sandbox, cards::CHALLENGE_OTHER).await;
    assert_eq!(answer, Ok(challenge(&payment)));
    let reference = reference(&payment);
    let failed = declined(&payment, cards::REASON_AUTHENTICATION_FAILED);

    assert_eq!(
        sandbox.answer_challenge(&reference, false).await,
        Ok(failed.clone())
    );
    assert_eq!(sandbox.retrieve(&reference).await, Ok(failed.clone()));
    // Passing afterwards changes nothing.
    assert_eq!(
        sandbox.answer_challenge(&reference, true).await,
        Ok(failed.clone())
    );
    assert_eq!(sandbox.retrieve(&reference).await, Ok(failed));
}

#[tokio::test]
async fn answering_a_payment_that_is_not_waiting_for_a_challenge_returns_what_it_holds() {
    let sandbox = SandboxProcessor::new();
    let (payment, _) = paid(&sandbox, cards::APPROVED_NOT_CAPTURED).await;
    assert_eq!(
        sandbox.answer_challenge(&reference(&payment), true).await,
        Ok(approved(&payment, false))
    );
    let (payment, _) = paid(&sandbox, cards::DECLINED).await;
    assert_eq!(
        sandbox.answer_challenge(&reference(&payment), true).await,
        Ok(declined(&payment, "card_declined"))
    );
}

#[tokio::test]
async fn cancelling_a_challenge_cancels_it() {
    let sandbox = SandboxProcessor::new();
    let (payment, _) = paid(&sandbox, cards::CHALLENGE).await;
    let reference = reference(&payment);

    assert_eq!(sandbox.cancel(&reference).await, Ok(canceled(&payment)));
    assert_eq!(sandbox.retrieve(&reference).await, Ok(canceled(&payment)));
    // Idempotent; and a late challenge answer cannot charge a cancelled payment.
    assert_eq!(sandbox.cancel(&reference).await, Ok(canceled(&payment)));
    assert_eq!(
        sandbox.answer_challenge(&reference, true).await,
        Ok(canceled(&payment))
    );
    assert_eq!(sandbox.retrieve(&reference).await, Ok(canceled(&payment)));
}

#[tokio::test]
async fn cancelling_a_captured_payment_reports_the_capture_unchanged() {
    let sandbox = SandboxProcessor::new();
    let (payment, _) = paid(&sandbox, cards::APPROVED).await;
    let reference = reference(&payment);
    assert_eq!(
        sandbox.cancel(&reference).await,
        Ok(approved(&payment, true))
    );
    assert_eq!(
        sandbox.retrieve(&reference).await,
        Ok(approved(&payment, true))
    );

    // A passed challenge is captured too.
    let (passed, _) = paid(&sandbox, cards::CHALLENGE).await;
    let passed_reference = self::reference(&passed);
    sandbox
        .answer_challenge(&passed_reference, true)
        .await
        .unwrap();
    assert_eq!(
        sandbox.cancel(&passed_reference).await,
        Ok(approved(&passed, true))
    );
}

#[tokio::test]
async fn cancelling_an_uncaptured_approval_cancels_it() {
    let sandbox = SandboxProcessor::new();
    let (payment, _) = paid(&sandbox, cards::APPROVED_NOT_CAPTURED).await;
    let reference = reference(&payment);
    assert_eq!(sandbox.cancel(&reference).await, Ok(canceled(&payment)));
    assert_eq!(sandbox.retrieve(&reference).await, Ok(canceled(&payment)));
}

#[tokio::test]
async fn cancelling_a_decline_reports_the_decline() {
    let sandbox = SandboxProcessor::new();
    let (payment, _) = paid(&sandbox, cards::INSUFFICIENT_FUNDS).await;
    assert_eq!(
        sandbox.cancel(&reference(&payment)).await,
        Ok(declined(&payment, "insufficient_funds"))
    );
}

#[tokio::test]
async fn an_unknown_reference_is_a_controlled_error_everywhere() {
    let sandbox = SandboxProcessor::new();
    // Another payment exists; these references are not its.
    let (payment, _) = paid(&sandbox, cards::CHALLENGE).await;
    for unknown in ["sbx_nope", "", &payment.attempt.to_string()] {
        assert!(
            matches!(
                sandbox.retrieve(unknown).await,
                Err(ProcessorError::Controlled(_))
            ),
            "retrieve {unknown}"
        );
        assert!(
            matches!(
                sandbox.answer_challenge(unknown, true).await,
                Err(ProcessorError::Controlled(_))
            ),
            "answer_challenge {unknown}"
        );
        assert!(
            matches!(
                sandbox.cancel(unknown).await,
                Err(ProcessorError::Controlled(_))
            ),
            "cancel {unknown}"
        );
    }
    // And the real one was left alone.
    assert_eq!(
        sandbox.retrieve(&reference(&payment)).await,
        Ok(challenge(&payment))
    );
}

#[tokio::test]
async fn the_counters_count_new_attempts_and_every_call() {
    let sandbox = SandboxProcessor::new();
    let mut payments = Vec::new();
    for number in [cards::APPROVED, cards::DECLINED, cards::CHALLENGE] {
        let (payment, answer) = paid(&sandbox, number).await;
        answer.unwrap();
        payments.push(payment);
    }
    for payment in &payments {
        sandbox.authorize(payment.request()).await.unwrap();
    }
    assert_eq!(sandbox.authorizations(), 3);
    assert_eq!(sandbox.authorize_calls(), 6);
}
