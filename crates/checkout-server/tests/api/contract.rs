//! The precision of the published contract (issue 17, item 5): every operation described
//! with an example, and the examples sent to a live sandbox; closed sets as enums, dates as
//! `date-time`, amounts with no `multipleOf` and no float format; public operations with
//! `security: []`; no reference to a missing file. And the two server fixes that came with
//! it: the CSRF cookie is not `Secure` over plain http, and `client_id` lengths count
//! characters.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{Mode, TestServer};

/// The sandbox secret the token example uses (README: pin it with
/// `CHECKOUT__SANDBOX__CLIENT_SECRET=choose-a-secret`).
const EXAMPLE_SECRET: &str = "choose-a-secret";

/// Every operation of `doc` as (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            all.push((method.clone(), path.clone(), operation.clone()));
        }
    }
    all
}

/// The `example` of `operation`'s JSON request body.
fn body_example(operation: &Value) -> Option<Value> {
    operation["requestBody"]["content"]["application/json"]
        .get("example")
        .cloned()
}

/// Every schema object inside `value`, depth first.
fn schemas<'a>(value: &'a Value, out: &mut Vec<(&'a str, &'a Value)>, name: &'a str) {
    match value {
        Value::Object(map) => {
            if map.contains_key("type") || map.contains_key("$ref") {
                out.push((name, value));
            }
            for (key, child) in map {
                schemas(child, out, key);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| schemas(v, out, name)),
        _ => {}
    }
}

#[tokio::test]
async fn every_operation_has_a_summary_a_description_and_an_example() {
    let server = TestServer::sandbox("contract-ops").await;
    let doc = server.get("/openapi.json", None).await.body;
    assert_eq!(doc["servers"][0]["url"], "/");
    for (method, path, operation) in operations(&doc) {
        let name = format!("{} {path}", method.to_uppercase());
        for field in ["summary", "description", "operationId"] {
            assert!(
                operation[field].as_str().is_some_and(|s| !s.is_empty()),
                "{name} has no {field}"
            );
        }
        let text = operation.to_string();
        assert!(text.contains("\"example\""), "{name} has no example");
        let public = [
            "/api/public/security/auth",
            "/.well-known/jwks.json",
            // The processor's webhook: its signature is the credential.
            "/pay/api/processor-events",
        ]
        .contains(&&*path);
        if public {
            assert_eq!(operation["security"], json!([]), "{name}");
        } else {
            assert_eq!(
                operation["security"],
                json!([{ "bearer": [] }, { "oauth2": [] }]),
                "{name}"
            );
        }
    }
}

#[tokio::test]
async fn amounts_dates_and_closed_sets_are_typed_precisely() {
    let server = TestServer::sandbox("contract-types").await;
    let doc = server.get("/openapi.json", None).await.body;
    let mut all = Vec::new();
    schemas(&doc["components"], &mut all, "");
    for (name, schema) in &all {
        assert!(schema.get("multipleOf").is_none(), "{name}: {schema}");
        if schema["type"] == "number" {
            assert!(schema.get("format").is_none(), "{name}: {schema}");
        }
        if name.ends_with("DateTime") || *name == "timestamp" {
            assert_eq!(schema["format"], "date-time", "{name}: {schema}");
        }
    }
    let components = &doc["components"]["schemas"];
    let record = &components["PaymentStatusResponse"]["properties"];
    assert_eq!(record["state"]["$ref"], "#/components/schemas/PaymentState");
    assert_eq!(
        record["stateCode"]["$ref"],
        "#/components/schemas/PaymentStateCode"
    );
    assert_eq!(
        record["sessionType"]["$ref"],
        "#/components/schemas/SessionType"
    );
    assert_eq!(
        components["PaymentState"]["enum"].as_array().map(Vec::len),
        Some(9)
    );
    // One currency list, referenced everywhere.
    let text = doc.to_string();
    assert_eq!(
        text.matches("\"XPF\"").count(),
        1,
        "the currency list is copied"
    );
    assert!(text.matches("#/components/schemas/CurrencyCode").count() >= 4);
}

#[tokio::test]
async fn every_file_the_document_names_exists() {
    let server = TestServer::sandbox("contract-files").await;
    let text = server.get("/openapi.json", None).await.text;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    let mut named = 0;
    for (at, _) in text.match_indices("docs/") {
        let file: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
            .collect();
        let file = file.trim_end_matches('.');
        assert!(
            std::path::Path::new(root).join(file).is_file(),
            "{file} does not exist"
        );
        named += 1;
    }
    assert!(named > 0);
}

