//! The operator commands of the `checkout` binary, run as an operator would against the
//! database of a running server, and their effect on the API: provisioning, callback host
//! allowlists, deactivation, and clear refusals of bad input.

use std::process::{Command, Output};

use serde_json::json;

use crate::support::TestServer;
use crate::{assert_validation, start_body, with};

const START: &str = "/pay/api/start-payment";

/// Runs `checkout <words>` against the server's database.
pub(crate) fn checkout(server: &TestServer, words: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_checkout"))
        .args(words)
        .env_remove("CHECKOUT_CONFIG")
        .env("DATABASE_URL", server.database_url())
        .env("CHECKOUT__DATA_DIR", server.dir.join("operator"))
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the checkout binary")
}

/// The standard output of a command that succeeded.
pub(crate) fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The value after `label` on a line of `text`.
fn value_after<'t>(text: &'t str, label: &str) -> &'t str {
    text.lines()
        .find_map(|line| line.strip_prefix(label))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {label} in {text}"))
}

#[tokio::test]
async fn operators_provision_restrict_and_deactivate_terminals() {
    let server = TestServer::sandbox("operator").await;
    stdout(&checkout(
        &server,
        &["terminal", "create", "T-OP", "Operator", "Shop"],
    ));
    let created = stdout(&checkout(&server, &["client", "create", "T-OP"]));
    let client_id = value_after(&created, "client_id:");
    let secret = value_after(&created, "client_secret:");
    let token = server.token_for(client_id, secret).await;
    let listed = stdout(&checkout(&server, &["client", "list"]));
    assert!(listed.contains(client_id), "{listed}");
    assert!(!listed.contains(secret), "the secret is shown once only");

    // An allowlist of callback hosts: other hosts are a 400 naming each field.
    let set = stdout(&checkout(
        &server,
        &["terminal", "callback-hosts", "T-OP", "Merchant.Example"],
    ));
    assert!(set.contains("merchant.example"), "{set}");
    let terminals = stdout(&checkout(&server, &["terminal", "list"]));
    assert!(
        terminals.contains("T-OP\tactive\tmerchant.example\tOperator Shop"),
        "{terminals}"
    );
    assert_eq!(
        server
            .post(START, Some(&token), &start_body("OP-1"))
            .await
            .status,
        200,
        "the three URLs of the body point to merchant.example"
    );
    let elsewhere = with(
        with(
            start_body("OP-2"),
            "callbackSuccessUrl",
            json!("https://evil.example/ok"),
        ),
        "callbackBackUrl",
        json!("https://www.merchant.example/cart"),
    );
    let message = "The host is not among the callback hosts allowed for this terminal.";
    assert_validation(
        &server.post(START, Some(&token), &elsewhere).await,
        json!({ "CallbackSuccessUrl": [message], "CallbackBackUrl": [message] }),
    );
    stdout(&checkout(
        &server,
        &["terminal", "callback-hosts", "T-OP", "--any"],
    ));
    assert_eq!(
        server.post(START, Some(&token), &elsewhere).await.status,
        200,
        "the refused request took nothing; without a list any https host goes"
    );

    // Deactivation: SVC_005 at once, on the running server.
    stdout(&checkout(&server, &["terminal", "deactivate", "T-OP"]));
    let reply = server.post(START, Some(&token), &start_body("OP-3")).await;
    assert_eq!(
        (reply.status.as_u16(), reply.body["type"].as_str()),
        (422, Some("SVC_005"))
    );

    // Bad input: a clear message and a non-zero exit, nothing changed.
    for words in [
        &["terminal", "create", "bad number!", "Shop"][..],
        &["terminal", "activate", "T-NONE"],
        &[
            "terminal",
            "callback-hosts",
            "T-OP",
            "https://merchant.example/ok",
        ],
        &["client", "create", "T-NONE"],
        &["frobnicate"],
    ] {
        let output = checkout(&server, words);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{words:?} must fail");
        assert!(!stderr.trim().is_empty(), "{words:?} says why");
    }
    let terminals = stdout(&checkout(&server, &["terminal", "list"]));
    assert!(
        terminals.contains("T-OP\tinactive\tany host"),
        "{terminals}"
    );
}
