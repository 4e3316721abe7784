//! Rule 7.4.5: unknown sessions on the status route.

use crate::*;

#[tokio::test]
async fn an_unknown_session_id_on_the_status_route_is_svc_007_404() {
    let kit = TestKit::new();
    start(&kit, "ORD-1").await;
    let unknown = SessionId::from_random_bytes([0x42; 16]);
    let result = kit
        .checkout
        .payment_status(&kit.caller("T-1"), unknown)
        .await;
    let code = svc(result);
    assert_eq!(code, SvcCode::Svc007);
    assert_eq!(code.spec().http_status, 404);
}

#[tokio::test]
async fn another_terminals_session_is_svc_007_as_if_unknown() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    let session = start(&kit, "ORD-1").await;
    let result = kit
        .checkout
        .payment_status(&kit.caller("T-2"), session.id())
        .await;
    assert_eq!(svc(result), SvcCode::Svc007);
}

#[tokio::test]
async fn the_status_route_reports_the_sessions_state() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    assert_eq!(session.state(), SessionState::Pending);
    assert!(InternalReference::parse(session.internal_reference().as_str()).is_ok());

    let before = kit
        .checkout
        .payment_status(&kit.caller("T-1"), session.id())
        .await
        .unwrap();
    assert_eq!(before.state(), SessionState::Pending);
    assert_eq!(before.internal_reference(), session.internal_reference());
    assert_eq!(before.reference().as_str(), "ORD-1");

    pay(&kit, session.id()).await;
    let after = status(&kit, session.id()).await;
    assert_eq!(after, SessionState::Successful);
    assert_eq!(after.code(), 1);
}
