//! The payment-attempt ledger through `TestKit`: one authorisation per session, lost answers
//! resolved by replaying the same request, 3DS endings that ask the processor first, stale
//! answers that never move a session, reconciliation that cannot starve, deactivated
//! terminals. The in-memory processor behaves as a real one: idempotent by attempt, holding
//! a charge whose answer was lost, down when told.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{card_input, pay, start};
use checkout_domain::ports::{
    AttemptChange, ProcessorError, ProcessorOutcome, Recorded, SessionRepository,
};
use checkout_domain::ports::{AttemptLedger, Sweeps};
use checkout_domain::session::{AttemptState, PaymentSession, SessionFlow, SessionState};
use checkout_domain::testing::{approved, TestKit, TEST_CHECKOUT_VALIDITY};
use checkout_domain::usecases::PaymentResult;
use checkout_domain::values::SessionId;
use checkout_domain::{CheckoutError, SvcCode};
use time::Duration;

async fn stored(kit: &TestKit, id: SessionId) -> PaymentSession {
    kit.sessions.get(id).await.unwrap().expect("stored")
}

fn svc<T: std::fmt::Debug>(result: Result<T, CheckoutError>) -> SvcCode {
    match result {
        Err(CheckoutError::Service { code, .. }) => code,
        other => panic!("expected a service error, got {other:?}"),
    }
}

fn challenge(reference: &str, url: Option<&str>) -> ProcessorOutcome {
    ProcessorOutcome::ChallengeRequired {
        processor_reference: reference.into(),
        challenge_url: url.map(str::to_owned),
    }
}

fn communication() -> ProcessorError {
    ProcessorError::Communication("timed out".into())
}

/// A session waiting for a challenge the processor calls `pi_3ds`.
async fn challenged(kit: &TestKit, reference: &str, url: Option<&str>) -> PaymentSession {
    let session = start(kit, reference).await;
    kit.processor
        .push_authorize(Ok(challenge(&format!("pi_3ds_{reference}"), url)));
    let outcome = pay(kit, session.id()).await;
    assert_eq!(outcome.session.state(), SessionState::ChallengeRequired);
    outcome.session
}

// ---- one authorisation per session ---------------------------------------------------------

#[tokio::test]
async fn an_attempt_is_recorded_before_the_authorisation_and_becomes_the_sessions_current() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    let outcome = pay(&kit, session.id()).await;
    assert_eq!(outcome.result, PaymentResult::Approved);
    let attempts = kit.sessions.attempts();
    assert_eq!(attempts.len(), 1);
    let attempt = &attempts[0];
    assert_eq!(attempt.state, AttemptState::Succeeded);
    assert!(attempt.payment_method.starts_with("pm_"));
    assert_eq!(attempt.next_check_at, None, "resolved: no more checks");
    assert_eq!(
        stored(&kit, session.id()).await.current_attempt(),
        Some(attempt.id)
    );
    assert_eq!(kit.processor.charges_for(session.id()), 1);
}

#[tokio::test]
async fn a_second_submission_is_already_handled_and_sends_nothing() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    pay(&kit, session.id()).await;
    let second = pay(&kit, session.id()).await;
    assert_eq!(second.result, PaymentResult::AlreadyHandled);
    assert_eq!(second.session.state(), SessionState::Successful);
    assert_eq!(kit.processor.authorize_calls(), 1);
    assert_eq!(kit.sessions.attempts().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_submissions_authorise_exactly_once() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let checkout = kit.checkout.clone();
            let id = session.id();
            tokio::spawn(async move { checkout.process_payment(id, &card_input()).await })
        })
        .collect();
    let mut approved = 0;
    for task in tasks {
        match task.await.unwrap().unwrap().result.unwrap() {
            PaymentResult::Approved => approved += 1,
            PaymentResult::AlreadyHandled => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(approved, 1);
    assert_eq!(kit.processor.executions(), 1);
    assert_eq!(kit.processor.charges_for(session.id()), 1);
    assert_eq!(kit.sessions.attempts().len(), 1);
}

#[tokio::test]
async fn invalid_card_fields_send_nothing_and_change_nothing() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    let mut input = card_input();
    input.card_number = "4242 4242 4242 4241".into();
    let post = kit
        .checkout
        .process_payment(session.id(), &input)
        .await
        .unwrap();
    assert!(post.result.is_err());
    assert_eq!(post.page.session.state(), SessionState::Pending);
    assert_eq!(kit.processor.authorize_calls(), 0);
    assert!(kit.sessions.attempts().is_empty());
}

