//! What one merchant may take: 16 endpoints, a few redeliveries of one event and a hundred of
//! its events an hour (ProblemDetails past either, with `Retry-After`); the deliveries log a
//! page at a time; and a sandbox that can be hosted (no loopback or private targets once it
//! has a public base URL, and no answer bodies kept from them where they are allowed).

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::fairness::{cancelled_session, register_as};
use crate::support::{Mode, TestServer};
use crate::{call, fast_server, receiver, register, wait_for};

/// A session id's `payment.cancelled` event, read from the terminal's feed.
async fn event_of(server: &TestServer, session: &str) -> String {
    let token = server.token().await;
    let started = std::time::Instant::now();
    loop {
        let page = server.get("/pay/api/events?limit=100", Some(&token)).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let found = page.body["events"].as_array().and_then(|events| {
            events
                .iter()
                .find(|e| e["data"]["checkoutSessionId"] == session)
                .and_then(|e| e["id"].as_str().map(str::to_owned))
        });
        if let Some(id) = found {
            return id;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no event for {session}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Asserts a ProblemDetails of `status` and returns its body.
fn problem(reply: &crate::support::server::Reply, status: u16) -> Value {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_eq!(reply.content_type(), "application/problem+json");
    assert_eq!(reply.body["status"], status);
    reply.body.clone()
}

#[tokio::test]
async fn a_terminal_may_have_16_endpoints_and_the_17th_is_a_422_problem() {
    let server = TestServer::sandbox("webhooks-endpoint-cap").await;
    let token = server.token().await;
    let mut ids = Vec::new();
    for n in 0..16 {
        let reply = register_as(&server, &token, &format!("http://localhost:9/hooks/{n}")).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        ids.push(reply.str("id").to_owned());
    }
    let refused = register_as(&server, &token, "http://localhost:9/hooks/16").await;
    let body = problem(&refused, 422);
    assert_eq!(
        body["type"],
        "https://tools.ietf.org/html/rfc4918#section-11.2"
    );
    assert_eq!(body["title"], "Limit reached");
    assert!(body["detail"].as_str().unwrap().contains("16"), "{body}");
    let listed = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(listed.body.as_array().map(Vec::len), Some(16));
    // Racing creates never pass the limit either.
    let deleted = call(
        &server,
        Method::DELETE,
        &format!("/pay/api/webhook-endpoints/{}", ids[0]),
    )
    .await;
    assert_eq!(deleted.status, 204);
    let racers: Vec<_> = (0..6)
        .map(|n| {
            let (http, base, token) = (server.http.clone(), server.base.clone(), token.clone());
            tokio::spawn(async move {
                http.post(format!("{base}/pay/api/webhook-endpoints"))
                    .bearer_auth(token)
                    .json(&json!({ "url": format!("http://localhost:9/race/{n}") }))
                    .send()
                    .await
                    .expect("an answer")
                    .status()
                    .as_u16()
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for racer in racers {
        statuses.push(racer.await.expect("join"));
    }
    statuses.sort_unstable();
    assert_eq!(statuses, vec![201, 422, 422, 422, 422, 422]);
    // Another terminal has its own 16.
    let other = crate::fairness::other_merchant(&server, "T-OTHER").await;
    let reply = register_as(&server, &other, "http://localhost:9/other").await;
    assert_eq!(reply.status, 201, "{}", reply.body);
}

#[tokio::test]
async fn redeliveries_are_capped_per_event_and_per_terminal_with_retry_after() {
    let server = TestServer::sandbox("webhooks-redelivery-cap").await;
    let token = server.token().await;
    let reply = register_as(&server, &token, "http://localhost:9/hooks").await;
    assert_eq!(reply.status, 201);
    let first = cancelled_session(&server, &token, "REDELIVER-0").await;
    let event = event_of(&server, &first).await;
    // The 100 redeliveries in a row: 5 are queued, then 429s.
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..100 {
        let reply = call(
            &server,
            Method::POST,
            &format!("/pay/api/events/{event}/redeliver"),
        )
        .await;
        statuses.push(reply.status.as_u16());
        if reply.status == 429 {
            last = Some(reply);
        }
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 202).count(),
        5,
        "{statuses:?}"
    );
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 95);
    assert!(statuses[..5].iter().all(|s| *s == 202));
    let refused = last.expect("a 429");
    let body = problem(&refused, 429);
    assert!(
        body["detail"].as_str().unwrap().contains("This event"),
        "{body}"
    );
    let retry_after: u64 = refused.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((3500..=3600).contains(&retry_after), "{retry_after}");

    // The terminal's own limit: 100 an hour whatever the events. 5 are used; 19 more events
    // take 95; the next is refused whichever event it names.
    let mut events = Vec::new();
    for n in 1..=20 {
        let id = cancelled_session(&server, &token, &format!("REDELIVER-{n}")).await;
        events.push(event_of(&server, &id).await);
    }
    let mut accepted = 5;
    'outer: for event in &events[..19] {
        for _ in 0..5 {
            let reply = call(
                &server,
                Method::POST,
                &format!("/pay/api/events/{event}/redeliver"),
            )
            .await;
            assert_eq!(reply.status, 202, "{}", reply.body);
            accepted += 1;
            if accepted == 100 {
                break 'outer;
            }
        }
    }
    let over = call(
        &server,
        Method::POST,
        &format!("/pay/api/events/{}/redeliver", events[19]),
    )
    .await;
    let body = problem(&over, 429);
    assert!(
        body["detail"].as_str().unwrap().contains("Your terminal"),
        "{body}"
    );
    assert!(over.headers.contains_key("retry-after"));
    // An unknown event is still a 404, not a 429.
    let unknown = call(
        &server,
        Method::POST,
        "/pay/api/events/6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55/redeliver",
    )
    .await;
    assert_eq!(unknown.status, 404);
    // Another terminal is not limited by this one.
    let other = crate::fairness::other_merchant(&server, "T-OTHER").await;
    let session = cancelled_session(&server, &other, "OTHER-0").await;
    let page = server.get("/pay/api/events", Some(&other)).await;
    let event = page.body["events"]
        .as_array()
        .and_then(|e| {
            e.iter()
                .find(|e| e["data"]["checkoutSessionId"] == session.as_str())
        })
        .and_then(|e| e["id"].as_str())
        .expect("its event")
        .to_owned();
    let reply = server
        .post(
            &format!("/pay/api/events/{event}/redeliver"),
            Some(&other),
            &json!({}),
        )
        .await;
    assert_eq!(reply.status, 202, "{}", reply.body);
}

#[tokio::test]
async fn the_deliveries_log_is_read_a_page_at_a_time_with_a_cursor() {
    let Some(receiver) = receiver("webhooks-log-pages") else {
        return;
    };
    let server = fast_server("webhooks-log-pages").await;
    let (endpoint, secret) = register(&server, receiver.url("/hooks").as_str(), None).await;
    receiver.set_secrets(&[secret]);
    let token = server.token().await;
    let mut sessions = Vec::new();
    for n in 0..7 {
        sessions.push(cancelled_session(&server, &token, &format!("PAGE-{n}")).await);
    }
    wait_for(
        &receiver,
        Duration::from_secs(30),
        "seven deliveries",
        |r| r.len() >= 7,
    )
    .await;
    let path = format!("/pay/api/webhook-endpoints/{endpoint}/deliveries");
    let mut seen: Vec<String> = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let query = match &after {
            Some(cursor) => format!("{path}?limit=3&after={cursor}"),
            None => format!("{path}?limit=3"),
        };
        let page = call(&server, Method::GET, &query).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert_eq!(page.body["endpoint"]["id"], endpoint.as_str());
        assert_eq!(page.body["endpoint"]["enabled"], true);
        assert_eq!(page.body["endpoint"]["circuit"], "closed");
        let deliveries = page.body["deliveries"].as_array().unwrap().clone();
        assert!(deliveries.len() <= 3);
        if pages == 0 {
            // A delivery queued while the merchant pages does not shift the later pages.
            let id = cancelled_session(&server, &token, "PAGE-LATE").await;
            sessions.push(id);
        }
        pages += 1;
        seen.extend(
            deliveries
                .iter()
                .map(|d| d["id"].as_str().unwrap().to_owned()),
        );
        if page.body["hasMore"] == false {
            break;
        }
        after = Some(page.body["cursor"].as_str().expect("a cursor").to_owned());
    }
    assert_eq!(pages, 3);
    assert_eq!(seen.len(), 7, "{seen:?}");
    let unique: std::collections::BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), 7);
    // Newest first: the first page starts with the newest of the seven, and the late one is
    // on a fresh first page.
    let fresh = call(&server, Method::GET, &format!("{path}?limit=1")).await;
    assert_eq!(fresh.body["deliveries"].as_array().map(Vec::len), Some(1));
    assert_ne!(fresh.body["deliveries"][0]["id"], seen[0].as_str());
    // Bad paging is a 400 naming the field.
    let bad = call(&server, Method::GET, &format!("{path}?limit=101")).await;
    let body = problem(&bad, 400);
    assert!(body["errors"]["Limit"].is_array(), "{body}");
}

#[tokio::test]
async fn a_hosted_sandbox_refuses_loopback_and_private_webhook_urls() {
    let server = TestServer::start(
        "webhooks-hosted-sandbox",
        Mode::Sandbox,
        &[(
            "CHECKOUT__SERVER__PUBLIC_BASE_URL",
            "https://sandbox.pay.example",
        )],
    )
    .await;
    let token = server.token().await;
    for url in [
        "http://127.0.0.1:9/hooks",
        "http://localhost:9/hooks",
        "https://127.0.0.1/hooks",
        "https://localhost/hooks",
        "https://10.1.2.3/hooks",
        "https://192.168.0.10/hooks",
        "https://[::1]/hooks",
    ] {
        let reply = register_as(&server, &token, url).await;
        let body = problem(&reply, 400);
        assert!(body["errors"]["Url"].is_array(), "{url}: {body}");
    }
    let listed = server.get("/pay/api/webhook-endpoints", Some(&token)).await;
    assert_eq!(listed.body, json!([]));
}

#[tokio::test]
async fn a_sandbox_on_loopback_keeps_no_answer_body_from_a_loopback_receiver() {
    let Some(receiver) = receiver("webhooks-no-body") else {
        return;
    };
    let server = fast_server("webhooks-no-body").await;
    let (endpoint, secret) = register(&server, receiver.url("/fail").as_str(), None).await;
    receiver.set_secrets(&[secret]);
    let token = server.token().await;
    cancelled_session(&server, &token, "NO-BODY").await;
    wait_for(&receiver, Duration::from_secs(30), "an attempt", |r| {
        !r.is_empty()
    })
    .await;
    let started = std::time::Instant::now();
    let attempt = loop {
        let log = call(
            &server,
            Method::GET,
            &format!("/pay/api/webhook-endpoints/{endpoint}/deliveries"),
        )
        .await;
        if let Some(a) = log.body["deliveries"][0]["attempts"].get(0) {
            break a.clone();
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{}", log.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // The receiver answered 500 "receiver failed on purpose": the status is shown, its body
    // is not kept.
    assert_eq!(attempt["status"], 500, "{attempt}");
    assert!(attempt["responseExcerpt"].is_null(), "{attempt}");
    let dump = crate::support::card_data::dump_database(server.database_url()).await;
    assert!(!dump.contains("receiver failed on purpose"));
}
