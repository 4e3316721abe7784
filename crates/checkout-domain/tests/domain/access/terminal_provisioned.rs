//! Rule 7.4.2: the terminal must be provisioned.

use crate::*;

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
    assert_eq!(*omitted.terminal(), terminal("T-1"));

    let explicit = SessionRequest {
        terminal_number: Some("T-1".into()),
        ..start_request("ORD-2")
    };
    assert_eq!(
        *start_with(&kit, explicit).await.terminal(),
        terminal("T-1")
    );

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
    assert_eq!(*via_token.session.terminal(), terminal("T-1"));
}

/// Creates after the first take the terminal as seen, and the insert checks it is still so:
/// a deactivation refuses the very next create (SVC_005), an allowlist narrowed to exclude
/// the callbacks refuses it (400 naming them), one widened again admits it at once, and a
/// change that still allows them lets the create through after a fresh read.
#[tokio::test]
async fn a_terminal_change_applies_to_the_next_create() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    let caller = kit.caller("T-2");
    let number = terminal("T-2");
    let create = |reference: &'static str| {
        let (kit, caller) = (&kit, &caller);
        async move {
            kit.checkout
                .start_payment(caller, &start_request(reference))
                .await
        }
    };
    create("ORD-1").await.unwrap();

    kit.terminals.update(&number, |t| t.active = false);
    assert_eq!(svc(create("ORD-2").await), SvcCode::Svc005);
    kit.terminals.update(&number, |t| t.active = true);
    create("ORD-3").await.unwrap();

    let elsewhere = CallbackHosts::parse(["shop.example"]).unwrap();
    kit.terminals
        .update(&number, |t| t.callback_hosts = Some(elsewhere));
    assert_eq!(
        validation_keys(create("ORD-4").await),
        ["CallbackFailUrl", "CallbackSuccessUrl"]
    );
    let allowed = CallbackHosts::parse(["merchant.example"]).unwrap();
    kit.terminals
        .update(&number, |t| t.callback_hosts = Some(allowed));
    create("ORD-5").await.unwrap();
    // Changed again, still allowing the callbacks: the insert refuses the terminal as seen,
    // the fresh read allows it, and the create goes through.
    let wider = CallbackHosts::parse(["merchant.example", "shop.example"]).unwrap();
    kit.terminals
        .update(&number, |t| t.callback_hosts = Some(wider));
    create("ORD-6").await.unwrap();

    let references: Vec<String> = ["ORD-1", "ORD-3", "ORD-5", "ORD-6"]
        .map(String::from)
        .to_vec();
    let mut stored: Vec<String> = Vec::new();
    for r in ["ORD-1", "ORD-2", "ORD-3", "ORD-4", "ORD-5", "ORD-6"] {
        let found = kit
            .sessions
            .find_holding_reference(&number, &MerchantReference::parse(r).unwrap())
            .await
            .unwrap();
        if found.is_some() {
            stored.push(r.to_owned());
        }
    }
    assert_eq!(stored, references, "only the accepted creates are stored");
}
