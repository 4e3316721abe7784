//! The SDK's token cache against the real token route: renewed before a short `expiresIn`
//! runs out, renewed once when a server refuses it, wrong credentials a typed 401.

use std::time::Duration;

use checkout_client::Client;

use crate::support::{Mode, TestServer};
use crate::wire::Proxy;
use crate::{checkout, quick_retries, reference, sdk};

const TOKEN_ROUTE: &str = "/api/public/security/auth";

#[tokio::test]
async fn a_token_is_renewed_before_its_short_lifetime_runs_out() {
    let server = TestServer::start(
        "sdk-token-renewal",
        Mode::Sandbox,
        &[("CHECKOUT__IDENTITY__TOKEN_LIFETIME_SECONDS", "5")],
    )
    .await;
    let proxy = Proxy::start(&server.base).await;
    let client = sdk(&server, &proxy.base);
    let created = client
        .start_payment(&checkout(&reference("RENEW"), "5.00"))
        .await
        .unwrap();
    let id = created.checkout_session_id;
    client.payment_status(&id).await.unwrap();
    assert_eq!(client.tokens_fetched(), 1, "one token while it is fresh");

    // Renewed when a fifth of its 5 s is left: after 4 s, before it expires.
    tokio::time::sleep(Duration::from_millis(4200)).await;
    client.payment_status(&id).await.unwrap();
    client.payment_status(&id).await.unwrap();
    assert_eq!(client.tokens_fetched(), 2);

    // The proxy saw exactly those token requests, and each call carried the token current
    // at its time: the first two the first token, the last two the renewed one.
    assert_eq!(proxy.seen_for("POST", TOKEN_ROUTE).len(), 2);
    let bearers: Vec<String> = proxy
        .seen()
        .iter()
        .filter(|r| r.target.starts_with("/pay/api/"))
        .map(|r| r.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(bearers.len(), 4);
    assert_eq!(bearers[0], bearers[1]);
    assert_ne!(bearers[1], bearers[2]);
    assert_eq!(bearers[2], bearers[3]);
}

#[tokio::test]
async fn a_token_another_server_refuses_is_renewed_once_and_the_call_goes_through() {
    // Two servers over one database, each with its own signing key: a token of the first is
    // refused by the second (401), as after a key rotation.
    let first = TestServer::sandbox("sdk-token-401-a").await;
    let second = TestServer::start_on(
        first.database(),
        "sdk-token-401-b",
        Mode::Sandbox,
        &[("CHECKOUT__SANDBOX__CLIENT_SECRET", &first.client_secret)],
    )
    .await;
    let proxy = Proxy::start(&first.base).await;
    let client = sdk(&first, &proxy.base);
    let created = client
        .start_payment(&checkout(&reference("KEYS"), "5.00"))
        .await
        .unwrap();
    assert_eq!(client.tokens_fetched(), 1);

    proxy.switch_to(&second.base);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let status = client
        .payment_status(&created.checkout_session_id)
        .await
        .unwrap();
    assert_eq!(status.checkout_session_id, created.checkout_session_id);
    assert_eq!(client.tokens_fetched(), 2, "renewed once");
    let reads = proxy.seen_for(
        "GET",
        &format!("/pay/api/payment/{}", created.checkout_session_id),
    );
    assert_eq!(reads.len(), 2, "refused once, then served: {reads:#?}");
    assert_ne!(
        reads[0].header("authorization"),
        reads[1].header("authorization")
    );
    assert_eq!(
        reads[0].header("x-idoperacion"),
        reads[1].header("x-idoperacion"),
        "one call"
    );
}

#[tokio::test]
async fn wrong_credentials_are_a_typed_401_asked_once() {
    let server = TestServer::sandbox("sdk-token-wrong").await;
    let proxy = Proxy::start(&server.base).await;
    let client = Client::builder(&proxy.base, &server.client_id, "not-the-secret")
        .retry_policy(quick_retries())
        .build()
        .unwrap();
    let error = client.payment_status("anything").await.unwrap_err();
    assert_eq!(error.status(), Some(401));
    let problem = error.problem().unwrap();
    assert_eq!(problem.status, 401);
    assert!(!problem.instance.is_empty());
    assert_eq!(proxy.seen().len(), 1, "{:#?}", proxy.seen());
    assert!(!format!("{client:?}").contains("not-the-secret"));
}
