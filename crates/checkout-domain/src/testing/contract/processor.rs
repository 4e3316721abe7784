//! The MUST lines of [`CardProcessor`], one check each, for every processor the service can
//! talk to: the sandbox, the Stripe adapter against localstripe, and the Stripe adapter
//! against the Stripe-like stand-in. The cards are the processors' shared test numbers.
//!
//! A processor that cannot keep a promise for reasons of its own (localstripe ignores
//! idempotency keys and reports no captured amount) runs the suite without those checks, and
//! says why where it does.

// Test code: a value that does not parse, or a broken promise, is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crate::ports::{
    AuthorizationRequest, CaptureRequest, CardProcessor, ProcessorOutcome, RefundOutcome,
    RefundRequest,
};
use crate::terminal::CaptureMethod;
use crate::testing::builders::{amount, card, decimal, random_bytes, Payment, TEST_CVV};
use crate::values::{ActionId, RefundId};

/// A processor under test.
pub type Processor = Arc<dyn CardProcessor>;

/// The test card numbers that make a processor answer each way.
#[derive(Debug, Clone, Copy)]
pub struct Cards {
    /// Approved and captured.
    pub approved: &'static str,
    /// Authorised, not captured.
    pub authorise_only: &'static str,
    /// Declined by the issuer.
    pub declined: &'static str,
    /// Asks for a 3DS challenge.
    pub challenge: &'static str,
}

impl Cards {
    /// Stripe's test cards, which the sandbox and the stand-in answer as Stripe does.
    pub const STRIPE: Cards = Cards {
        approved: "4242424242424242",
        authorise_only: "4000000000000077",
        declined: "4000000000000002",
        challenge: "4000002760003184",
    };
}

/// A payment of 10.50 USD with the card `number`, tokenized at `processor`.
async fn tokenized(processor: &Processor, number: &str) -> Payment {
    let mut payment = Payment::new(card(number));
    payment.tokenize(processor.as_ref()).await.unwrap();
    payment
}

/// Authorises `payment`; panics on an error.
async fn authorize(processor: &Processor, payment: &Payment) -> ProcessorOutcome {
    processor.authorize(payment.request()).await.unwrap()
}

fn reference_of(outcome: &ProcessorOutcome) -> String {
    outcome
        .processor_reference()
        .unwrap_or_else(|| panic!("no reference: {outcome:?}"))
        .to_owned()
}

/// `tokenize`: the reference is the processor's, never card data.
pub async fn tokenize_gives_a_reference_without_card_data(processor: Processor, cards: Cards) {
    let payment = tokenized(&processor, cards.approved).await;
    let reference = &payment.payment_method;
    assert!(!reference.is_empty());
    assert!(!reference.contains(cards.approved), "{reference}");
    assert!(!reference.contains(&cards.approved[8..]), "{reference}");
    assert!(!reference.contains(TEST_CVV), "{reference}");
}

/// `authorize` and `retrieve`: an approved card is approved and captured, and a read
/// reports the same and changes nothing.
pub async fn an_approved_card_is_approved_and_a_read_reports_it(
    processor: Processor,
    cards: Cards,
) {
    let payment = tokenized(&processor, cards.approved).await;
    let outcome = authorize(&processor, &payment).await;
    assert!(
        matches!(outcome, ProcessorOutcome::Approved { captured: true, .. }),
        "{outcome:?}"
    );
    let reference = reference_of(&outcome);
    assert_eq!(processor.retrieve(&reference).await, Ok(outcome.clone()));
    assert_eq!(processor.retrieve(&reference).await, Ok(outcome));
}

