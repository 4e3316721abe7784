//! Tokens and authentication (spec 5).

use crate::*;

#[tokio::test]
async fn a_token_issued_for_the_right_secret_authenticates_as_the_clients_terminal() {
    let kit = TestKit::new();
    let issued = kit
        .checkout
        .issue_token(&credentials("client-1", "secret-1"))
        .await
        .unwrap();
    assert_eq!(issued.expires_in, FAKE_TOKEN_LIFETIME);
    assert!(!issued.token.expose().is_empty());

    let bearer = issued.token.expose();
    let claims = kit.checkout.authenticate(Some(bearer)).await.unwrap();
    assert_eq!(claims.client_id, "client-1");
    assert_eq!(claims.terminal, terminal("T-1"));
    assert!(claims.has_role(Role::SvcTerminal));
}

#[tokio::test]
async fn a_wrong_or_missing_secret_or_unknown_client_gets_no_token() {
    let kit = TestKit::new();
    for (client, secret) in [
        ("client-1", "secret-2"),
        ("client-1", "SECRET-1"),
        ("client-1", ""),
        ("client-9", "secret-1"),
        ("", "secret-1"),
        ("   ", "secret-1"),
        ("client-1\u{0}", "secret-1"),
    ] {
        let result = kit.checkout.issue_token(&credentials(client, secret)).await;
        assert_eq!(
            auth_failure(result),
            AuthFailure::InvalidCredentials,
            "{client:?}/{secret:?}"
        );
    }
}

#[tokio::test]
async fn an_inactive_client_gets_no_token_even_with_its_secret() {
    let kit = TestKit::new();
    kit.clients.add_client(
        "client-2",
        "secret-2",
        "T-1",
        vec![Role::SvcTerminal],
        false,
    );
    let result = kit
        .checkout
        .issue_token(&credentials("client-2", "secret-2"))
        .await;
    assert_eq!(auth_failure(result), AuthFailure::InvalidCredentials);
}

#[tokio::test]
async fn a_missing_bearer_token_is_unauthenticated() {
    let kit = TestKit::new();
    for bearer in [None, Some(""), Some("   ")] {
        let result = kit.checkout.authenticate(bearer).await;
        assert_eq!(
            auth_failure(result),
            AuthFailure::MissingToken,
            "{bearer:?}"
        );
    }
}

#[tokio::test]
async fn an_unknown_bearer_token_is_unauthenticated() {
    let kit = TestKit::new();
    for bearer in ["fake-token-0", "eyJhbGciOiJub25lIn0.e30.", "garbage"] {
        let result = kit.checkout.authenticate(Some(bearer)).await;
        assert_eq!(auth_failure(result), AuthFailure::InvalidToken, "{bearer}");
    }
}

#[tokio::test]
async fn a_token_without_the_svc_terminal_role_is_unauthenticated() {
    let kit = TestKit::new();
    let claims = Claims {
        roles: vec![],
        ..kit.caller("T-1")
    };
    kit.identity.accept("token-without-role", claims);
    let result = kit.checkout.authenticate(Some("token-without-role")).await;
    assert_eq!(auth_failure(result), AuthFailure::MissingRole);

    // a client registered without the role gets a token, but it opens no protected route
    kit.clients
        .add_client("client-3", "secret-3", "T-1", vec![], true);
    let issued = kit
        .checkout
        .issue_token(&credentials("client-3", "secret-3"))
        .await
        .unwrap();
    let result = kit.checkout.authenticate(Some(issued.token.expose())).await;
    assert_eq!(auth_failure(result), AuthFailure::MissingRole);
}
