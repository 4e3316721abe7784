//! Another card after a decline (`maxCardAttempts`), through the real binary: the operator
//! sets it per terminal; above 1 a declined card leaves the session Pending with the form
//! shown again, the last allowed decline is Failed, and the status record (and so each event)
//! lists every attempt with its outcome and code. Without the setting a decline is Failed
//! (the v1 tests cover it unchanged).

use serde_json::Value;

use crate::events::events_once;
use crate::operator::{checkout, stdout};
use crate::support::payer::CardForm;
use crate::support::TestServer;

const APPROVED: &str = "4242424242424242";
const DECLINED: &str = "4000000000000002";
const DECLINED_2: &str = "4000000000009995";

/// Submits `card` on the session's card form; returns the status and the page.
async fn submit(server: &TestServer, form: &CardForm, card: &str) -> (u16, String, String) {
    form.submit_and_read(&server.http, card).await
}

/// A decline that leaves the session payable: a 303 to the form again, saying so with SVC_006
/// (in Spanish, the pages' default for a session without a culture).
fn assert_form_again_after_decline(status: u16, page: &str) {
    assert_eq!(status, 303, "{page}");
    assert!(page.contains("id=\"card-form\""), "the form again: {page}");
    assert!(page.contains("data-code=\"SVC_006\""), "{page}");
    assert!(
        page.contains(
            "La tarjeta fue rechazada. No se realizó ningún cargo; puede pagar con otra tarjeta."
        ),
        "{page}"
    );
}