/// `authorize` with manual capture: an approved card is held, not captured, and its replay
/// and a read say the same; a capture then takes it.
pub async fn a_manual_capture_holds_the_authorisation(processor: Processor, cards: Cards) {
    let payment = tokenized(&processor, cards.approved).await;
    let request = AuthorizationRequest {
        capture: CaptureMethod::Manual,
        ..payment.request()
    };
    let outcome = processor.authorize(request).await.unwrap();
    assert!(
        matches!(
            outcome,
            ProcessorOutcome::Approved {
                captured: false,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(processor.authorize(request).await, Ok(outcome.clone()));
    let reference = reference_of(&outcome);
    assert_eq!(processor.retrieve(&reference).await, Ok(outcome));
    let capture = CaptureRequest {
        action: ActionId::from_uuid(payment.attempt.as_uuid()),
        processor_reference: &reference,
        amount: amount("5.00", "USD"),
    };
    assert_eq!(processor.capture(capture).await, Ok(decimal("5.00")));
}

/// `authorize`: the same request sent again answers what the first did (the same
/// reference: one payment, not two).
pub async fn a_replayed_authorisation_answers_the_first_outcome(
    processor: Processor,
    cards: Cards,
) {
    for number in [cards.approved, cards.declined] {
        let payment = tokenized(&processor, number).await;
        let first = authorize(&processor, &payment).await;
        let again = authorize(&processor, &payment).await;
        assert_eq!(again, first, "{number}");
    }
}

/// `authorize`: a decline is an outcome (`Declined`), not an error.
pub async fn a_declined_card_is_declined(processor: Processor, cards: Cards) {
    let payment = tokenized(&processor, cards.declined).await;
    let outcome = authorize(&processor, &payment).await;
    assert!(
        matches!(outcome, ProcessorOutcome::Declined { .. }),
        "{outcome:?}"
    );
}

/// `authorize` and `cancel`: a challenge is asked for; cancelling it is confirmed, again
/// when repeated (idempotent), and a read reports it cancelled.
pub async fn a_cancelled_challenge_is_confirmed_cancelled_every_time(
    processor: Processor,
    cards: Cards,
) {
    let payment = tokenized(&processor, cards.challenge).await;
    let outcome = authorize(&processor, &payment).await;
    assert!(
        matches!(outcome, ProcessorOutcome::ChallengeRequired { .. }),
        "{outcome:?}"
    );
    let reference = reference_of(&outcome);
    let canceled = ProcessorOutcome::Canceled {
        processor_reference: reference.clone(),
    };
    assert_eq!(processor.cancel(&reference).await, Ok(canceled.clone()));
    assert_eq!(processor.cancel(&reference).await, Ok(canceled.clone()));
    assert_eq!(processor.retrieve(&reference).await, Ok(canceled));
}

/// `cancel`: an authorisation that already succeeded is not cancelled; the answer is what
/// it holds.
pub async fn cancelling_a_captured_payment_answers_what_it_holds(
    processor: Processor,
    cards: Cards,
) {
    let payment = tokenized(&processor, cards.approved).await;
    let outcome = authorize(&processor, &payment).await;
    let reference = reference_of(&outcome);
    assert_eq!(processor.cancel(&reference).await, Ok(outcome.clone()));
    assert_eq!(processor.retrieve(&reference).await, Ok(outcome));
}

/// `capture`: an authorisation held without capture is captured, and the same capture sent
/// again answers the amount captured instead of an error.
pub async fn a_capture_and_its_replay_answer_the_amount_captured(
    processor: Processor,
    cards: Cards,
) {
    let payment = tokenized(&processor, cards.authorise_only).await;
    let outcome = authorize(&processor, &payment).await;
    assert!(
        matches!(
            outcome,
            ProcessorOutcome::Approved {
                captured: false,
                ..
            }
        ),
        "{outcome:?}"
    );
    let reference = reference_of(&outcome);
    let request = CaptureRequest {
        action: ActionId::from_uuid(payment.attempt.as_uuid()),
        processor_reference: &reference,
        amount: payment.amount,
    };
    let captured = payment.amount.value();
    assert_eq!(processor.capture(request).await, Ok(captured));
    assert_eq!(processor.capture(request).await, Ok(captured));
}

/// `refund`: a refund sent again under its key answers what the first did (the same
/// refund, not a second one).
pub async fn a_replayed_refund_answers_the_first_refund(processor: Processor, cards: Cards) {
    let payment = tokenized(&processor, cards.approved).await;
    let reference = reference_of(&authorize(&processor, &payment).await);
    let request = RefundRequest {
        refund: RefundId::from_random_bytes(random_bytes()),
        processor_reference: &reference,
        amount: amount("4.00", "USD"),
    };
    let first = processor.refund(request).await.unwrap();
    assert!(
        matches!(
            first,
            RefundOutcome::Succeeded { .. } | RefundOutcome::Pending { .. }
        ),
        "{first:?}"
    );
    assert_eq!(processor.refund(request).await, Ok(first));
}

/// `refund_status`: a refund reads back by the reference its answer carried, as the
/// processor holds it.
pub async fn a_refund_reads_back_by_its_reference(processor: Processor, cards: Cards) {
    let payment = tokenized(&processor, cards.approved).await;
    let reference = reference_of(&authorize(&processor, &payment).await);
    let request = RefundRequest {
        refund: RefundId::from_random_bytes(random_bytes()),
        processor_reference: &reference,
        amount: amount("3.00", "USD"),
    };
    let answer = processor.refund(request).await.unwrap();
    let refund_reference = match &answer {
        RefundOutcome::Succeeded { refund_reference }
        | RefundOutcome::Pending { refund_reference } => refund_reference.clone(),
        RefundOutcome::Failed { .. } => panic!("{answer:?}"),
    };
    let read = processor.refund_status(&refund_reference).await.unwrap();
    assert!(
        matches!(
            &read,
            RefundOutcome::Succeeded { refund_reference: r }
            | RefundOutcome::Pending { refund_reference: r } if *r == refund_reference
        ),
        "{read:?}"
    );
}