// ---- unknown is not "nothing" ---------------------------------------------------------------

#[tokio::test]
async fn a_tokenize_failure_charges_nothing_and_the_payer_may_retry() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_tokenize_error(communication());
    let outcome = pay(&kit, session.id()).await;
    assert_eq!(
        outcome.result,
        PaymentResult::Retry {
            code: SvcCode::Svc003
        }
    );
    assert_eq!(outcome.session.state(), SessionState::Pending);
    assert_eq!(
        kit.processor.authorize_calls(),
        0,
        "no authorisation was asked for"
    );
    assert_eq!(
        pay(&kit, session.id()).await.result,
        PaymentResult::Approved
    );
}

#[tokio::test]
async fn a_controlled_refusal_charges_nothing_as_the_processor_said() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor
        .push_authorize(Err(ProcessorError::Controlled("bad request".into())));
    let outcome = pay(&kit, session.id()).await;
    assert_eq!(
        outcome.result,
        PaymentResult::Retry {
            code: SvcCode::Svc004
        }
    );
    assert_eq!(outcome.session.state(), SessionState::Pending);
    assert_eq!(
        kit.sessions.attempts()[0].state,
        AttemptState::NothingCharged
    );
    assert_eq!(
        pay(&kit, session.id()).await.result,
        PaymentResult::Approved
    );
    assert_eq!(kit.processor.charges_for(session.id()), 1);
}

#[tokio::test]
async fn a_lost_answer_is_recovered_by_replaying_the_same_request() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor
        .push_lost_answer(communication(), Some(approved("pi_lost")));
    let outcome = pay(&kit, session.id()).await;
    assert_eq!(outcome.result, PaymentResult::Approved);
    assert_eq!(outcome.session.state(), SessionState::Successful);
    assert_eq!(
        kit.processor.authorize_calls(),
        2,
        "the request and one replay"
    );
    assert_eq!(kit.processor.executions(), 1, "executed once");
    assert_eq!(kit.processor.charges_for(session.id()), 1);
}

#[tokio::test]
async fn an_unknown_outcome_keeps_the_session_processing_until_the_processor_answers() {
    let kit = TestKit::new();
    let other = start(&kit, "ORD-2").await;
    kit.processor.time_out_authorizations(true);
    let outcome = pay(&kit, other.id()).await;
    assert_eq!(outcome.result, PaymentResult::Unresolved);
    assert_eq!(outcome.session.state(), SessionState::Processing);
    let attempt = crate::support::latest_attempt(&kit, other.id()).await;
    assert_eq!(attempt.state, AttemptState::Unknown);
    let due = attempt.next_check_at.expect("scheduled");
    assert!(due > kit.clock.now_value());

    // A second tab cannot pay meanwhile.
    assert_eq!(
        pay(&kit, other.id()).await.result,
        PaymentResult::AlreadyHandled
    );
    // Not due yet: the sweep asks nothing.
    assert_eq!(kit.checkout.reconcile_due().await.unwrap().examined, 0);

    kit.processor.time_out_authorizations(false);
    kit.clock.advance(Duration::minutes(1));
    let report = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!((report.examined, report.settled), (1, 1));
    assert_eq!(
        stored(&kit, other.id()).await.state(),
        SessionState::Successful
    );
    assert_eq!(kit.processor.charges_for(other.id()), 1);
}

// ---- stale answers ---------------------------------------------------------------------------

