//! Support without SQL: a session found by the `internalTransactionReferenceNumber` a merchant
//! or payer quotes (through the API and the operator command), and the merchant name payers
//! are shown changed by an operator command.

use reqwest::Method;

use crate::operator::{checkout, stdout};
use crate::start_body;
use crate::support::TestServer;

#[tokio::test]
async fn a_session_is_found_by_its_internal_reference_through_the_api_and_the_cli() {
    let server = TestServer::sandbox("support-lookup").await;
    let token = server.token().await;
    let created = server
        .post("/pay/api/start-payment", Some(&token), &start_body("SUP-1"))
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.str("checkoutSessionId").to_owned();
    let internal = created.str("internalTransactionReferenceNumber").to_owned();

    // The API: exactly that session, as the status route shows it; the reference is read
    // whatever its case.
    for asked in [internal.clone(), internal.to_ascii_lowercase()] {
        let found = server
            .get(
                &format!("/pay/api/payment?internalTransactionReferenceNumber={asked}"),
                Some(&token),
            )
            .await;
        assert_eq!(found.status, 200, "{}", found.body);
        let records = found.body.as_array().expect("a list");
        assert_eq!(records.len(), 1, "{}", found.body);
        assert_eq!(records[0], server.status_record(&id).await);
    }

    // Another terminal's session and an unknown reference alike: [].
    server.add_terminal("T-SUP", true).await;
    let (other, secret) = server
        .add_client("T-SUP", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let other_token = server.token_for(&other, &secret).await;
    let unknown = format!("HC{}", "0".repeat(22));
    for (reference, token) in [(&internal, &other_token), (&unknown, &token)] {
        let found = server
            .get(
                &format!("/pay/api/payment?internalTransactionReferenceNumber={reference}"),
                Some(token),
            )
            .await;
        assert_eq!(found.status, 200, "{}", found.body);
        assert_eq!(found.body, serde_json::json!([]));
    }

    // Bad input: a ProblemDetails naming the parameter.
    for (query, field) in [
        ("internalTransactionReferenceNumber=HC123", "InternalTransactionReferenceNumber"),
        ("internalTransactionReferenceNumber=XX0ABCDEFGHJKMNPQRSTVWXY", "InternalTransactionReferenceNumber"),
        (
            "internalTransactionReferenceNumber=HC0ABCDEFGHJKMNPQRSTVWXY&internalTransactionReferenceNumber=HC0ABCDEFGHJKMNPQRSTVWXY",
            "InternalTransactionReferenceNumber",
        ),
        (
            "internalTransactionReferenceNumber=HC0ABCDEFGHJKMNPQRSTVWXY&transactionReferenceNumber=SUP-1",
            "TransactionReferenceNumber",
        ),
        ("", "TransactionReferenceNumber"),
    ] {
        let reply = server
            .send(Method::GET, &format!("/pay/api/payment?{query}"), Some(&token), None)
            .await;
        assert_eq!(reply.status, 400, "{query}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json");
        assert!(reply.body["errors"][field].is_array(), "{query}: {}", reply.body);
    }

    // The operator command: the session of whichever terminal, with its terminal and state.
    let shown = stdout(&checkout(
        &server,
        &["payment", "find", &internal.to_ascii_lowercase()],
    ));
    assert!(
        shown.contains(&format!("checkoutSessionId:                  {id}")),
        "{shown}"
    );
    assert!(
        shown.contains("terminal:                           SANDBOX-001"),
        "{shown}"
    );
    assert!(
        shown.contains("state:                              Pending (0)"),
        "{shown}"
    );
    assert!(
        shown.contains("transactionReferenceNumber:         SUP-1"),
        "{shown}"
    );
    let missing = checkout(&server, &["payment", "find", &unknown]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no payment session"));
    let malformed = checkout(&server, &["payment", "find", "HC123"]);
    assert!(!malformed.status.success());
    assert!(
        String::from_utf8_lossy(&malformed.stderr).contains("InternalTransactionReferenceNumber")
    );
}

#[tokio::test]
async fn an_operator_renames_the_merchant_payers_are_shown() {
    let server = TestServer::sandbox("support-rename").await;
    let id = server.new_checkout("rename").await;
    let page = |server: &TestServer, id: String| {
        let (http, url) = (
            server.http.clone(),
            format!("{}/pay/checkout-payment/{id}", server.base),
        );
        async move { http.get(url).send().await.unwrap().text().await.unwrap() }
    };
    assert!(page(&server, id.clone()).await.contains("Sandbox Merchant"));

    let done = stdout(&checkout(
        &server,
        &[
            "terminal",
            "rename",
            "SANDBOX-001",
            "Café",
            "Olé",
            "&",
            "Co",
        ],
    ));
    assert!(done.contains("Café Olé & Co"), "{done}");
    let html = page(&server, id).await;
    assert!(
        html.contains("Café Olé &amp; Co"),
        "the page shows the new name, escaped"
    );
    assert!(!html.contains("Sandbox Merchant"));
    let listed = stdout(&checkout(&server, &["terminal", "list"]));
    assert!(listed.contains("Café Olé & Co"), "{listed}");

    // Bad input changes nothing.
    let long = "x".repeat(101);
    for words in [
        vec!["terminal", "rename", "SANDBOX-001", "bad\u{7}name"],
        vec!["terminal", "rename", "SANDBOX-001", long.as_str()],
        vec!["terminal", "rename", "SANDBOX-001", " "],
        vec!["terminal", "rename", "NO-SUCH", "Name"],
    ] {
        let out = checkout(&server, &words);
        assert!(!out.status.success(), "{words:?}");
    }
    let listed = stdout(&checkout(&server, &["terminal", "list"]));
    assert!(listed.contains("Café Olé & Co"), "{listed}");
}

/// The value after `label` on a line of `text`.
fn value_after<'t>(text: &'t str, label: &str) -> &'t str {
    text.lines()
        .find_map(|line| line.strip_prefix(label))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {label} in {text}"))
}

