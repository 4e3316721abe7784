//! Rule 7.4.1: a reference is unique per terminal; SVC_001 names the session that holds it
//! (so that the merchant can query it).

use std::fmt::Debug;

use crate::*;
use checkout_domain::values::SessionId;

#[tokio::test]
async fn reusing_the_reference_of_an_in_flight_session_is_svc_001() {
    let kit = TestKit::new();
    let first = start(&kit, "ORD-1").await;
    let caller = kit.caller("T-1");

    let again = kit
        .checkout
        .start_payment(&caller, &start_request("ORD-1"))
        .await;
    assert_eq!(svc(again), SvcCode::Svc001);
    let as_link = kit
        .checkout
        .generate_payment_link(&caller, &link_request("ORD-1"))
        .await;
    assert_eq!(svc(as_link), SvcCode::Svc001);

    assert_eq!(kit.sessions.len(), 1);
    assert_eq!(status(&kit, first.id()).await, SessionState::Pending);
}

#[tokio::test]
async fn reusing_the_reference_of_a_link_still_open_is_svc_001() {
    let kit = TestKit::new();
    link(&kit, "LNK-1").await;
    kit.clock.advance(TEST_LINK_VALIDITY - Duration::seconds(1));
    let again = kit
        .checkout
        .generate_payment_link(&kit.caller("T-1"), &link_request("LNK-1"))
        .await;
    assert_eq!(svc(again), SvcCode::Svc001);
}

#[tokio::test]
async fn reusing_the_reference_of_a_completed_session_is_svc_001() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");

    let paid = start(&kit, "ORD-PAID").await;
    assert_eq!(
        pay(&kit, paid.id()).await.session.state(),
        SessionState::Successful
    );

    let failed = start(&kit, "ORD-FAILED").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "insufficient funds".into(),
    }));
    assert_eq!(
        pay(&kit, failed.id()).await.session.state(),
        SessionState::Failed
    );

    let cancelled = start(&kit, "ORD-CANCELLED").await;
    kit.checkout.cancel_payment(cancelled.id()).await.unwrap();

    // even long after, a completed session keeps its reference
    kit.clock.advance(Duration::days(30));
    for reference in ["ORD-PAID", "ORD-FAILED", "ORD-CANCELLED"] {
        let again = kit
            .checkout
            .start_payment(&caller, &start_request(reference))
            .await;
        assert_eq!(svc(again), SvcCode::Svc001, "{reference}");
    }
}

#[tokio::test]
async fn another_terminal_may_use_the_same_reference() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    let mine = start(&kit, "ORD-1").await;
    let theirs = kit
        .checkout
        .start_payment(&kit.caller("T-2"), &start_request("ORD-1"))
        .await
        .unwrap();
    assert_ne!(mine.id(), theirs.id());
    assert_eq!(*theirs.terminal(), terminal("T-2"));
    assert_eq!(theirs.reference(), mine.reference());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_creations_with_one_reference_create_exactly_one_session() {
    let kit = TestKit::new();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let checkout = kit.checkout.clone();
            let caller = kit.caller("T-1");
            tokio::spawn(async move {
                checkout
                    .start_payment(&caller, &start_request("ORD-RACE"))
                    .await
            })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => created += 1,
            Err(e) => assert_eq!(e.svc_code(), Some(SvcCode::Svc001), "{e:?}"),
        }
    }
    assert_eq!(created, 1);
    assert_eq!(kit.sessions.len(), 1);
}

/// The code and the named session of a service error.
fn svc_and_session<T: Debug>(result: Result<T, CheckoutError>) -> (SvcCode, Option<SessionId>) {
    match result {
        Err(CheckoutError::Service { code, session, .. }) => (code, session),
        other => panic!("expected a service error, got {other:?}"),
    }
}

#[tokio::test]
async fn svc_001_names_the_session_holding_the_reference_on_both_routes() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let checkout = start(&kit, "REF-1").await;
    let again = kit
        .checkout
        .start_payment(&caller, &start_request("REF-1"))
        .await;
    assert_eq!(
        svc_and_session(again),
        (SvcCode::Svc001, Some(checkout.id()))
    );
    let as_link = kit
        .checkout
        .generate_payment_link(&caller, &link_request("REF-1"))
        .await;
    assert_eq!(
        svc_and_session(as_link),
        (SvcCode::Svc001, Some(checkout.id()))
    );

    let link = kit
        .checkout
        .generate_payment_link(&caller, &link_request("REF-2"))
        .await
        .unwrap();
    let again = kit
        .checkout
        .generate_payment_link(&caller, &link_request("REF-2"))
        .await;
    assert_eq!(
        svc_and_session(again),
        (SvcCode::Svc001, Some(link.session.id()))
    );
}

#[tokio::test]
async fn svc_001_after_an_expiry_names_the_successor() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let (old, successor) = crate::support::expired_link_and_successor(&kit, "REF-3").await;
    assert_ne!(successor.session.id(), old.session.id());
    let again = kit
        .checkout
        .generate_payment_link(&caller, &link_request("REF-3"))
        .await;
    assert_eq!(
        svc_and_session(again),
        (SvcCode::Svc001, Some(successor.session.id()))
    );
}

#[test]
fn other_service_errors_name_no_session() {
    for code in SvcCode::ALL {
        let CheckoutError::Service { session, .. } = CheckoutError::svc(code) else {
            unreachable!()
        };
        assert_eq!(session, None, "{code}");
    }
}
