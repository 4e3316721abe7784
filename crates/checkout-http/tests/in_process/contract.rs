//! What the contract adds for tools (issue 34, item 4 and 5): the API's version on every
//! answer, servers from the public base URL, the payer's URL in the start-payment answer, the
//! OAuth 2.0 client-credentials form at the token route (body or HTTP Basic), its
//! `RateLimit` headers, the `oauth2` security scheme and the `webhooks` section.

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use base64::Engine;
use serde_json::json;

use crate::support::{self, start_payment_body, BASE_URL};

const TOKEN: &str = "/api/public/security/auth";

fn form(body: &str) -> TestRequest {
    TestRequest::post()
        .uri(TOKEN)
        .insert_header(("Content-Type", "application/x-www-form-urlencoded"))
        .set_payload(body.to_owned())
}

fn basic(id: &str, secret: &str) -> (&'static str, String) {
    let pair = base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"));
    ("Authorization", format!("Basic {pair}"))
}

#[actix_web::test]
async fn every_answer_carries_the_api_version_of_the_document() {
    let app = support::start().await;
    let doc = app.send(TestRequest::get().uri("/openapi.json")).await;
    let version = doc.json()["info"]["version"].as_str().unwrap().to_owned();
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    assert_eq!(doc.header("api-version"), version);
    let token = app.token().await;
    let answers = [
        app.post_json("/pay/api/start-payment", &token, &start_payment_body("V-1"))
            .await,
        app.send(TestRequest::get().uri("/nowhere")).await,
        app.send(TestRequest::get().uri("/pay/api/events")).await,
        app.send(TestRequest::get().uri("/health/live")).await,
        app.post_json("/pay/api/start-payment", &token, &json!({"x": 1}))
            .await,
    ];
    for reply in answers {
        assert_eq!(reply.header("api-version"), version, "{}", reply.status);
    }
}

#[actix_web::test]
async fn servers_are_the_configured_base_url_else_relative() {
    let app = support::start().await;
    let doc = app
        .send(TestRequest::get().uri("/openapi.json"))
        .await
        .json();
    assert_eq!(doc["servers"][0]["url"], "/");
    let flow = &doc["components"]["securitySchemes"]["oauth2"]["flows"]["clientCredentials"];
    assert_eq!(flow["tokenUrl"], TOKEN);

    let configured = checkout_http::routes::document(Some("https://pay.example.com/"));
    assert_eq!(configured["servers"][0]["url"], "https://pay.example.com");
    let flow = &configured["components"]["securitySchemes"]["oauth2"]["flows"];
    assert_eq!(
        flow["clientCredentials"]["tokenUrl"],
        "https://pay.example.com/api/public/security/auth"
    );
    // Every operation behind the bearer token also names the flow that fetches it.
    let start = &doc["paths"]["/pay/api/start-payment"]["post"]["security"];
    assert_eq!(start, &json!([{"bearer": []}, {"oauth2": []}]));
    // The webhook requests, signed as Standard Webhooks, with the events' own schema.
    let webhook = &doc["webhooks"]["paymentEvent"]["post"];
    assert_eq!(
        webhook["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/EventBody"
    );
    let headers: Vec<&str> = webhook["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        headers,
        ["webhook-id", "webhook-timestamp", "webhook-signature"]
    );
}

#[actix_web::test]
async fn the_start_payment_answer_carries_the_payers_url() {
    let app = support::start().await;
    let token = app.token().await;
    let reply = app
        .post_json(
            "/pay/api/start-payment",
            &token,
            &start_payment_body("URL-1"),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    let id = body["checkoutSessionId"].as_str().unwrap();
    let url = body["checkoutUrl"].as_str().unwrap();
    assert_eq!(url, format!("{BASE_URL}/pay/checkout-payment/{id}"));
    // The URL is the page: it answers the payment page.
    let page = app
        .send(TestRequest::get().uri(url.strip_prefix(BASE_URL).unwrap()))
        .await;
    assert_eq!(page.status, StatusCode::OK);
}

#[actix_web::test]
async fn the_token_route_takes_the_oauth2_client_credentials_form() {
    let app = support::start().await;
    let check = |reply: &support::Reply| {
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        let body = reply.json();
        assert_eq!(body["access_token"], body["token"]);
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(body["expires_in"], body["expiresIn"]);
        assert!(body["expires_in"].as_u64().unwrap() > 0);
        body["access_token"].as_str().unwrap().to_owned()
    };
    // Credentials in the body, with a scope (ignored) and an extension parameter (ignored,
    // RFC 6749 section 3.2).
    let reply = app
        .send(form(
            "grant_type=client_credentials&client_id=client-1&client_secret=secret-1&scope=payments&audience=x",
        ))
        .await;
    let token = check(&reply);
    // The token works on the API.
    let reply = app.get_auth("/pay/api/events", &token).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    // Credentials in HTTP Basic, as Swagger UI and most OAuth libraries send them.
    let reply = app
        .send(form("grant_type=client_credentials").insert_header(basic("client-1", "secret-1")))
        .await;
    check(&reply);
    // The JSON body of the spec answers the same fields.
    let reply = app
        .send(
            TestRequest::post()
                .uri(TOKEN)
                .set_json(json!({"client_id": "client-1", "client_secret": "secret-1"})),
        )
        .await;
    check(&reply);

    // Refusals: ProblemDetails naming the field.
    let cases = [
        (
            form("client_id=client-1&client_secret=secret-1"),
            "GrantType",
        ),
        (
            form("grant_type=password&client_id=client-1&client_secret=secret-1"),
            "GrantType",
        ),
        (form("grant_type=client_credentials"), "ClientId"),
        (
            form("grant_type=client_credentials&client_id=client-1")
                .insert_header(basic("client-1", "secret-1")),
            "Authorization",
        ),
        (
            form("grant_type=client_credentials").insert_header(("Authorization", "Basic %%%")),
            "Authorization",
        ),
    ];
    for (request, field) in cases {
        let reply = app.send(request).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{field}: {}",
            reply.text()
        );
        assert_eq!(reply.header("content-type"), "application/problem+json");
        assert!(
            reply.json()["errors"][field].is_array(),
            "{field}: {}",
            reply.text()
        );
    }
    let reply = app
        .send(form("grant_type=client_credentials").insert_header(basic("client-1", "wrong")))
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.text());
    assert!(!reply.text().contains("wrong"));
}

#[actix_web::test]
async fn the_token_route_tells_its_rate_limits() {
    let app = support::start().await;
    let ask = || {
        TestRequest::post()
            .uri(TOKEN)
            .set_json(json!({"client_id": "client-1", "client_secret": "secret-1"}))
    };
    let first = app.send(ask()).await;
    assert_eq!(
        first.header("ratelimit-policy"),
        "\"address\";q=1000;w=60, \"client\";q=1000;w=60"
    );
    let second = app.send(ask()).await;
    let remaining = |reply: &support::Reply| -> u64 {
        let value = reply.header("ratelimit");
        assert!(value.starts_with("\"address\";r="), "{value}");
        let r = value.split(';').nth(1).unwrap();
        r.trim_start_matches("r=").parse().unwrap()
    };
    assert_eq!(remaining(&first), 999);
    assert_eq!(remaining(&second), 998);
    // A refusal says it too.
    let refused = app
        .send(
            TestRequest::post()
                .uri(TOKEN)
                .set_json(json!({"client_id": "client-1", "client_secret": "nope"})),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(remaining(&refused), 997);
}
