//! The hosted pages: the wrong flow, unknown ids, an integrated checkout's expiry.

use crate::*;

#[tokio::test]
async fn a_page_of_the_wrong_flow_or_an_unknown_id_is_svc_002() {
    let kit = TestKit::new();
    let checkout = start(&kit, "ORD-1").await.id();
    let link = link(&kit, "LNK-1").await.session.id();

    let result = kit
        .checkout
        .open_page(checkout, SessionFlow::PaymentLink)
        .await;
    assert_eq!(svc(result), SvcCode::Svc002);
    let result = kit
        .checkout
        .open_page(link, SessionFlow::IntegratedCheckout)
        .await;
    assert_eq!(svc(result), SvcCode::Svc002);

    let unknown = SessionId::from_random_bytes([7; 16]);
    for flow in [SessionFlow::IntegratedCheckout, SessionFlow::PaymentLink] {
        let result = kit.checkout.open_page(unknown, flow).await;
        assert_eq!(svc(result), SvcCode::Svc002);
    }

    assert!(kit
        .checkout
        .open_page(checkout, SessionFlow::IntegratedCheckout)
        .await
        .unwrap()
        .is_payable());
    assert!(kit
        .checkout
        .open_page(link, SessionFlow::PaymentLink)
        .await
        .unwrap()
        .is_payable());
}

#[tokio::test]
async fn an_integrated_checkout_expires_after_the_checkout_validity() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    assert_eq!(
        session.expires_at(),
        kit.clock.now_value() + TEST_CHECKOUT_VALIDITY
    );
    kit.clock
        .advance(TEST_CHECKOUT_VALIDITY + Duration::seconds(1));
    let result = kit
        .checkout
        .open_page(session.id(), SessionFlow::IntegratedCheckout)
        .await;
    assert_eq!(svc(result), SvcCode::Svc002);
    assert_eq!(status(&kit, session.id()).await, SessionState::Expired);
}