/// Sends every example of the document, as published, to a sandbox whose secret is the
/// example's: the token, both creates and the webhook endpoint are accepted; the reference
/// example finds the session the start-payment example made; capture and refund examples
/// pass validation (the fresh session has nothing to capture or refund: 422 SVC_008).
#[tokio::test]
async fn the_examples_work_against_the_sandbox() {
    let server = TestServer::start(
        "contract-examples",
        Mode::Sandbox,
        &[("CHECKOUT__SANDBOX__CLIENT_SECRET", EXAMPLE_SECRET)],
    )
    .await;
    let doc = server.get("/openapi.json", None).await.body;
    let ops = operations(&doc);
    let find = |method: &str, path: &str| {
        ops.iter()
            .find(|(m, p, _)| m == method && p == path)
            .map(|(_, _, op)| op.clone())
            .unwrap_or_else(|| panic!("{method} {path} is documented"))
    };

    let token_body = body_example(&find("post", "/api/public/security/auth")).expect("example");
    let reply = server
        .post("/api/public/security/auth", None, &token_body)
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let token = reply.str("token").to_owned();
    let token = Some(token.as_str());

    let start = body_example(&find("post", "/pay/api/start-payment")).expect("example");
    let reply = server.post("/pay/api/start-payment", token, &start).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let id = reply.str("checkoutSessionId").to_owned();

    let link = body_example(&find("post", "/pay/api/generate-payment-link")).expect("example");
    let reply = server
        .post("/pay/api/generate-payment-link", token, &link)
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);

    let by_reference = find("get", "/pay/api/payment");
    let reference = by_reference["parameters"][0]["example"]
        .as_str()
        .expect("a reference example");
    let reply = server
        .get(
            &format!("/pay/api/payment?transactionReferenceNumber={reference}"),
            token,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body[0]["checkoutSessionId"], id.as_str());

    for path in [
        "/pay/api/payment/{checkoutSessionId}/capture",
        "/pay/api/payment/{checkoutSessionId}/refunds",
    ] {
        let body = body_example(&find("post", path)).expect("example");
        let reply = server
            .post(&path.replace("{checkoutSessionId}", &id), token, &body)
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{path}: {}",
            reply.body
        );
        assert_eq!(reply.body["type"], "SVC_008", "{path}");
    }

    let endpoint = body_example(&find("post", "/pay/api/webhook-endpoints")).expect("example");
    let reply = server
        .post("/pay/api/webhook-endpoints", token, &endpoint)
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);

    // A path example names no real session: the documented 404, not a 400.
    let status = find("get", "/pay/api/payment/{checkoutSessionId}");
    let example_id = status["parameters"][0]["example"]
        .as_str()
        .expect("an id example");
    let reply = server
        .get(&format!("/pay/api/payment/{example_id}"), token)
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
}

#[tokio::test]
async fn the_csrf_cookie_is_not_secure_over_plain_http() {
    let server = TestServer::sandbox("contract-cookie").await;
    let id = server.new_checkout("cookie").await;
    let response = server
        .http
        .get(format!("{}/pay/checkout-payment/{id}", server.base))
        .send()
        .await
        .expect("the page");
    assert_eq!(response.status(), 200);
    let cookies: Vec<String> = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    assert!(!cookies.is_empty(), "the page sets its CSRF cookie");
    for cookie in cookies {
        assert!(cookie.contains("HttpOnly"), "{cookie}");
        assert!(!cookie.to_ascii_lowercase().contains("secure"), "{cookie}");
    }
}

#[tokio::test]
async fn client_id_length_counts_characters() {
    let server = TestServer::sandbox("contract-client-id").await;
    // 128 characters, 256 bytes: within the documented maxLength, so an unknown client.
    let long = "é".repeat(128);
    let reply = server
        .post(
            "/api/public/security/auth",
            None,
            &json!({ "client_id": long, "client_secret": "x" }),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.body);
    let too_long = "é".repeat(129);
    let reply = server
        .post(
            "/api/public/security/auth",
            None,
            &json!({ "client_id": too_long, "client_secret": "x" }),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert!(
        reply.body["errors"].get("ClientId").is_some(),
        "{}",
        reply.body
    );
}
