//! `Idempotency-Key` on the create routes (IETF httpapi idempotency-key draft): replays with
//! `Idempotent-Replayed: true`, a key reused with another body (422), racing retries (one
//! session; the rest replay or 409), keys per terminal, kept 4xx answers, a 5xx that keeps
//! nothing, refused keys (400), and no change at all without the header.

use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{json, Value};

use crate::support::server::{into_reply, Reply};
use crate::support::TestServer;
use crate::{assert_problem, assert_svc, assert_validation, link_body, start_body, with};

const START: &str = "/pay/api/start-payment";
const LINK: &str = "/pay/api/generate-payment-link";
const KEY_REUSED_TYPE: &str = "https://tools.ietf.org/html/rfc4918#section-11.2";
const IN_PROGRESS_TYPE: &str = "https://tools.ietf.org/html/rfc7231#section-6.5.8";

/// `POST path` with the bearer token, `Idempotency-Key: key` and exactly `body` as sent.
async fn post_raw(server: &TestServer, path: &str, token: &str, key: &str, body: &str) -> Reply {
    let response = server
        .http
        .post(format!("{}{path}", server.base))
        .bearer_auth(token)
        .header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("the server answers");
    into_reply(response).await
}

/// `POST path` with the bearer token, `Idempotency-Key: key` and `body` as JSON.
async fn post_keyed(
    server: &TestServer,
    path: &str,
    token: &str,
    key: &str,
    body: &Value,
) -> Reply {
    post_raw(server, path, token, key, &body.to_string()).await
}

/// The `Idempotent-Replayed` header, if any.
fn replayed(reply: &Reply) -> Option<&str> {
    reply
        .headers
        .get("idempotent-replayed")
        .map(|v| v.to_str().expect("ascii"))
}

/// How many sessions of any terminal carry `reference`.
async fn sessions_with(server: &TestServer, reference: &str) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let mut conn = AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    let row: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM payment_sessions WHERE merchant_reference = $1",
    )
    .bind::<Text, _>(reference)
    .get_result(&mut conn)
    .await
    .expect("count");
    row.n
}

/// Runs one SQL statement on the server's database.
async fn sql(server: &TestServer, statement: &str) {
    let mut conn = AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    diesel::sql_query(statement)
        .execute(&mut conn)
        .await
        .expect("statement");
}

#[tokio::test]
async fn a_retry_of_start_payment_replays_the_first_response() {
    let server = TestServer::sandbox("idem-start-replay").await;
    let token = server.token().await;
    let body = start_body("IDEM-START").to_string();
    let first = post_raw(&server, START, &token, "key-start-1", &body).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.content_type(), "application/json");
    assert_eq!(replayed(&first), None, "a first response is not a replay");

    let again = post_raw(&server, START, &token, "key-start-1", &body).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(replayed(&again), Some("true"));
    assert_eq!(again.content_type(), "application/json");
    assert_eq!(again.text, first.text, "the identical body");
    assert_eq!(sessions_with(&server, "IDEM-START").await, 1);

    // The draft's quoted form is the same key.
    let quoted = post_raw(&server, START, &token, "\"key-start-1\"", &body).await;
    assert_eq!(replayed(&quoted), Some("true"));
    assert_eq!(quoted.text, first.text);
}

