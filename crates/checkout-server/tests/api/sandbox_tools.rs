//! The sandbox's developer tools: the `/pay/api/sandbox/...` routes (pay with a test card,
//! answer a 3DS challenge, expire or settle a session now), 404 in production, and
//! `checkout trigger` run as a developer runs it, for every event type the service emits.

use checkout_domain::events::EventType;
use checkout_server::devtools::trigger::{plan, Plan};
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::cli::{developer_dir, run_developer_command};
use crate::support::{Mode, TestServer};
use crate::{assert_problem, start_body};

const APPROVED: &str = "4242424242424242";
const CHALLENGE: &str = "4000002760003184";

/// `POST path` with the sandbox token and `body`.
async fn post(
    server: &TestServer,
    path: &str,
    body: Option<&Value>,
) -> crate::support::server::Reply {
    let token = server.token().await;
    server.send(Method::POST, path, Some(&token), body).await
}

async fn new_session(server: &TestServer, reference: &str) -> String {
    let reply = post(
        server,
        "/pay/api/start-payment",
        Some(&start_body(reference)),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.str("checkoutSessionId").to_owned()
}

/// Every event of the sandbox terminal's feed, in order.
async fn feed(server: &TestServer) -> Vec<Value> {
    let token = server.token().await;
    let mut events = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let path = match &after {
            Some(c) => format!("/pay/api/events?limit=100&after={c}"),
            None => "/pay/api/events?limit=100".to_owned(),
        };
        let page = server.get(&path, Some(&token)).await;
        assert_eq!(page.status, 200, "{}", page.body);
        events.extend(page.body["events"].as_array().unwrap().iter().cloned());
        if let Some(cursor) = page.body["cursor"].as_str() {
            after = Some(cursor.to_owned());
        }
        if page.body["hasMore"] != true {
            return events;
        }
    }
}

