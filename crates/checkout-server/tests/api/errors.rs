//! Every failure is a ProblemDetails (spec 2.6, 7.1): unknown routes, wrong methods, wrong
//! content types, bodies that are not JSON or too large; and the correlation id in the log.

use reqwest::Method;
use serde_json::json;

use crate::support::{Mode, TestServer};
use crate::{assert_problem, assert_validation, start_body};

#[tokio::test]
async fn an_unknown_route_is_a_problem_404() {
    let server = TestServer::sandbox("err-404").await;
    let reply = server.get("/pay/api/nothing-here", None).await;
    assert_problem(
        &reply,
        404,
        "https://tools.ietf.org/html/rfc7231#section-6.5.4",
    );
}

#[tokio::test]
async fn a_wrong_method_is_a_problem_405() {
    let server = TestServer::sandbox("err-405").await;
    let token = server.token().await;
    for (method, path, allow) in [
        (Method::GET, "/pay/api/start-payment", "POST"),
        (Method::PUT, "/pay/api/generate-payment-link", "POST"),
        (
            Method::DELETE,
            "/pay/api/payment/9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60",
            "GET",
        ),
        (Method::GET, "/api/public/security/auth", "POST"),
    ] {
        let reply = server.send(method, path, Some(&token), None).await;
        assert_problem(
            &reply,
            405,
            "https://tools.ietf.org/html/rfc7231#section-6.5.5",
        );
        assert_eq!(
            reply.headers["allow"], allow,
            "RFC 9110: a 405 names the methods"
        );
    }
}

#[tokio::test]
async fn a_body_that_is_not_json_is_refused_with_a_problem() {
    let server = TestServer::sandbox("err-body").await;
    let token = server.token().await;
    let url = format!("{}/pay/api/start-payment", server.base);

    let text = server
        .http
        .post(&url)
        .bearer_auth(&token)
        .header("Content-Type", "text/plain")
        .body("amount=10")
        .send()
        .await
        .expect("answer");
    let reply = crate::support::server::into_reply(text).await;
    assert_problem(
        &reply,
        415,
        "https://tools.ietf.org/html/rfc7231#section-6.5.13",
    );

    let broken = server
        .http
        .post(&url)
        .bearer_auth(&token)
        .header("Content-Type", "application/json")
        .body("{\"totalTransactionAmount\": ")
        .send()
        .await
        .expect("answer");
    let reply = crate::support::server::into_reply(broken).await;
    assert_validation(
        &reply,
        json!({ "Body": ["The request body is not a valid JSON object."] }),
    );

    let array = server
        .http
        .post(&url)
        .bearer_auth(&token)
        .json(&json!([1, 2, 3]))
        .send()
        .await
        .expect("answer");
    let reply = crate::support::server::into_reply(array).await;
    assert_validation(
        &reply,
        json!({ "Body": ["The request body is not a valid JSON object."] }),
    );
}

#[tokio::test]
async fn a_body_over_the_limit_is_a_problem_413() {
    let server = TestServer::sandbox("err-413").await;
    let token = server.token().await;
    let mut body = start_body("BIG-1");
    body["generalPurchaseDescription"] = json!("x".repeat(200 * 1024));
    let reply = server
        .post("/pay/api/start-payment", Some(&token), &body)
        .await;
    assert_problem(
        &reply,
        413,
        "https://tools.ietf.org/html/rfc7231#section-6.5.11",
    );
    assert_eq!(
        reply.body["detail"],
        "The request body is larger than 65536 bytes."
    );
}

#[tokio::test]
async fn the_body_limit_is_a_setting() {
    let server = TestServer::start(
        "err-413-setting",
        Mode::Sandbox,
        &[("CHECKOUT__SECURITY__MAX_BODY_BYTES", "2048")],
    )
    .await;
    let token = server.token().await;
    // Line items of 200 characters each: 5 fit in 2048 bytes, 12 do not.
    let with_items = |reference: &str, n: usize| {
        let mut body = start_body(reference);
        let item = json!({ "itemCode": "SKU", "quantity": 1, "description": "x".repeat(200),
                           "amount": 1.00, "currencyCode": "USD" });
        body["items"] = json!(vec![item; n]);
        body
    };
    let body = with_items("LIMIT-1", 5);
    assert!(body.to_string().len() < 2048);
    let under = server
        .post("/pay/api/start-payment", Some(&token), &body)
        .await;
    assert_eq!(under.status, 200, "{}", under.body);
    let body = with_items("LIMIT-2", 12);
    let over = server
        .post("/pay/api/start-payment", Some(&token), &body)
        .await;
    assert_problem(
        &over,
        413,
        "https://tools.ietf.org/html/rfc7231#section-6.5.11",
    );
    assert_eq!(
        over.body["detail"],
        "The request body is larger than 2048 bytes."
    );
}

#[tokio::test]
async fn the_instance_and_the_operation_id_appear_in_the_request_log_line() {
    let server = TestServer::sandbox("err-trace").await;
    let token = server.token().await;
    let operation = "op-4d1f0c55-8f0e-4a8e-b0a5-1e9f3c7d2b11";
    let response = server
        .http
        .post(format!("{}/pay/api/start-payment", server.base))
        .bearer_auth(&token)
        .header("X-idoperacion", operation)
        .json(&json!({}))
        .send()
        .await
        .expect("answer");
    let request_id = response.headers()["x-request-id"]
        .to_str()
        .expect("ascii")
        .to_owned();
    let reply = crate::support::server::into_reply(response).await;
    assert_eq!(reply.status, 400);
    let instance = reply.str("instance");
    assert_eq!(
        instance, request_id,
        "the x-request-id header is the instance"
    );

    // The line is written when the response is; give the writer a moment.
    let mut found = None;
    for _ in 0..50 {
        found = server
            .log()
            .lines()
            .find(|line| line.contains(instance) && line.contains(operation))
            .map(str::to_owned);
        if found.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let line = found.unwrap_or_else(|| {
        panic!(
            "no log line with {instance} and {operation}:\n{}",
            server.log()
        )
    });
    let parsed: serde_json::Value = serde_json::from_str(&line).expect("a JSON log line");
    assert!(line.contains("400"), "the status is logged: {parsed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_server_finish_and_exit_cleanly() {
    let mut server = TestServer::sandbox("sigterm").await;
    let token = server.token().await;
    let reply = server
        .post(
            "/pay/api/start-payment",
            Some(&token),
            &start_body("BEFORE-STOP"),
        )
        .await;
    assert_eq!(reply.status, 200);
    let status =
        tokio::task::block_in_place(|| server.terminate(std::time::Duration::from_secs(20)))
            .expect("the server exits after SIGTERM");
    assert!(status.success(), "exit status {status}");
    assert!(server.log().contains("service stopped"), "{}", server.log());
}
