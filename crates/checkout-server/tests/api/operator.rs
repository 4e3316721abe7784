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

/// Runs `checkout <words>` with the server's own signing key, as an operator of the same
/// deployment does (the webhook secrets are sealed under a key derived from it).
fn checkout_as_deployed(server: &TestServer, words: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_checkout"))
        .args(words)
        .env_remove("CHECKOUT_CONFIG")
        .env("DATABASE_URL", server.database_url())
        .env("CHECKOUT__DATA_DIR", server.dir.join("operator"))
        .env(
            "CHECKOUT__IDENTITY__KEY_FILE",
            server.dir.join("data/keys/sandbox.pk8"),
        )
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the checkout binary")
}

#[tokio::test]
async fn operators_manage_webhook_endpoints_that_the_server_delivers_to() {
    let dir = crate::support::server::artifacts_dir("operator-webhooks-receiver");
    let Some(receiver) = checkout_webhooks::testing::Receiver::start(&dir, &[]) else {
        return;
    };
    let server = TestServer::start(
        "operator-webhooks",
        crate::support::Mode::Sandbox,
        &[("CHECKOUT__WEBHOOKS__POLL_MS", "50")],
    )
    .await;
    let url = receiver.url("/hooks").to_string();
    let added = stdout(&checkout_as_deployed(
        &server,
        &["webhook", "add", "SANDBOX-001", &url, "payment.succeeded"],
    ));
    let id = value_after(&added, "endpoint:").to_owned();
    let secret = value_after(&added, "secret:").to_owned();
    assert!(secret.starts_with("whsec_"), "{added}");
    let listed = stdout(&checkout_as_deployed(
        &server,
        &["webhook", "list", "SANDBOX-001"],
    ));
    assert!(listed.contains(&id) && listed.contains(&url), "{listed}");
    assert!(listed.contains("\tclosed"), "its circuit: {listed}");
    assert!(!listed.contains(&secret), "the secret is shown once only");
    let enabled = stdout(&checkout_as_deployed(
        &server,
        &["webhook", "enable", "SANDBOX-001", &id],
    ));
    assert!(enabled.contains("enabled"), "{enabled}");
    // The API shows the same endpoint to the terminal.
    let token = server.token().await;
    let api = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(api.body[0]["id"], id.as_str());
    assert_eq!(api.body[0]["events"], json!(["payment.succeeded"]));

    // The server signs with the secret the operator was shown.
    receiver.set_secrets(std::slice::from_ref(&secret));
    let session = server.new_checkout("OPERATOR-HOOK").await;
    let form = crate::support::payer::CardForm::open(&server.http, &server.base, &session).await;
    assert_eq!(
        form.submit(&server.http, "4242424242424242").await.status(),
        303
    );
    let started = std::time::Instant::now();
    while receiver.requests().is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "no delivery"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(receiver.requests()[0]["verified"], json!([true]));

    // Rotation prints a new secret; deletion empties the list.
    let rotated = stdout(&checkout_as_deployed(
        &server,
        &["webhook", "rotate-secret", "SANDBOX-001", &id],
    ));
    let new_secret = value_after(&rotated, "secret:");
    assert!(
        new_secret.starts_with("whsec_") && new_secret != secret,
        "{rotated}"
    );
    stdout(&checkout_as_deployed(
        &server,
        &["webhook", "delete", "SANDBOX-001", &id],
    ));
    let listed = stdout(&checkout_as_deployed(
        &server,
        &["webhook", "list", "SANDBOX-001"],
    ));
    assert!(listed.trim().is_empty(), "{listed}");

    // Bad input is refused with the field named, and nothing is saved.
    let refused = checkout_as_deployed(
        &server,
        &[
            "webhook",
            "add",
            "SANDBOX-001",
            "ftp://merchant.example/hooks",
        ],
    );
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("Url"),
        "{refused:?}"
    );
    let other = checkout_as_deployed(&server, &["webhook", "delete", "SANDBOX-001", &id]);
    assert!(
        !other.status.success(),
        "a deleted endpoint is not found again"
    );
    let listed = stdout(&checkout_as_deployed(
        &server,
        &["webhook", "list", "SANDBOX-001"],
    ));
    assert!(listed.trim().is_empty(), "{listed}");
}