/// The types of the feed's events about session `id`, in order, once `done` holds for them
/// (the feed holds back events while any older transaction of the shared test cluster runs);
/// after 15 s, as they are.
async fn events_until(
    server: &TestServer,
    id: &str,
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let started = std::time::Instant::now();
    loop {
        let types: Vec<String> = feed(server)
            .await
            .iter()
            .filter(|e| e["data"]["checkoutSessionId"] == id)
            .map(|e| e["type"].as_str().unwrap().to_owned())
            .collect();
        if done(&types) || started.elapsed() > std::time::Duration::from_secs(15) {
            return types;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The types of the feed's events about session `id` once there are `count` of them.
async fn event_types_of(server: &TestServer, id: &str, count: usize) -> Vec<String> {
    events_until(server, id, |t| t.len() >= count).await
}

#[tokio::test]
async fn sandbox_routes_pay_answer_a_challenge_and_expire_a_session_now() {
    let server = TestServer::sandbox("sandbox-routes").await;

    // Expire now: Pending becomes Expired at once, with its event; again is a no-op.
    let id = new_session(&server, "SBX-EXPIRE").await;
    let reply = post(
        &server,
        &format!("/pay/api/sandbox/payment/{id}/expire"),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["state"], "Expired");
    assert_eq!(server.status_record(&id).await["state"], "Expired");
    let again = post(
        &server,
        &format!("/pay/api/sandbox/payment/{id}/expire"),
        None,
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(event_types_of(&server, &id, 1).await, ["payment.expired"]);
    // An expired session takes no card.
    let refused = post(
        &server,
        &format!("/pay/api/sandbox/payment/{id}/pay"),
        Some(&json!({ "cardNumber": APPROVED })),
    )
    .await;
    assert_problem(&refused, 422, "SVC_008");

    // Pay, then a paid session cannot be expired: SVC_008 naming its state, nothing changed.
    let id = new_session(&server, "SBX-PAY").await;
    let paid = post(
        &server,
        &format!("/pay/api/sandbox/payment/{id}/pay"),
        Some(&json!({ "cardNumber": APPROVED })),
    )
    .await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    assert_eq!(paid.body["state"], "Successful");
    let refused = post(
        &server,
        &format!("/pay/api/sandbox/payment/{id}/expire"),
        None,
    )
    .await;
    assert_problem(&refused, 422, "SVC_008");
    assert!(
        refused.str("detail").contains("Successful"),
        "{}",
        refused.body
    );
    assert_eq!(server.status_record(&id).await["state"], "Successful");
    assert_eq!(event_types_of(&server, &id, 1).await, ["payment.succeeded"]);

    // A 3DS challenge passed, and one failed.
    for (passed, state, event) in [
        (true, "Successful", "payment.succeeded"),
        (false, "Failed", "payment.failed"),
    ] {
        let id = new_session(&server, &format!("SBX-3DS-{passed}")).await;
        let waiting = post(
            &server,
            &format!("/pay/api/sandbox/payment/{id}/pay"),
            Some(&json!({ "cardNumber": CHALLENGE })),
        )
        .await;
        assert_eq!(
            waiting.body["state"], "ChallengeRequired",
            "{}",
            waiting.body
        );
        let answered = post(
            &server,
            &format!("/pay/api/sandbox/payment/{id}/challenge"),
            Some(&json!({ "passed": passed })),
        )
        .await;
        assert_eq!(answered.status, 200, "{}", answered.body);
        assert_eq!(answered.body["state"], state);
        assert!(events_until(&server, &id, |t| t.iter().any(|e| e == event))
            .await
            .iter()
            .any(|e| e == event));
        // Answered once: a second answer is refused.
        let again = post(
            &server,
            &format!("/pay/api/sandbox/payment/{id}/challenge"),
            Some(&json!({ "passed": passed })),
        )
        .await;
        assert_problem(&again, 422, "SVC_008");
    }

    // Bad input: a ProblemDetails naming the field; unknown fields refused; nothing changed.
    let id = new_session(&server, "SBX-BAD").await;
    for (body, field) in [
        (json!({ "cardNumber": "4242424242424241" }), "CardNumber"),
        (json!({ "cardNumber": APPROVED, "cvv": "999" }), "Cvv"),
        (json!({}), "CardNumber"),
    ] {
        let reply = post(
            &server,
            &format!("/pay/api/sandbox/payment/{id}/pay"),
            Some(&body),
        )
        .await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json");
        assert!(
            reply.body["errors"][field].is_array(),
            "{body}: {}",
            reply.body
        );
    }
    let reply = post(
        &server,
        &format!("/pay/api/sandbox/payment/{id}/challenge"),
        Some(&json!({ "passed": "yes" })),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(server.status_record(&id).await["state"], "Pending");
    // Nothing written (read after a later event of another session is visible).
    let marker = new_session(&server, "SBX-MARKER").await;
    post(
        &server,
        &format!("/pay/api/sandbox/payment/{marker}/expire"),
        None,
    )
    .await;
    event_types_of(&server, &marker, 1).await;
    assert!(events_until(&server, &id, |_| true).await.is_empty());

    // Scoped to the caller's terminal and authenticated like the merchant routes.
    let unknown = "00000000-0000-4000-8000-000000000000";
    let reply = post(
        &server,
        &format!("/pay/api/sandbox/payment/{unknown}/expire"),
        None,
    )
    .await;
    assert_problem(&reply, 404, "SVC_007");
    server.add_terminal("T-OTHER", true).await;
    let (other, secret) = server
        .add_client("T-OTHER", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let other_token = server.token_for(&other, &secret).await;
    let reply = server
        .send(
            Method::POST,
            &format!("/pay/api/sandbox/payment/{id}/expire"),
            Some(&other_token),
            None,
        )
        .await;
    assert_problem(&reply, 404, "SVC_007");
    assert_eq!(server.status_record(&id).await["state"], "Pending");
    let reply = server
        .send(
            Method::POST,
            &format!("/pay/api/sandbox/payment/{id}/expire"),
            None,
            None,
        )
        .await;
    assert_eq!(reply.status, 401, "{}", reply.body);
}

#[tokio::test]
async fn settle_asks_the_processor_now_about_a_payment_cut_off_by_a_crash() {
    // Every processor call waits 2 s, so the server can be killed while the authorisation is
    // on its way; the reconciliation sweep would look at it only after an hour.
    let mut server = TestServer::start(
        "sandbox-settle",
        Mode::Sandbox,
        &[
            ("CHECKOUT__PROCESSOR__SANDBOX_DELAY_MS", "2000"),
            ("CHECKOUT__PROCESSOR__TIMEOUT_MS", "10000"),
            ("CHECKOUT__CHECKOUT__RECONCILE_AFTER_SECONDS", "3600"),
        ],
    )
    .await;
    let id = new_session(&server, "SBX-SETTLE").await;
    let token = server.token().await;
    let paying = {
        let (http, url) = (
            server.http.clone(),
            format!("{}/pay/api/sandbox/payment/{id}/pay", server.base),
        );
        let token = token.clone();
        tokio::spawn(async move {
            http.post(url)
                .bearer_auth(token)
                .json(&json!({ "cardNumber": APPROVED }))
                .send()
                .await
        })
    };
    let started = std::time::Instant::now();
    while server.status_record(&id).await["state"] != "Processing" {
        assert!(started.elapsed().as_secs() < 10, "never Processing");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    server.kill_hard();
    assert!(
        paying.await.unwrap().is_err(),
        "the payer's request was cut off"
    );
    server.restart().await;
    assert_eq!(server.status_record(&id).await["state"], "Processing");

    let settled = post(
        &server,
        &format!("/pay/api/sandbox/payment/{id}/settle"),
        None,
    )
    .await;
    assert_eq!(settled.status, 200, "{}", settled.body);
    assert_eq!(settled.body["state"], "Successful");
    assert_eq!(event_types_of(&server, &id, 1).await, ["payment.succeeded"]);
    // Nothing left waiting: settling again changes nothing.
    let again = post(
        &server,
        &format!("/pay/api/sandbox/payment/{id}/settle"),
        None,
    )
    .await;
    assert_eq!(again.body["state"], "Successful");
    assert_eq!(event_types_of(&server, &id, 1).await, ["payment.succeeded"]);
}

#[tokio::test]
async fn sandbox_routes_are_unknown_addresses_in_production() {
    let production = TestServer::start("sandbox-routes-prod", Mode::Production, &[]).await;
    production.add_terminal("T-PROD", true).await;
    let (id, secret) = production
        .add_client("T-PROD", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let token = production.token_for(&id, &secret).await;
    let session = production
        .post("/pay/api/start-payment", Some(&token), &start_body("P-SBX"))
        .await;
    assert_eq!(session.status, 200, "{}", session.body);
    let session = session.str("checkoutSessionId").to_owned();
    let unknown_route = production.get("/pay/api/no-such-route", Some(&token)).await;
    for (route, body) in [
        ("pay", Some(json!({ "cardNumber": APPROVED }))),
        ("challenge", Some(json!({ "passed": true }))),
        ("expire", None),
        ("settle", None),
    ] {
        let path = format!("/pay/api/sandbox/payment/{session}/{route}");
        for token in [Some(token.as_str()), None] {
            let reply = production
                .send(Method::POST, &path, token, body.as_ref())
                .await;
            assert_eq!(reply.status, 404, "{path}: {}", reply.body);
            assert_eq!(reply.content_type(), "application/problem+json");
            assert_eq!(
                reply.body["type"], unknown_route.body["type"],
                "{}",
                reply.body
            );
        }
    }
    // Nothing moved.
    let record = production
        .get(&format!("/pay/api/payment/{session}"), Some(&token))
        .await;
    assert_eq!(record.body["state"], "Pending");
    // The document still describes them, under the Sandbox tag, saying so.
    let doc = production.get("/openapi.json", None).await;
    let op = &doc.body["paths"]["/pay/api/sandbox/payment/{checkoutSessionId}/expire"]["post"];
    assert_eq!(op["tags"], json!(["Sandbox"]));
    assert!(op["description"]
        .as_str()
        .unwrap()
        .contains("404 in production"));
}

#[tokio::test]
async fn trigger_reaches_every_event_type_the_sandbox_can_and_names_the_others() {
    let server = TestServer::start(
        "trigger",
        Mode::Sandbox,
        // One token per trigger run.
        &[(
            "CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_CLIENT_PER_MINUTE",
            "1000",
        )],
    )
    .await;
    let dir = developer_dir("trigger");
    for kind in EventType::ALL {
        let out = run_developer_command(&server, &dir, &["trigger", kind.as_str()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match plan(kind) {
            Plan::Unreachable(why) => {
                assert!(!out.status.success(), "{kind}: {stdout}");
                assert!(stderr.contains(why), "{kind}: {stderr}");
            }
            _ => {
                assert!(out.status.success(), "{kind}: {stdout}\n{stderr}");
                assert!(stdout.contains(&format!("triggered {kind}")), "{stdout}");
                let id = stdout
                    .lines()
                    .find_map(|l| l.strip_prefix("session ")?.strip_suffix(" created"))
                    .unwrap_or_else(|| panic!("{kind}: no session in {stdout}"))
                    .to_owned();
                let types =
                    events_until(&server, &id, |t| t.iter().any(|e| e == kind.as_str())).await;
                assert!(
                    types.contains(&kind.as_str().to_owned()),
                    "{kind}: the feed has {types:?} for {id}"
                );
            }
        }
    }
    // An unknown type: a clear error listing every type the service emits.
    let out = run_developer_command(&server, &dir, &["trigger", "payment.teleported"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown event type \"payment.teleported\""),
        "{stderr}"
    );
    for kind in EventType::ALL {
        assert!(
            stderr.contains(kind.as_str()),
            "{kind} missing from {stderr}"
        );
    }
}