#[tokio::test]
async fn an_answer_about_an_attempt_that_is_not_current_never_moves_the_session() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    // Attempt 1: refused (nothing charged); attempt 2 is in flight.
    kit.processor
        .push_authorize(Err(ProcessorError::Controlled("refused".into())));
    pay(&kit, session.id()).await;
    let first = crate::support::latest_attempt(&kit, session.id()).await;
    kit.processor.time_out_authorizations(true);
    pay(&kit, session.id()).await;
    let second = crate::support::latest_attempt(&kit, session.id()).await;
    assert_ne!(first.id, second.id);
    assert_eq!(
        stored(&kit, session.id()).await.state(),
        SessionState::Processing
    );

    // A late "succeeded" about attempt 1 (as a confused processor or a bug might send).
    let mut late = first.clone();
    late.state = AttemptState::Succeeded;
    let recorded = kit
        .sessions
        .record_attempt(&AttemptChange {
            attempt: &late,
            expected: &[AttemptState::NothingCharged],
            session_move: Some((SessionState::Processing, SessionState::Successful)),
        })
        .await
        .unwrap();
    assert_eq!(recorded, Recorded::AttemptOnly);
    assert_eq!(
        stored(&kit, session.id()).await.state(),
        SessionState::Processing
    );

    // And an answer about an attempt no longer in the expected state is not recorded at all.
    let mut stale = second.clone();
    stale.state = AttemptState::Declined;
    let recorded = kit
        .sessions
        .record_attempt(&AttemptChange {
            attempt: &stale,
            expected: &[AttemptState::RequiresAction],
            session_move: Some((SessionState::Processing, SessionState::Failed)),
        })
        .await
        .unwrap();
    assert_eq!(recorded, Recorded::Stale);
    assert_eq!(
        kit.sessions
            .attempt(second.id)
            .await
            .unwrap()
            .unwrap()
            .state,
        AttemptState::Unknown
    );
}

// ---- 3DS --------------------------------------------------------------------------------------

#[tokio::test]
async fn a_challenge_passed_on_the_services_page_ends_successful() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", None).await;
    let (_, outcome) = kit
        .checkout
        .answer_challenge(session.id(), true)
        .await
        .unwrap();
    assert_eq!(outcome.result, PaymentResult::Approved);
    assert_eq!(outcome.session.state(), SessionState::Successful);
    let (_, again) = kit
        .checkout
        .answer_challenge(session.id(), true)
        .await
        .unwrap();
    assert_eq!(again.result, PaymentResult::AlreadyHandled);
    assert_eq!(kit.processor.challenge_calls(), 1);
}

#[tokio::test]
async fn a_challenge_failed_ends_failed() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", None).await;
    let (_, outcome) = kit
        .checkout
        .answer_challenge(session.id(), false)
        .await
        .unwrap();
    assert_eq!(outcome.session.state(), SessionState::Failed);
    assert_eq!(outcome.result.svc_code(), Some(SvcCode::Svc006));
}

#[tokio::test]
async fn a_refused_challenge_answer_is_resolved_by_reading_the_authorisation() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", None).await;
    // The processor applies the pass, then answers 4xx.
    kit.processor
        .push_challenge_error(ProcessorError::Controlled("HTTP 400".into()));
    let (_, outcome) = kit
        .checkout
        .answer_challenge(session.id(), true)
        .await
        .unwrap();
    assert_eq!(
        outcome.session.state(),
        SessionState::Successful,
        "not reopened"
    );
    assert_eq!(
        pay(&kit, session.id()).await.result,
        PaymentResult::AlreadyHandled
    );
    assert_eq!(kit.processor.charges_for(session.id()), 1);
}

