//! Another card after a decline (`maxCardAttempts`): with the default of 1 a decline is
//! Failed (spec 7.4.4); above 1 a decline the processor reported leaves the session Pending
//! until the last allowed card, whose decline is Failed. A refused request or a lost answer
//! is not a declined card, and an unknown outcome never reopens the session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{pay, start, CARD_LAST4};
use checkout_domain::events::EventType;
use checkout_domain::ports::{EventLog, ProcessorError, ProcessorOutcome, SessionRepository};
use checkout_domain::session::{AttemptState, SessionState};
use checkout_domain::testing::{approved, TestKit};
use checkout_domain::usecases::PaymentResult;
use checkout_domain::values::{SessionId, TerminalNumber};
use checkout_domain::SvcCode;
use time::Duration;

fn declined(reason: &str) -> ProcessorOutcome {
    ProcessorOutcome::Declined {
        processor_reference: Some(format!("ch_{reason}")),
        reason: reason.into(),
    }
}

async fn decline_once(kit: &TestKit, id: SessionId) -> SessionState {
    kit.processor.push_authorize(Ok(declined("do_not_honour")));
    let outcome = pay(kit, id).await;
    assert_eq!(outcome.result.svc_code(), Some(SvcCode::Svc006));
    outcome.session.state()
}

async fn event_types(kit: &TestKit) -> Vec<EventType> {
    let terminal = TerminalNumber::parse("T-1").unwrap();
    kit.sessions
        .events_after(&terminal, None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

#[tokio::test]
async fn with_the_default_of_one_the_first_decline_is_failed() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    assert_eq!(decline_once(&kit, session.id()).await, SessionState::Failed);
    assert_eq!(
        event_types(&kit).await,
        vec![EventType::PaymentFailed, EventType::PaymentAttemptFailed]
    );
}

#[tokio::test]
async fn two_declines_then_an_approval_is_successful_with_every_attempt_listed() {
    let kit = TestKit::new();
    kit.set_max_card_attempts("T-1", 3);
    let session = start(&kit, "ORD-1").await;
    assert_eq!(
        decline_once(&kit, session.id()).await,
        SessionState::Pending
    );
    // Pending is not a state merchants are told about, but every decline is.
    assert_eq!(
        event_types(&kit).await,
        vec![EventType::PaymentAttemptFailed]
    );
    assert_eq!(
        decline_once(&kit, session.id()).await,
        SessionState::Pending
    );
    let paid = pay(&kit, session.id()).await;
    assert_eq!(paid.result, PaymentResult::Approved);
    assert_eq!(paid.session.state(), SessionState::Successful);
    assert_eq!(kit.processor.authorize_calls(), 3);

    let record = kit
        .checkout
        .payment_status(&kit.caller("T-1"), session.id())
        .await
        .unwrap();
    let outcomes: Vec<_> = record.attempts().iter().map(|a| a.outcome()).collect();
    assert_eq!(outcomes, ["Declined", "Declined", "Successful"]);
    let codes: Vec<_> = record.attempts().iter().map(|a| a.code).collect();
    assert_eq!(codes, [Some(SvcCode::Svc006), Some(SvcCode::Svc006), None]);
    assert!(record.attempts().iter().all(|a| a.last4 == CARD_LAST4));
    assert!(record.attempts().windows(2).all(|w| w[0].at <= w[1].at));
    assert_eq!(
        event_types(&kit).await,
        vec![
            EventType::PaymentAttemptFailed,
            EventType::PaymentAttemptFailed,
            EventType::PaymentSucceeded
        ]
    );
}

#[tokio::test]
async fn the_last_allowed_decline_is_failed_and_nothing_more_is_sent() {
    let kit = TestKit::new();
    kit.set_max_card_attempts("T-1", 3);
    let session = start(&kit, "ORD-1").await;
    assert_eq!(
        decline_once(&kit, session.id()).await,
        SessionState::Pending
    );
    assert_eq!(
        decline_once(&kit, session.id()).await,
        SessionState::Pending
    );
    assert_eq!(decline_once(&kit, session.id()).await, SessionState::Failed);
    assert_eq!(
        pay(&kit, session.id()).await.result,
        PaymentResult::AlreadyHandled
    );
    assert_eq!(kit.processor.authorize_calls(), 3);
    let mut kinds = event_types(&kit).await;
    kinds.sort_by_key(|k| k.as_str());
    assert_eq!(
        kinds,
        vec![
            EventType::PaymentAttemptFailed,
            EventType::PaymentAttemptFailed,
            EventType::PaymentAttemptFailed,
            EventType::PaymentFailed
        ]
    );
}

#[tokio::test]
async fn a_refused_request_is_not_a_declined_card() {
    let kit = TestKit::new();
    kit.set_max_card_attempts("T-1", 2);
    let session = start(&kit, "ORD-1").await;
    kit.processor
        .push_authorize(Err(ProcessorError::Controlled("invalid request".into())));
    assert_eq!(
        pay(&kit, session.id()).await.session.state(),
        SessionState::Pending
    );
    assert_eq!(
        decline_once(&kit, session.id()).await,
        SessionState::Pending
    );
    assert_eq!(decline_once(&kit, session.id()).await, SessionState::Failed);
}

#[tokio::test]
async fn an_unknown_outcome_never_reopens_and_a_reconciled_decline_counts() {
    let kit = TestKit::new();
    kit.set_max_card_attempts("T-1", 2);
    let session = start(&kit, "ORD-1").await;
    kit.processor.time_out_authorizations(true);
    let lost = pay(&kit, session.id()).await;
    assert_eq!(lost.result, PaymentResult::Unresolved);
    assert_eq!(lost.session.state(), SessionState::Processing);
    // A second card cannot be paid while the first one's outcome is unknown.
    assert_eq!(
        pay(&kit, session.id()).await.result,
        PaymentResult::AlreadyHandled
    );

    // Reconciliation learns the processor declined it: the session is payable again.
    kit.processor.time_out_authorizations(false);
    kit.processor
        .push_authorize(Ok(declined("insufficient_funds")));
    kit.clock.advance(Duration::minutes(1));
    kit.checkout.reconcile_due().await.unwrap();
    let attempt = crate::support::latest_attempt(&kit, session.id()).await;
    assert_eq!(attempt.state, AttemptState::Declined);
    let stored = kit.sessions.get(session.id()).await.unwrap().unwrap();
    assert_eq!(stored.state(), SessionState::Pending);

    // That was the first of two: the next decline is final.
    assert_eq!(decline_once(&kit, session.id()).await, SessionState::Failed);
}

#[tokio::test]
async fn a_failed_challenge_before_the_last_card_reopens_the_session() {
    let kit = TestKit::new();
    kit.set_max_card_attempts("T-1", 2);
    let session = start(&kit, "ORD-1").await;
    kit.processor
        .push_authorize(Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference: "pi_3ds".into(),
            challenge_url: None,
        }));
    assert_eq!(
        pay(&kit, session.id()).await.session.state(),
        SessionState::ChallengeRequired
    );
    let (_, outcome) = kit
        .checkout
        .answer_challenge(session.id(), false)
        .await
        .unwrap();
    assert_eq!(outcome.session.state(), SessionState::Pending);
    assert!(matches!(outcome.result, PaymentResult::Declined { .. }));
    kit.processor.push_authorize(Ok(approved("pi_second")));
    assert_eq!(
        pay(&kit, session.id()).await.session.state(),
        SessionState::Successful
    );
}