/// The status of a token request with these credentials.
async fn token_status(server: &TestServer, client_id: &str, secret: &str) -> u16 {
    server
        .post(
            "/api/public/security/auth",
            None,
            &serde_json::json!({ "client_id": client_id, "client_secret": secret }),
        )
        .await
        .status
        .as_u16()
}

#[tokio::test]
async fn a_client_secret_is_rotated_in_place_with_an_overlap_during_which_both_work() {
    let server = TestServer::sandbox("support-rotate").await;
    stdout(&checkout(
        &server,
        &["terminal", "create", "T-ROT", "Rotating", "Shop"],
    ));
    let created = stdout(&checkout(&server, &["client", "create", "T-ROT"]));
    let client_id = value_after(&created, "client_id:").to_owned();
    let first = value_after(&created, "client_secret:").to_owned();
    assert_eq!(token_status(&server, &client_id, &first).await, 200);

    // Rotated with the default overlap: the new secret and the old one both issue tokens,
    // for the same client and terminal.
    let rotated = stdout(&checkout(&server, &["client", "rotate-secret", &client_id]));
    let second = value_after(&rotated, "client_secret:").to_owned();
    assert_ne!(second, first);
    assert!(rotated.contains("keeps working until"), "{rotated}");
    for secret in [&first, &second] {
        assert_eq!(token_status(&server, &client_id, secret).await, 200);
    }
    let token = server.token_for(&client_id, &first).await;
    let created = server
        .post("/pay/api/start-payment", Some(&token), &start_body("ROT-1"))
        .await;
    assert_eq!(created.status, 200, "{}", created.body);

    // Rotated again with no overlap: only the newest works; the oldest no longer either.
    let rotated = stdout(&checkout(
        &server,
        &["client", "rotate-secret", &client_id, "0"],
    ));
    let third = value_after(&rotated, "client_secret:").to_owned();
    assert!(rotated.contains("no longer works"), "{rotated}");
    assert_eq!(token_status(&server, &client_id, &third).await, 200);
    assert_eq!(token_status(&server, &client_id, &second).await, 401);
    assert_eq!(token_status(&server, &client_id, &first).await, 401);
    let listed = stdout(&checkout(&server, &["client", "list"]));
    assert!(
        !listed.contains(&third) && !listed.contains(&second),
        "secrets shown once"
    );

    // Bad input changes nothing.
    for words in [
        vec!["client", "rotate-secret", "no-such-client"],
        vec!["client", "rotate-secret", client_id.as_str(), "721"],
        vec!["client", "rotate-secret", client_id.as_str(), "-1"],
    ] {
        assert!(!checkout(&server, &words).status.success(), "{words:?}");
    }
    assert_eq!(token_status(&server, &client_id, &third).await, 200);
}