#[tokio::test]
async fn a_retry_of_generate_payment_link_replays_the_first_response() {
    let server = TestServer::sandbox("idem-link-replay").await;
    let token = server.token().await;
    let first = post_keyed(&server, LINK, &token, "key-link-1", &link_body("IDEM-LINK")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(replayed(&first), None);
    let again = post_keyed(&server, LINK, &token, "key-link-1", &link_body("IDEM-LINK")).await;
    assert_eq!(again.status, 200);
    assert_eq!(replayed(&again), Some("true"));
    assert_eq!(again.text, first.text);
    assert_eq!(sessions_with(&server, "IDEM-LINK").await, 1);
}

#[tokio::test]
async fn the_same_key_with_another_request_is_422() {
    let server = TestServer::sandbox("idem-reuse").await;
    let token = server.token().await;
    let body = start_body("IDEM-REUSE");
    let first = post_keyed(&server, START, &token, "key-reuse", &body).await;
    assert_eq!(first.status, 200, "{}", first.body);

    let other_amount = with(body.clone(), "totalTransactionAmount", json!(99.99));
    let pretty = serde_json::to_string_pretty(&body).expect("json");
    for reply in [
        post_keyed(&server, START, &token, "key-reuse", &other_amount).await,
        // Another route.
        post_keyed(&server, LINK, &token, "key-reuse", &link_body("IDEM-REUSE")).await,
        // The same object, re-serialised: the fingerprint covers the exact bytes.
        post_raw(&server, START, &token, "key-reuse", &pretty).await,
    ] {
        assert_problem(&reply, 422, KEY_REUSED_TYPE);
        assert_eq!(reply.body["title"], "Idempotency-Key is already used");
        assert!(
            reply.str("detail").contains("different request"),
            "{}",
            reply.body
        );
        assert!(reply.body.get("errors").is_none());
        assert_eq!(replayed(&reply), None);
    }
    assert_eq!(sessions_with(&server, "IDEM-REUSE").await, 1);
    // The refusals kept nothing: the first response still replays.
    let again = post_keyed(&server, START, &token, "key-reuse", &body).await;
    assert_eq!(replayed(&again), Some("true"));
    assert_eq!(again.text, first.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_requests_with_one_key_create_exactly_one_session() {
    let server = std::sync::Arc::new(TestServer::sandbox("idem-race").await);
    let token = server.token().await;
    let body = start_body("IDEM-RACE").to_string();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (server, token, body) = (server.clone(), token.clone(), body.clone());
            tokio::spawn(async move { post_raw(&server, START, &token, "key-race", &body).await })
        })
        .collect();
    let (mut fresh, mut replays, mut conflicts) = (Vec::new(), Vec::new(), 0);
    for task in tasks {
        let reply = task.await.expect("join");
        match (reply.status.as_u16(), replayed(&reply)) {
            (200, None) => fresh.push(reply.text),
            (200, Some("true")) => replays.push(reply.text),
            (409, None) => {
                assert_problem(&reply, 409, IN_PROGRESS_TYPE);
                assert_eq!(
                    reply.body["title"],
                    "A request is outstanding for this Idempotency-Key"
                );
                conflicts += 1;
            }
            (status, header) => panic!("unexpected {status} ({header:?}): {}", reply.text),
        }
    }
    eprintln!(
        "20 racing requests: {} created, {} replayed, {conflicts} × 409",
        fresh.len(),
        replays.len()
    );
    assert_eq!(fresh.len(), 1, "exactly one request created the session");
    assert!(
        replays.iter().all(|r| *r == fresh[0]),
        "replays are the first response"
    );
    assert_eq!(1 + replays.len() + conflicts, 20);
    assert_eq!(sessions_with(&server, "IDEM-RACE").await, 1);
}

#[tokio::test]
async fn a_key_of_another_terminal_never_replays() {
    let server = TestServer::sandbox("idem-terminals").await;
    server.add_terminal("T-IDEM", true).await;
    let (id, secret) = server
        .add_client("T-IDEM", vec![checkout_domain::auth::Role::SvcTerminal])
        .await;
    let mine = server.token().await;
    let theirs = server.token_for(&id, &secret).await;
    let body = start_body("IDEM-SHARED");
    let a = post_keyed(&server, START, &mine, "key-shared", &body).await;
    let b = post_keyed(&server, START, &theirs, "key-shared", &body).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(b.status, 200, "{}", b.body);
    assert_eq!(replayed(&b), None);
    assert_ne!(a.str("checkoutSessionId"), b.str("checkoutSessionId"));
    assert_eq!(sessions_with(&server, "IDEM-SHARED").await, 2);
}

#[tokio::test]
async fn a_first_answer_of_svc_001_is_replayed() {
    let server = TestServer::sandbox("idem-svc001").await;
    let token = server.token().await;
    let holder = server
        .post(START, Some(&token), &start_body("IDEM-DUP"))
        .await;
    assert_eq!(holder.status, 200);
    let first = post_keyed(&server, START, &token, "key-dup", &start_body("IDEM-DUP")).await;
    assert_svc(
        &first,
        "SVC_001",
        422,
        "Payment session already exists",
        "The payment session already exists.",
    );
    assert_eq!(
        first.body["checkoutSessionId"],
        holder.str("checkoutSessionId")
    );
    assert_eq!(replayed(&first), None);

    let again = post_keyed(&server, START, &token, "key-dup", &start_body("IDEM-DUP")).await;
    assert_eq!(again.status, 422);
    assert_eq!(again.content_type(), "application/problem+json");
    assert_eq!(replayed(&again), Some("true"));
    assert_eq!(again.text, first.text, "the same body, instance included");

    // A validation 400 is kept the same way.
    let bad = with(start_body("IDEM-400"), "currencyCode", json!("DOLLARS"));
    let first = post_keyed(&server, START, &token, "key-400", &bad).await;
    assert_eq!(first.status, 400);
    let again = post_keyed(&server, START, &token, "key-400", &bad).await;
    assert_eq!(replayed(&again), Some("true"));
    assert_eq!(again.text, first.text);
}

#[tokio::test]
async fn without_the_header_a_repeated_request_is_exactly_the_specs() {
    let server = TestServer::sandbox("idem-none").await;
    let token = server.token().await;
    let first = server
        .post(START, Some(&token), &start_body("IDEM-NONE"))
        .await;
    assert_eq!(first.status, 200);
    assert_eq!(replayed(&first), None);
    let again = server
        .post(START, Some(&token), &start_body("IDEM-NONE"))
        .await;
    assert_svc(
        &again,
        "SVC_001",
        422,
        "Payment session already exists",
        "The payment session already exists.",
    );
    assert_eq!(replayed(&again), None);
    let link = server
        .post(LINK, Some(&token), &link_body("IDEM-NONE-L"))
        .await;
    assert_eq!(link.status, 200);
    let again = server
        .post(LINK, Some(&token), &link_body("IDEM-NONE-L"))
        .await;
    assert_eq!(again.status, 422);
    assert_eq!(again.body["type"], "SVC_001");
}

#[tokio::test]
async fn a_key_that_is_not_1_to_255_visible_ascii_characters_is_400() {
    let server = TestServer::sandbox("idem-bad-key").await;
    let token = server.token().await;
    let body = start_body("IDEM-BADKEY");
    let message = "Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces).";
    for key in ["", "has space", &"k".repeat(256), "\"\""] {
        let reply = post_keyed(&server, START, &token, key, &body).await;
        assert_validation(&reply, json!({ "Idempotency-Key": [message] }));
    }
    let reply = post_keyed(
        &server,
        LINK,
        &token,
        "tab\there",
        &link_body("IDEM-BADKEY"),
    )
    .await;
    assert_validation(&reply, json!({ "Idempotency-Key": [message] }));
    let reply = post_keyed(&server, START, &token, "\"unterminated", &body).await;
    assert_validation(
        &reply,
        json!({ "Idempotency-Key": ["Idempotency-Key is not a well-formed string."] }),
    );
    let twice = server
        .http
        .post(format!("{}{START}", server.base))
        .bearer_auth(&token)
        .header("Idempotency-Key", "one")
        .header("Idempotency-Key", "two")
        .json(&body)
        .send()
        .await
        .expect("answer");
    assert_validation(
        &into_reply(twice).await,
        json!({ "Idempotency-Key": ["Idempotency-Key must be sent at most once."] }),
    );
    assert_eq!(sessions_with(&server, "IDEM-BADKEY").await, 0);

    // The longest key is fine.
    let longest = post_keyed(&server, START, &token, &"k".repeat(255), &body).await;
    assert_eq!(longest.status, 200, "{}", longest.body);
}

#[tokio::test]
async fn a_5xx_keeps_nothing_and_a_retry_runs_again() {
    let server = TestServer::sandbox("idem-5xx").await;
    let token = server.token().await;
    let body = start_body("IDEM-5XX");
    // Every new session fails to insert: the create answers 500.
    sql(
        &server,
        "ALTER TABLE payment_sessions ADD CONSTRAINT refuse_all CHECK (amount < 0) NOT VALID",
    )
    .await;
    let failed = post_keyed(&server, START, &token, "key-5xx", &body).await;
    assert_problem(
        &failed,
        500,
        "https://tools.ietf.org/html/rfc7231#section-6.6.1",
    );
    assert_eq!(replayed(&failed), None);

    sql(
        &server,
        "ALTER TABLE payment_sessions DROP CONSTRAINT refuse_all",
    )
    .await;
    let retry = post_keyed(&server, START, &token, "key-5xx", &body).await;
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert_eq!(replayed(&retry), None, "the retry ran; it is no replay");
    assert_eq!(sessions_with(&server, "IDEM-5XX").await, 1);
}