#[tokio::test]
async fn a_cancel_during_a_challenge_cancels_at_the_processor_first() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", None).await;
    let outcome = kit.checkout.cancel_payment(session.id()).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::Cancelled);
    assert_eq!(outcome.session.state(), SessionState::Cancelled);
    assert_eq!(kit.processor.cancel_calls(), 1);
    let attempt = crate::support::latest_attempt(&kit, session.id()).await;
    assert_eq!(attempt.state, AttemptState::Voided);
    // The payer completing the challenge at the processor afterwards charges nothing.
    assert!(!kit.processor.complete_at_processor("pi_3ds_ORD-1", true));
    assert_eq!(kit.processor.charges_for(session.id()), 0);
}

#[tokio::test]
async fn a_cancel_after_the_challenge_passed_at_the_processor_records_the_payment() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", Some("https://acs.example/3ds")).await;
    assert!(kit.processor.complete_at_processor("pi_3ds_ORD-1", true));
    let outcome = kit.checkout.cancel_payment(session.id()).await.unwrap();
    assert_eq!(outcome.session.state(), SessionState::Successful);
    assert_eq!(outcome.result, PaymentResult::Approved);
}

#[tokio::test]
async fn a_cancel_while_the_processor_is_down_changes_nothing() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", None).await;
    kit.processor.set_down(true);
    let outcome = kit.checkout.cancel_payment(session.id()).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::Unresolved);
    assert_eq!(
        stored(&kit, session.id()).await.state(),
        SessionState::ChallengeRequired
    );
}

#[tokio::test]
async fn a_challenge_expires_after_the_processor_confirms_the_cancel() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", None).await;
    kit.clock
        .advance(TEST_CHECKOUT_VALIDITY + Duration::minutes(1));
    // Answering after expiry: refused, the authorisation cancelled.
    let answered = kit.checkout.answer_challenge(session.id(), true).await;
    assert_eq!(svc(answered), SvcCode::Svc002);
    assert_eq!(kit.processor.cancel_calls(), 1);
    assert_eq!(kit.processor.challenge_calls(), 0);
    assert_eq!(
        stored(&kit, session.id()).await.state(),
        SessionState::Expired
    );
    // Its reference is free again.
    start(&kit, "ORD-1").await;
}

#[tokio::test]
async fn a_challenge_passed_at_the_processor_after_expiry_is_recorded_not_expired() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", Some("https://acs.example/3ds")).await;
    assert!(kit.processor.complete_at_processor("pi_3ds_ORD-1", true));
    kit.clock
        .advance(TEST_CHECKOUT_VALIDITY + Duration::minutes(1));
    let polled = kit
        .checkout
        .payment_status(&kit.caller("T-1"), session.id())
        .await
        .unwrap();
    assert_eq!(polled.state(), SessionState::Successful);
    assert_eq!(kit.processor.charges_for(session.id()), 1);
}

#[tokio::test]
async fn the_processor_return_only_records_what_the_processor_holds() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", Some("https://acs.example/3ds")).await;
    // Not finished at the processor: nothing moves, nothing is cancelled.
    let (_, outcome) = kit.checkout.challenge_returned(session.id()).await.unwrap();
    assert_eq!(outcome.session.state(), SessionState::ChallengeRequired);
    assert_eq!(kit.processor.cancel_calls(), 0);
    // The processor down: nothing moves.
    kit.processor.set_down(true);
    let (_, outcome) = kit.checkout.challenge_returned(session.id()).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::Unresolved);
    kit.processor.set_down(false);
    // Passed at the processor: recorded.
    assert!(kit.processor.complete_at_processor("pi_3ds_ORD-1", true));
    let (_, outcome) = kit.checkout.challenge_returned(session.id()).await.unwrap();
    assert_eq!(outcome.session.state(), SessionState::Successful);
}

// ---- deactivated terminals ------------------------------------------------------------------

#[tokio::test]
async fn a_deactivated_terminal_refuses_payments_and_its_sessions_can_still_be_read() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.add_terminal("T-1", false);
    let opened = kit
        .checkout
        .open_page(session.id(), SessionFlow::IntegratedCheckout)
        .await;
    assert_eq!(svc(opened), SvcCode::Svc005);
    let paid = kit
        .checkout
        .process_payment(session.id(), &card_input())
        .await;
    assert_eq!(svc(paid), SvcCode::Svc005);
    assert_eq!(kit.processor.authorize_calls(), 0);
    let polled = kit
        .checkout
        .payment_status(&kit.caller("T-1"), session.id())
        .await
        .unwrap();
    assert_eq!(polled.state(), SessionState::Pending);
}

