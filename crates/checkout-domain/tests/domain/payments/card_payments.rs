//! Card payments and the redirects to the merchant, the payer's cancel, callback allowlists.

use crate::*;

#[tokio::test]
async fn an_approved_payment_is_successful_and_redirects_to_the_success_url() {
    let kit = TestKit::new();
    // a reference that needs escaping in a query string
    let session = start(&kit, "ORD 7&x=1").await;
    let outcome = pay(&kit, session.id()).await;
    assert_eq!(outcome.result, PaymentResult::Approved);
    assert_eq!(outcome.result.svc_code(), None);
    assert_eq!(outcome.session.state(), SessionState::Successful);
    assert_redirects_to(&outcome.session, SUCCESS_URL);
    assert_eq!(kit.processor.authorize_calls(), 1);

    let attempts = kit.sessions.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].state, AttemptState::Succeeded);
    assert_eq!(attempts[0].session_id, session.id());
    assert!(attempts[0].processor_reference.is_some());
}

#[tokio::test]
async fn an_authorised_but_not_captured_payment_is_approved_transaction() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Approved {
        processor_reference: "ch_auth_only".into(),
        captured: false,
    }));
    let outcome = pay(&kit, session.id()).await;
    assert_eq!(outcome.result, PaymentResult::Approved);
    assert_eq!(outcome.session.state(), SessionState::ApprovedTransaction);
    assert_eq!(outcome.session.state().code(), 3);
    assert_redirects_to(&outcome.session, SUCCESS_URL);
    assert_eq!(
        status(&kit, session.id()).await,
        SessionState::ApprovedTransaction
    );
}

#[tokio::test]
async fn a_cancel_goes_to_the_back_url() {
    let kit = TestKit::new();
    let session = start_with(
        &kit,
        SessionRequest {
            callback_back_url: Some(BACK_URL.into()),
            ..start_request("ORD-1")
        },
    )
    .await;
    let outcome = kit.checkout.cancel_payment(session.id()).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::Cancelled);
    assert_eq!(outcome.session.state(), SessionState::Cancelled);
    assert_redirects_to(&outcome.session, BACK_URL);
    assert_eq!(status(&kit, session.id()).await, SessionState::Cancelled);
    assert_eq!(kit.processor.authorize_calls(), 0);
}

#[tokio::test]
async fn a_cancel_without_a_back_url_goes_to_the_fail_url() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    let outcome = kit.checkout.cancel_payment(session.id()).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::Cancelled);
    assert_redirects_to(&outcome.session, FAIL_URL);
}

#[tokio::test]
async fn a_payment_link_cannot_be_cancelled_by_the_payer() {
    let kit = TestKit::new();
    let link = link(&kit, "LNK-1").await;
    let result = kit.checkout.cancel_payment(link.session.id()).await;
    assert_eq!(svc(result), SvcCode::Svc002);
    assert_eq!(status(&kit, link.session.id()).await, SessionState::Pending);
    let unknown = kit
        .checkout
        .cancel_payment(SessionId::from_random_bytes([9; 16]))
        .await;
    assert_eq!(svc(unknown), SvcCode::Svc002);
}

#[tokio::test]
async fn a_cancel_after_payment_changes_nothing() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    pay(&kit, session.id()).await;
    let outcome = kit.checkout.cancel_payment(session.id()).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::AlreadyHandled);
    assert_eq!(outcome.session.state(), SessionState::Successful);
    assert_redirects_to(&outcome.session, SUCCESS_URL);
}

#[tokio::test]
async fn a_cancelled_session_cannot_be_paid() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.checkout.cancel_payment(session.id()).await.unwrap();
    let outcome = pay(&kit, session.id()).await;
    assert_eq!(outcome.result, PaymentResult::AlreadyHandled);
    assert_eq!(outcome.session.state(), SessionState::Cancelled);
    assert_eq!(kit.processor.authorize_calls(), 0);
}

#[tokio::test]
async fn a_terminal_allowlist_refuses_callbacks_to_other_hosts_naming_each_field() {
    let kit = TestKit::new();
    kit.terminals.add(Terminal {
        number: TerminalNumber::parse("T-1").unwrap(),
        display_name: "Merchant T-1".into(),
        active: true,
        callback_hosts: Some(CallbackHosts::parse(["merchant.example"]).unwrap()),
        max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
        capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
    });
    // The support request's three URLs point to merchant.example: accepted.
    start(&kit, "ALLOWED").await;

    let mut request = start_request("REFUSED");
    request.callback_fail_url = Some("https://evil.example/fail".into());
    request.callback_back_url = Some("https://shop.merchant.example/cart".into());
    let refused = kit
        .checkout
        .start_payment(&kit.caller("T-1"), &request)
        .await;
    assert_eq!(
        validation_keys(refused),
        ["CallbackBackUrl", "CallbackFailUrl"],
        "a subdomain is another host"
    );
    assert!(
        kit.sessions
            .find_holding_reference(
                &TerminalNumber::parse("T-1").unwrap(),
                &MerchantReference::parse("REFUSED").unwrap()
            )
            .await
            .unwrap()
            .is_none(),
        "nothing stored"
    );
    // Links carry no callbacks: the allowlist does not apply.
    link(&kit, "LINK").await;
}

/// A card post reads the session without its order; every outcome that shows the form again
/// (checks failed, the processor asking to retry, a declined card the terminal lets the payer
/// replace) carries the whole session, so the form shows the order again.
#[tokio::test]
async fn every_post_that_shows_the_form_again_carries_the_order() {
    let kit = TestKit::new();
    kit.set_max_card_attempts("T-1", 2);
    let has_order = |session: &PaymentSession| {
        assert_eq!(session.items().len(), 1, "items");
        assert_eq!(session.charges().len(), 1, "charges");
    };

    let session = start(&kit, "ORD-CHECKS").await;
    let mut bad = card_input();
    bad.card_number = "4242424242424241".into();
    let post = kit
        .checkout
        .process_payment(session.id(), &bad)
        .await
        .unwrap();
    assert!(post.result.is_err(), "the checks failed");
    has_order(&post.page.session);

    let session = start(&kit, "ORD-RETRY").await;
    kit.processor
        .push_authorize(Err(checkout_domain::ports::ProcessorError::Controlled(
            "refused".into(),
        )));
    let retry = pay(&kit, session.id()).await;
    assert!(matches!(retry.result, PaymentResult::Retry { .. }));
    has_order(&retry.session);

    let session = start(&kit, "ORD-DECLINED").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "do not honor".into(),
    }));
    let declined = pay(&kit, session.id()).await;
    assert!(matches!(declined.result, PaymentResult::Declined { .. }));
    assert_eq!(declined.session.state(), SessionState::Pending);
    has_order(&declined.session);
}
