//! Merchant references through `TestKit`: SVC_001 names the session that holds the reference
//! (so that the merchant can query it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::fmt::Debug;

use checkout_domain::testing::{TestKit, TEST_LINK_VALIDITY};
use checkout_domain::values::SessionId;
use checkout_domain::{CheckoutError, SvcCode};
use support::{link_request, start, start_request};
use time::Duration;

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
    assert_eq!(svc_and_session(again), (SvcCode::Svc001, Some(checkout.id)));
    let as_link = kit
        .checkout
        .generate_payment_link(&caller, &link_request("REF-1"))
        .await;
    assert_eq!(
        svc_and_session(as_link),
        (SvcCode::Svc001, Some(checkout.id))
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
        (SvcCode::Svc001, Some(link.session.id))
    );
}

#[tokio::test]
async fn svc_001_after_an_expiry_names_the_successor() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let old = kit
        .checkout
        .generate_payment_link(&caller, &link_request("REF-3"))
        .await
        .unwrap();
    kit.clock.advance(TEST_LINK_VALIDITY + Duration::seconds(1));
    let successor = kit
        .checkout
        .generate_payment_link(&caller, &link_request("REF-3"))
        .await
        .unwrap();
    assert_ne!(successor.session.id, old.session.id);
    let again = kit
        .checkout
        .generate_payment_link(&caller, &link_request("REF-3"))
        .await;
    assert_eq!(
        svc_and_session(again),
        (SvcCode::Svc001, Some(successor.session.id))
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