// ---- reconciliation ---------------------------------------------------------------------------

#[tokio::test]
async fn reconciliation_takes_the_due_attempts_oldest_first_in_bounded_batches() {
    let kit = TestKit::new();
    kit.processor.time_out_authorizations(true);
    let mut sessions = Vec::new();
    for n in 0..120 {
        let session = start(&kit, &format!("ORD-{n}")).await;
        assert_eq!(
            pay(&kit, session.id()).await.result,
            PaymentResult::Unresolved
        );
        sessions.push(session.id());
        kit.clock.advance(Duration::milliseconds(10));
    }
    kit.clock.advance(Duration::minutes(2));
    // Down: each sweep asks about at most one batch, and reschedules what it could not settle,
    // so the next sweep reaches the attempts the first did not.
    let first = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(
        (first.examined, first.processor_calls, first.rescheduled),
        (50, 50, 50)
    );
    let second = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(second.examined, 50);
    let third = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(
        third.examined, 20,
        "every attempt examined within three sweeps"
    );
    assert_eq!(kit.checkout.reconcile_due().await.unwrap().examined, 0);

    kit.processor.time_out_authorizations(false);
    kit.clock.advance(Duration::minutes(5));
    let mut settled = 0;
    for _ in 0..3 {
        settled += kit.checkout.reconcile_due().await.unwrap().settled;
    }
    assert_eq!(settled, 120);
    for id in sessions {
        assert_eq!(stored(&kit, id).await.state(), SessionState::Successful);
        assert_eq!(kit.processor.charges_for(id), 1);
    }
}

#[tokio::test]
async fn an_attempt_unknown_past_the_idempotency_window_is_left_for_review() {
    let kit = TestKit::new();
    kit.processor.time_out_authorizations(true);
    let session = start(&kit, "ORD-1").await;
    pay(&kit, session.id()).await;
    let mut given_up = 0;
    for _ in 0..40 {
        kit.clock.advance(Duration::hours(1));
        given_up += kit.checkout.reconcile_due().await.unwrap().given_up;
    }
    assert_eq!(given_up, 1);
    let attempt = crate::support::latest_attempt(&kit, session.id()).await;
    assert_eq!(attempt.state, AttemptState::Unknown);
    assert_eq!(attempt.next_check_at, None);
    assert_eq!(
        stored(&kit, session.id()).await.state(),
        SessionState::Processing
    );
    let (count, oldest) = kit.sessions.unresolved_attempts().await.unwrap();
    assert_eq!((count, oldest), (1, Some(attempt.created_at)));
}

#[tokio::test]
async fn a_challenge_finished_at_the_processor_without_a_return_is_settled_by_reconciliation() {
    let kit = TestKit::new();
    let session = challenged(&kit, "ORD-1", Some("https://acs.example/3ds")).await;
    // Still waiting: the sweep asks, and asks again later.
    kit.clock.advance(Duration::minutes(1));
    let report = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!((report.examined, report.rescheduled), (1, 1));
    assert_eq!(
        stored(&kit, session.id()).await.state(),
        SessionState::ChallengeRequired
    );
    // The payer passes at the processor and closes the browser.
    assert!(kit.processor.complete_at_processor("pi_3ds_ORD-1", true));
    kit.clock.advance(Duration::minutes(5));
    let report = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(report.settled, 1);
    assert_eq!(
        stored(&kit, session.id()).await.state(),
        SessionState::Successful
    );
    let attempt = crate::support::latest_attempt(&kit, session.id()).await;
    assert_eq!(
        (attempt.state, attempt.next_check_at),
        (AttemptState::Succeeded, None)
    );
}
