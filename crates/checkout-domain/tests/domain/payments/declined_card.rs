//! Rule 7.4.4: a declined card ends Failed.

use crate::*;

#[tokio::test]
async fn a_declined_card_carries_svc_006_and_the_state_becomes_failed_2() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: Some("ch_declined".into()),
        reason: "card declined".into(),
    }));
    let outcome = pay(&kit, session.id()).await;

    assert_eq!(
        outcome.result,
        PaymentResult::Declined {
            reason: "card declined".into()
        }
    );
    assert_eq!(outcome.result.svc_code(), Some(SvcCode::Svc006));
    assert_eq!(outcome.session.state(), SessionState::Failed);
    assert_eq!(outcome.session.state().code(), 2);
    assert_redirects_to(&outcome.session, FAIL_URL);

    let polled = status(&kit, session.id()).await;
    assert_eq!(polled, SessionState::Failed);
    assert_eq!(polled.code(), 2);

    let attempts = kit.sessions.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].state, AttemptState::Declined);
    assert_eq!(attempts[0].svc_code, Some(SvcCode::Svc006));
}

#[tokio::test]
async fn a_declined_session_is_not_sent_to_the_processor_again() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "do not honour".into(),
    }));
    pay(&kit, session.id()).await;
    let second = pay(&kit, session.id()).await;
    assert_eq!(second.result, PaymentResult::AlreadyHandled);
    assert_eq!(second.session.state(), SessionState::Failed);
    assert_eq!(kit.processor.authorize_calls(), 1);
}
