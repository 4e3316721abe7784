//! GET /pay/api/events: a merchant catches up with its events after downtime.

use serde_json::Value;

use crate::start_body;
use crate::support::payer::CardForm;
use crate::support::TestServer;

/// The events page, once it holds `count` events: the feed holds back events while any older
/// transaction in the database cluster still runs (the test cluster is shared by every test).
pub(crate) async fn events_once(
    server: &TestServer,
    token: &str,
    count: usize,
) -> crate::support::server::Reply {
    let started = std::time::Instant::now();
    loop {
        let page = server.get("/pay/api/events", Some(token)).await;
        let seen = page.body["events"].as_array().map_or(0, Vec::len);
        if seen >= count || started.elapsed() > std::time::Duration::from_secs(15) {
            return page;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Pays session `id` with the sandbox's approved card through its card form.
async fn pay(server: &TestServer, id: &str) {
    let form = CardForm::open(&server.http, &server.base, id).await;
    let answer = form.submit(&server.http, "4242424242424242").await;
    assert_eq!(answer.status(), 303);
}

#[tokio::test]
async fn a_merchant_reads_its_events_in_order_each_with_the_status_record_as_of_the_event() {
    let server = TestServer::sandbox("api-events").await;
    let token = server.token().await;
    let created = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &start_body("EVENTS-1"),
        )
        .await;
    let paid_id = created.str("checkoutSessionId").to_owned();
    pay(&server, &paid_id).await;
    let created = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &start_body("EVENTS-2"),
        )
        .await;
    let cancelled_id = created.str("checkoutSessionId").to_owned();
    let form = CardForm::open(&server.http, &server.base, &cancelled_id).await;
    assert_eq!(form.cancel(&server.http).await.status(), 303);

    let page = events_once(&server, &token, 2).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let events = page.body["events"].as_array().expect("events").clone();
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["data"]["checkoutSessionId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("payment.succeeded", paid_id.as_str()),
            ("payment.cancelled", cancelled_id.as_str())
        ]
    );
    // The event's data is the status record the merchant reads (the session has not changed
    // since), and its id and timestamp are those of the event.
    let record = server
        .get(&format!("/pay/api/payment/{paid_id}"), Some(&token))
        .await
        .body;
    assert_eq!(events[0]["data"], record);
    assert_eq!(events[0]["timestamp"], record["lastUpdateDateTime"]);
    assert!(events[0]["id"].as_str().unwrap().len() == 36);
    assert_eq!(page.body["hasMore"], false);

    // Paging: one at a time, from the cursor; the same ids on every read.
    let first = server
        .get("/pay/api/events?limit=1", Some(&token))
        .await
        .body;
    assert_eq!(first["events"][0]["id"], events[0]["id"]);
    assert_eq!(first["hasMore"], true);
    let cursor = first["cursor"].as_str().unwrap();
    let second = server
        .get(
            &format!("/pay/api/events?after={cursor}&limit=1"),
            Some(&token),
        )
        .await
        .body;
    assert_eq!(second["events"][0]["id"], events[1]["id"]);
    let cursor = second["cursor"].as_str().unwrap();
    let after_all = server
        .get(&format!("/pay/api/events?after={cursor}"), Some(&token))
        .await
        .body;
    assert_eq!(after_all["events"], Value::Array(Vec::new()));
    assert_eq!(after_all["cursor"], cursor, "the cursor stays where it was");
}

#[tokio::test]
async fn another_terminal_sees_none_of_the_events_and_bad_parameters_are_400() {
    let server = TestServer::sandbox("api-events-isolated").await;
    let token = server.token().await;
    let created = server
        .post("/pay/api/start-payment", Some(&token), &start_body("MINE"))
        .await;
    pay(&server, created.str("checkoutSessionId")).await;
    assert_eq!(
        events_once(&server, &token, 1).await.body["events"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );

    server.add_terminal("T-OTHER", true).await;
    let (client_id, secret) = server
        .add_client("T-OTHER", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let other = server.token_for(&client_id, &secret).await;
    let page = server.get("/pay/api/events", Some(&other)).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.body["events"], Value::Array(Vec::new()));

    for (query, field) in [
        ("limit=0", "Limit"),
        ("limit=", "Limit"),
        ("limit=101", "Limit"),
        ("limit=ten", "Limit"),
        ("after=nonsense", "After"),
        ("after=1.2.3", "After"),
        ("limit=null&limit=null", "Limit"),
        ("limit=5&limit=5", "Limit"),
        ("after=1.2&after=1.2", "After"),
    ] {
        let reply = server
            .get(&format!("/pay/api/events?{query}"), Some(&token))
            .await;
        assert_eq!(reply.status, 400, "{query}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json", "{query}");
        assert!(
            reply.body["errors"][field].is_array(),
            "{query}: {}",
            reply.body
        );
    }
    assert_eq!(server.get("/pay/api/events", None).await.status, 401);
}

#[tokio::test]
async fn a_cursor_the_feed_never_handed_out_is_a_400_not_an_empty_page() {
    let server = TestServer::sandbox("api-events-unissued").await;
    let token = server.token().await;
    let created = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &start_body("EV-CURSOR"),
        )
        .await;
    pay(&server, created.str("checkoutSessionId")).await;
    let page = events_once(&server, &token, 1).await;
    let issued = page.str("cursor").to_owned();

    // The issued cursor reads on (an empty page, the cursor echoed).
    let next = server
        .get(&format!("/pay/api/events?after={issued}"), Some(&token))
        .await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert_eq!(next.body["events"], Value::Array(Vec::new()));
    assert_eq!(next.body["cursor"], issued.as_str());

    // Well-formed cursors it never issued: one past the end, one before any event, and this
    // terminal's cursor read by another terminal.
    let (transaction, sequence) = issued.split_once('.').unwrap();
    let past = format!(
        "{}.{sequence}",
        transaction.parse::<u64>().unwrap() + 1_000_000
    );
    server.add_terminal("T-CURSOR", true).await;
    let (client_id, secret) = server
        .add_client("T-CURSOR", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let other = server.token_for(&client_id, &secret).await;
    for (cursor, token) in [
        (past.as_str(), token.as_str()),
        ("1.0", token.as_str()),
        (issued.as_str(), other.as_str()),
    ] {
        let reply = server
            .get(&format!("/pay/api/events?after={cursor}"), Some(token))
            .await;
        assert_eq!(reply.status, 400, "{cursor}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json");
        assert!(reply.body["errors"]["After"].is_array(), "{}", reply.body);
    }
}
