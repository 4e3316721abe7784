//! Payment links: their address, payment until expiry, expiry, reuse of the reference.

use crate::*;

#[tokio::test]
async fn a_payment_link_is_the_base_slash_the_id_and_expires_after_the_link_validity() {
    let kit = TestKit::new();
    let created_at = kit.clock.now_value();
    let link = link(&kit, "LNK-1").await;
    assert_eq!(link.url, format!("{LINK_BASE}/{}", link.session.id()));
    assert_eq!(
        link.url,
        kit.checkout.policy().payment_link(link.session.id())
    );
    assert_eq!(*link.session.kind(), SessionKind::PaymentLink);
    assert_eq!(link.session.state(), SessionState::Pending);
    assert_eq!(link.session.expires_at(), created_at + TEST_LINK_VALIDITY);
    assert_eq!(link.session.redirect_url(), None, "links never redirect");
    assert!(link.session.internal_reference().as_str().starts_with("HC"));
}

#[tokio::test]
async fn a_payment_link_can_be_opened_and_paid_until_its_expiry() {
    let kit = TestKit::new();
    let link = link(&kit, "LNK-1").await;
    kit.clock.advance(TEST_LINK_VALIDITY - Duration::seconds(1));

    let page = kit
        .checkout
        .open_page(link.session.id(), SessionFlow::PaymentLink)
        .await
        .unwrap();
    assert!(page.is_payable());
    assert_eq!(page.merchant_name, "Merchant T-1");

    let outcome = pay(&kit, link.session.id()).await;
    assert_eq!(outcome.result, PaymentResult::Approved);
    assert_eq!(outcome.session.state(), SessionState::Successful);
    assert_eq!(outcome.session.redirect_url(), None);
    assert_eq!(
        status(&kit, link.session.id()).await,
        SessionState::Successful
    );
}

#[tokio::test]
async fn an_expired_link_cannot_be_opened_or_paid_and_reports_expired() {
    let kit = TestKit::new();
    let link = link(&kit, "LNK-1").await;
    let id = link.session.id();
    kit.clock.advance(TEST_LINK_VALIDITY + Duration::seconds(1));

    let opened = kit.checkout.open_page(id, SessionFlow::PaymentLink).await;
    assert_eq!(svc(opened), SvcCode::Svc002);
    let paid = kit.checkout.process_payment(id, &card_input()).await;
    assert_eq!(svc(paid), SvcCode::Svc002);
    assert_eq!(kit.processor.authorize_calls(), 0);

    let polled = status(&kit, link.session.id()).await;
    assert_eq!(polled, SessionState::Expired);
    assert_eq!(polled.code(), 6);
}

#[tokio::test]
async fn an_expired_link_is_expired_on_payment_even_if_nobody_read_it() {
    let kit = TestKit::new();
    let link = link(&kit, "LNK-1").await;
    kit.clock.advance(TEST_LINK_VALIDITY + Duration::minutes(5));
    let paid = kit
        .checkout
        .process_payment(link.session.id(), &card_input())
        .await;
    assert_eq!(svc(paid), SvcCode::Svc002);
    assert_eq!(kit.processor.authorize_calls(), 0);
    assert_eq!(
        stored_state(&kit, link.session.id()).await,
        SessionState::Expired
    );
}

#[tokio::test]
async fn the_reference_of_an_expired_link_can_be_reused_for_a_new_link() {
    for read_before_reuse in [true, false] {
        let kit = TestKit::new();
        let old = link(&kit, "LNK-1").await;
        kit.clock.advance(TEST_LINK_VALIDITY + Duration::hours(1));
        if read_before_reuse {
            assert_eq!(status(&kit, old.session.id()).await, SessionState::Expired);
        }

        let new = link(&kit, "LNK-1").await;
        assert_ne!(new.session.id(), old.session.id());
        assert_ne!(
            new.session.internal_reference(),
            old.session.internal_reference()
        );
        assert_ne!(new.url, old.url);
        assert_eq!(new.session.reference(), old.session.reference());
        assert_eq!(new.session.state(), SessionState::Pending);
        assert_eq!(
            new.session.expires_at(),
            kit.clock.now_value() + TEST_LINK_VALIDITY
        );

        assert_eq!(status(&kit, old.session.id()).await, SessionState::Expired);
        assert_eq!(status(&kit, new.session.id()).await, SessionState::Pending);
        assert_eq!(
            pay(&kit, new.session.id()).await.session.state(),
            SessionState::Successful
        );
        // the old link stays dead
        let reopened = kit
            .checkout
            .open_page(old.session.id(), SessionFlow::PaymentLink)
            .await;
        assert_eq!(svc(reopened), SvcCode::Svc002);
    }
}
