//! Support without SQL: an operator reads a terminal's webhook deliveries log page by page
//! and sends an event again, with the `checkout` binary against the server's database.

use std::process::{Command, Output};
use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::support::TestServer;
use crate::{body_of, call, fast_server, receiver, register, wait_for};

/// Runs `checkout <words>` against the server's database.
fn checkout(server: &TestServer, words: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_checkout"));
    for (key, _) in std::env::vars() {
        if key.starts_with("CHECKOUT") {
            cmd.env_remove(key);
        }
    }
    cmd.args(words)
        .env("DATABASE_URL", server.database_url())
        .env("CHECKOUT__DATA_DIR", server.dir.join("data"))
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the checkout binary")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn an_operator_pages_through_the_deliveries_log_and_redelivers_an_event() {
    let Some(receiver) = receiver("operator-log") else {
        return;
    };
    let server = fast_server("operator-log").await;
    let (endpoint, secret) = register(&server, receiver.url("/ok").as_str(), None).await;
    receiver.set_secrets(&[secret]);

    // 21 events: one more than a page of the command's log.
    let token = server.token().await;
    for n in 0..21 {
        let created = server
            .post(
                "/pay/api/start-payment",
                Some(&token),
                &json!({
                    "callbackSuccessUrl": "https://merchant.example/ok",
                    "callbackFailUrl": "https://merchant.example/fail",
                    "totalTransactionAmount": 12.34,
                    "currencyCode": "USD",
                    "transactionReferenceNumber": format!("LOG-{n}"),
                }),
            )
            .await;
        assert_eq!(created.status, 200, "{}", created.body);
        let id = created.str("checkoutSessionId");
        let expired = call(
            &server,
            Method::POST,
            &format!("/pay/api/sandbox/payment/{id}/expire"),
        )
        .await;
        assert_eq!(expired.status, 200, "{}", expired.body);
    }
    let requests = wait_for(&receiver, Duration::from_secs(30), "21 deliveries", |r| {
        r.len() >= 21
    })
    .await;
    let newest_event = body_of(requests.last().unwrap())["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let first = stdout(&checkout(
        &server,
        &["webhook", "deliveries", "SANDBOX-001", &endpoint],
    ));
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(
        lines.len(),
        21,
        "20 deliveries and the next command: {first}"
    );
    assert!(
        lines[..20].iter().all(|l| l.contains("payment.expired")),
        "{first}"
    );
    assert!(
        lines[..20].iter().all(|l| l.contains("last answer 200")),
        "{first}"
    );
    let more = lines[20]
        .strip_prefix("more: checkout ")
        .unwrap_or_else(|| panic!("a next page: {first}"));
    let words: Vec<&str> = more.split(' ').collect();
    let second = stdout(&checkout(&server, &words));
    let second_lines: Vec<&str> = second.lines().collect();
    assert_eq!(second_lines.len(), 2, "{second}");
    assert_eq!(second_lines[1], "(end of the log)");
    // Every delivery once across the two pages.
    let mut ids: Vec<&str> = lines[..20]
        .iter()
        .chain(&second_lines[..1])
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 21);

    // Redeliver the newest event: the receiver gets it again, same id, verified.
    let done = stdout(&checkout(
        &server,
        &["event", "redeliver", "SANDBOX-001", &newest_event],
    ));
    assert!(done.contains("queued"), "{done}");
    let again = wait_for(&receiver, Duration::from_secs(10), "the redelivery", |r| {
        r.iter()
            .filter(|r| r["headers"]["webhook-id"] == newest_event.as_str())
            .count()
            >= 2
    })
    .await;
    assert!(again
        .iter()
        .filter(|r| r["headers"]["webhook-id"] == newest_event.as_str())
        .all(|r| r["verified"] == json!([true])));
    let log = stdout(&checkout(
        &server,
        &["webhook", "deliveries", "SANDBOX-001", &endpoint],
    ));
    assert!(
        log.lines().next().unwrap().contains("(redelivery)"),
        "{log}"
    );

    // Bad input: clear refusals, nothing queued.
    for words in [
        vec!["event", "redeliver", "SANDBOX-001", "not-a-uuid"],
        vec![
            "event",
            "redeliver",
            "SANDBOX-001",
            "00000000-0000-4000-8000-000000000000",
        ],
        vec![
            "webhook",
            "deliveries",
            "SANDBOX-001",
            &endpoint,
            "nonsense",
        ],
        vec![
            "webhook",
            "deliveries",
            "SANDBOX-001",
            "00000000-0000-4000-8000-000000000000",
        ],
    ] {
        assert!(!checkout(&server, &words).status.success(), "{words:?}");
    }
}