/// (outcome, code, cardLastFour) of each attempt of a status record.
fn attempts_of(record: &Value) -> Vec<(String, Value, String)> {
    record["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .map(|a| {
            (
                a["outcome"].as_str().expect("outcome").to_owned(),
                a["code"].clone(),
                a["cardLastFour"].as_str().expect("last four").to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn with_three_attempts_two_declines_then_an_approval_is_successful() {
    let server = TestServer::sandbox("api-card-attempts-paid").await;
    server.set_max_card_attempts(&server.terminal, 3).await;
    let token = server.token().await;
    let id = server.start_checkout("RETRY-PAID").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;

    let (status, _, page) = submit(&server, &form, DECLINED).await;
    assert_form_again_after_decline(status, &page);
    let record = server.status_record(&id).await;
    assert_eq!(
        (record["state"].as_str(), record["stateCode"].as_i64()),
        (Some("Pending"), Some(0))
    );
    let (status, _, page) = submit(&server, &form, DECLINED_2).await;
    assert_form_again_after_decline(status, &page);
    let (status, location, _) = submit(&server, &form, APPROVED).await;
    assert_eq!(status, 303);
    assert!(
        location.starts_with("https://merchant.example/ok?"),
        "{location}"
    );

    let record = server.status_record(&id).await;
    assert_eq!(record["state"], "Successful");
    assert_eq!(
        attempts_of(&record),
        [
            ("Declined".into(), Value::from("SVC_006"), "0002".into()),
            ("Declined".into(), Value::from("SVC_006"), "9995".into()),
            ("Successful".into(), Value::Null, "4242".into()),
        ]
    );
    let attempts = record["attempts"].as_array().unwrap();
    for attempt in attempts {
        assert_eq!(attempt["cardBrand"], "visa");
        let keys: Vec<&String> = attempt.as_object().unwrap().keys().collect();
        assert_eq!(
            keys.len(),
            5,
            "time, brand, last four, outcome, code; nothing else: {attempt}"
        );
        assert!(attempt["attemptDateTime"].as_str().unwrap().ends_with('Z'));
    }
    assert!(attempts[0]["attemptDateTime"].as_str() <= attempts[2]["attemptDateTime"].as_str());

    // Each decline that left the session payable was announced (the session Pending in its
    // record), then the payment, each record listing the attempts.
    let page = events_once(&server, &token, 3).await;
    let events = page.body["events"].as_array().expect("events");
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "payment.attempt_failed",
            "payment.attempt_failed",
            "payment.succeeded"
        ],
        "{}",
        page.body
    );
    assert_eq!(events[0]["data"]["state"], "Pending");
    assert_eq!(events[2]["data"]["attempts"], record["attempts"]);
}

#[tokio::test]
async fn with_three_attempts_the_third_decline_is_failed() {
    let server = TestServer::sandbox("api-card-attempts-failed").await;
    server.set_max_card_attempts(&server.terminal, 3).await;
    let token = server.token().await;
    let id = server.start_checkout("RETRY-FAILED").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    for card in [DECLINED, DECLINED_2] {
        let (status, _, page) = submit(&server, &form, card).await;
        assert_form_again_after_decline(status, &page);
    }
    let (status, location, _) = submit(&server, &form, DECLINED).await;
    assert_eq!(status, 303);
    assert!(
        location.starts_with("https://merchant.example/fail?"),
        "{location}"
    );
    assert!(location.contains("state=Failed"), "{location}");

    let record = server.status_record(&id).await;
    assert_eq!(
        (record["state"].as_str(), record["stateCode"].as_i64()),
        (Some("Failed"), Some(2))
    );
    let outcomes = attempts_of(&record);
    assert_eq!(outcomes.len(), 3);
    assert!(outcomes
        .iter()
        .all(|(outcome, code, _)| outcome == "Declined" && code == "SVC_006"));

    // Failed is final: a fourth card is not sent.
    let (_, location, _) = submit(&server, &form, APPROVED).await;
    assert!(location.contains("state=Failed"), "{location}");
    assert_eq!(attempts_of(&server.status_record(&id).await).len(), 3);
    let page = events_once(&server, &token, 4).await;
    let mut kinds: Vec<&str> = page.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    kinds.sort_unstable();
    assert_eq!(
        kinds,
        [
            "payment.attempt_failed",
            "payment.attempt_failed",
            "payment.attempt_failed",
            "payment.failed"
        ]
    );
}

#[tokio::test]
async fn by_default_a_decline_is_failed_and_its_one_attempt_is_listed() {
    let server = TestServer::sandbox("api-card-attempts-default").await;
    let id = server.start_checkout("RETRY-DEFAULT").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    let (status, location, _) = submit(&server, &form, DECLINED).await;
    assert_eq!(status, 303);
    assert!(location.contains("state=Failed"), "{location}");
    let record = server.status_record(&id).await;
    assert_eq!(record["stateCode"], 2);
    assert_eq!(
        attempts_of(&record),
        [("Declined".into(), Value::from("SVC_006"), "0002".into())]
    );
    // A session never paid lists none.
    let unpaid = server.start_checkout("RETRY-UNPAID").await;
    assert_eq!(
        server.status_record(&unpaid).await["attempts"],
        serde_json::json!([])
    );
}

#[tokio::test]
async fn operators_set_and_list_max_card_attempts() {
    let server = TestServer::sandbox("api-card-attempts-operator").await;
    let terminal = server.terminal.clone();
    let listed = stdout(&checkout(&server, &["terminal", "list"]));
    assert!(
        listed.contains("maxCardAttempts=1"),
        "the default: {listed}"
    );

    let set = stdout(&checkout(
        &server,
        &["terminal", "max-card-attempts", &terminal, "2"],
    ));
    assert!(set.contains("maxCardAttempts 2"), "{set}");
    let listed = stdout(&checkout(&server, &["terminal", "list"]));
    let line = listed
        .lines()
        .find(|l| l.starts_with(&format!("{terminal}\t")))
        .unwrap_or_else(|| panic!("{terminal} listed: {listed}"));
    assert!(line.contains("\tmaxCardAttempts=2\t"), "{line}");
    assert!(line.ends_with("\tcapture=automatic"), "{line}");

    // The running server applies it at once.
    let id = server.start_checkout("RETRY-OPERATOR").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    let (status, _, page) = submit(&server, &form, DECLINED).await;
    assert_form_again_after_decline(status, &page);
    let (_, location, _) = submit(&server, &form, DECLINED).await;
    assert!(
        location.contains("state=Failed"),
        "the second of two: {location}"
    );

    for words in [
        &["terminal", "max-card-attempts", terminal.as_str(), "0"][..],
        &["terminal", "max-card-attempts", terminal.as_str(), "11"],
        &["terminal", "max-card-attempts", terminal.as_str(), "many"],
        &["terminal", "max-card-attempts", "T-NONE", "2"],
    ] {
        let output = checkout(&server, words);
        assert!(!output.status.success(), "{words:?} must fail");
        assert!(!String::from_utf8_lossy(&output.stderr).trim().is_empty());
    }
    let listed = stdout(&checkout(&server, &["terminal", "list"]));
    assert!(
        listed.contains("\tmaxCardAttempts=2"),
        "unchanged: {listed}"
    );
}

#[tokio::test]
async fn every_event_of_a_session_lists_its_attempts() {
    let server = TestServer::sandbox("api-card-attempts-events").await;
    let token = server.token().await;
    let id = server.start_checkout("RETRY-EVENTS").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    // Authorised without capture, then captured: two events about one session.
    let (status, _, _) = submit(&server, &form, "4000000000000077").await;
    assert_eq!(status, 303);
    let captured = server
        .post(
            &format!("/pay/api/payment/{id}/capture"),
            Some(&token),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(captured.status, 200, "{}", captured.body);
    let record = server.status_record(&id).await;
    assert_eq!(
        attempts_of(&record),
        [("ApprovedTransaction".into(), Value::Null, "0077".into())]
    );
    let page = events_once(&server, &token, 2).await;
    let events = page.body["events"].as_array().expect("events");
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["payment.authorized", "payment.captured"]);
    for event in events {
        assert_eq!(event["data"]["attempts"], record["attempts"], "{event}");
    }
}
