//! Rule 7.4.2: the terminal must be provisioned.

use super::*;

#[tokio::test]
async fn a_terminal_never_provisioned_is_svc_005() {
    let kit = TestKit::new();
    let result = kit
        .checkout
        .start_payment(&kit.caller("T-9"), &start_request("ORD-1"))
        .await;
    assert_eq!(svc(result), SvcCode::Svc005);
    let result = kit
        .checkout
        .generate_payment_link(&kit.caller("T-9"), &link_request("ORD-1"))
        .await;
    assert_eq!(svc(result), SvcCode::Svc005);
    assert!(kit.sessions.is_empty());
}

#[tokio::test]
async fn an_inactive_terminal_is_svc_005() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", false);
    let result = kit
        .checkout
        .start_payment(&kit.caller("T-2"), &start_request("ORD-1"))
        .await;
    assert_eq!(svc(result), SvcCode::Svc005);
    assert!(kit.sessions.is_empty());
}

#[tokio::test]
async fn a_terminal_number_other_than_the_callers_is_svc_005() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    let request = SessionRequest {
        terminal_number: Some("T-2".into()),
        ..start_request("ORD-1")
    };
    let result = kit
        .checkout
        .start_payment(&kit.caller("T-1"), &request)
        .await;
    assert_eq!(svc(result), SvcCode::Svc005);
    assert!(kit.sessions.is_empty());
}

#[tokio::test]
async fn an_omitted_terminal_number_is_resolved_from_the_caller() {
    let kit = TestKit::new();
    let omitted = start(&kit, "ORD-1").await;
    assert_eq!(omitted.terminal, terminal("T-1"));

    let explicit = SessionRequest {
        terminal_number: Some("T-1".into()),
        ..start_request("ORD-2")
    };
    assert_eq!(start_with(&kit, explicit).await.terminal, terminal("T-1"));

    // a token issued for client-1 carries its terminal
    let issued = kit
        .checkout
        .issue_token(&credentials("client-1", "secret-1"))
        .await
        .unwrap();
    let caller = kit
        .checkout
        .authenticate(Some(issued.token.expose()))
        .await
        .unwrap();
    let via_token = kit
        .checkout
        .generate_payment_link(&caller, &link_request("ORD-3"))
        .await
        .unwrap();
    assert_eq!(via_token.session.terminal, terminal("T-1"));
}
