//! The gaps a security review found, closed, as an attacker or an operator observes them
//! through the real binary (issue 15, item 5).

use serde_json::json;

use crate::operator::{checkout, stdout};
use crate::support::{Mode, TestServer};
use crate::{assert_validation, link_body, start_body, with};

/// A right-to-left override (U+202E) in a description makes "Invoice <RLO>fdp.exe" read
/// "Invoice exe.pdf" on the payer's page: refused with a 400 naming the field.
#[tokio::test]
async fn bidi_overrides_in_payer_facing_text_are_refused_naming_the_field() {
    let server = TestServer::sandbox("sec-bidi").await;
    let token = server.token().await;
    let spoof = "Invoice \u{202E}fdp.exe";
    let message = |field: &str| {
        json!([format!(
            "{field} contains invisible formatting characters (such as bidirectional \
             overrides) that are not allowed."
        )])
    };

    let link = with(
        link_body("BIDI-1"),
        "generalPurchaseDescription",
        json!(spoof),
    );
    let reply = server
        .post("/pay/api/generate-payment-link", Some(&token), &link)
        .await;
    assert_validation(
        &reply,
        json!({ "GeneralPurchaseDescription": message("GeneralPurchaseDescription") }),
    );

    let mut start = start_body("BIDI-2");
    start["items"][0]["description"] = json!("Mug \u{2067}x\u{2069}");
    start["additionalCharges"][0]["chargeName"] = json!("Ship\u{200B}ping");
    let reply = server
        .post("/pay/api/start-payment", Some(&token), &start)
        .await;
    assert_validation(
        &reply,
        json!({
            "Items[0].Description": message("Items[0].Description"),
            "AdditionalCharges[0].ChargeName": message("AdditionalCharges[0].ChargeName"),
        }),
    );

    // Text in any script, with the joiners real text needs, is still accepted.
    let fine = with(
        link_body("BIDI-3"),
        "generalPurchaseDescription",
        json!("فاتورة ٧ — Café \u{1F468}\u{200D}\u{1F469}"),
    );
    let reply = server
        .post("/pay/api/generate-payment-link", Some(&token), &fine)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

const AUTH: &str = "/api/public/security/auth";

/// An HTTP client whose connections come from `source` (any 127.0.0.0/8 address is this
/// machine's).
fn client_from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(Some(source.parse().expect("an address")))
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .expect("http client")
}

/// One token request from `http`, with an `X-Forwarded-For` when given; the status.
async fn ask_token(
    http: &reqwest::Client,
    server: &TestServer,
    forwarded_for: Option<&str>,
    secret: &str,
) -> u16 {
    let mut request = http
        .post(format!("{}{AUTH}", server.base))
        .json(&json!({ "client_id": server.client_id, "client_secret": secret }));
    if let Some(xff) = forwarded_for {
        request = request.header("X-Forwarded-For", xff);
    }
    request.send().await.expect("an answer").status().as_u16()
}

/// Anyone may know the sandbox's `client_id`. Twenty wrong secrets from a stranger used to
/// exhaust the client's one bucket and lock its merchant out; now refusals count per client
/// and address, and the per-client limit counts issued tokens only.
#[tokio::test]
async fn a_stranger_with_wrong_secrets_cannot_lock_the_merchant_out() {
    let server = TestServer::start(
        "sec-lockout",
        Mode::Sandbox,
        &[
            (
                "CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_CLIENT_PER_MINUTE",
                "5",
            ),
            (
                "CHECKOUT__SECURITY__TOKEN_FAILURES_PER_CLIENT_ADDRESS_PER_MINUTE",
                "3",
            ),
        ],
    )
    .await;
    let stranger = client_from("127.0.0.2");
    let merchant = client_from("127.0.0.1");
    let mut statuses = Vec::new();
    for _ in 0..25 {
        statuses.push(ask_token(&stranger, &server, None, "guessed-secret").await);
    }
    assert_eq!(&statuses[..3], [401, 401, 401], "{statuses:?}");
    assert!(statuses[3..].iter().all(|s| *s == 429), "{statuses:?}");

    // The merchant, from its own address, still gets its tokens, up to its own limit.
    for n in 0..5 {
        let status = ask_token(&merchant, &server, None, &server.client_secret).await;
        assert_eq!(status, 200, "token {n} of the merchant");
    }
    assert_eq!(
        ask_token(&merchant, &server, None, &server.client_secret).await,
        429,
        "the per-client limit holds on issued tokens"
    );
}

/// Behind a TLS proxy every request comes from the proxy's address. With the proxy in
/// `trusted_proxies` each client gets its own bucket from `X-Forwarded-For`; the header sent
/// by anyone else is ignored, so spoofing it does not escape the limit.
#[tokio::test]
async fn x_forwarded_for_is_believed_from_trusted_proxies_only() {
    let server = TestServer::start(
        "sec-proxies",
        Mode::Sandbox,
        &[
            (
                "CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE",
                "2",
            ),
            (
                "CHECKOUT__SECURITY__TRUSTED_PROXIES",
                "127.0.0.1/32, 10.0.0.0/8",
            ),
        ],
    )
    .await;
    let proxy = client_from("127.0.0.1");
    let secret = server.client_secret.clone();
    // Two payers' merchants behind the proxy: each has its own two requests a minute.
    for client in ["198.51.100.1", "198.51.100.2"] {
        for _ in 0..2 {
            assert_eq!(ask_token(&proxy, &server, Some(client), &secret).await, 200);
        }
        assert_eq!(ask_token(&proxy, &server, Some(client), &secret).await, 429);
    }
    // What a client wrote left of the proxy's entry is not believed; a trusted hop is skipped.
    assert_eq!(
        ask_token(&proxy, &server, Some("203.0.113.9, 198.51.100.1"), &secret).await,
        429
    );
    assert_eq!(
        ask_token(&proxy, &server, Some("198.51.100.1, 10.1.2.3"), &secret).await,
        429
    );

    // A caller that is not a trusted proxy: its X-Forwarded-For is ignored.
    let spoofer = client_from("127.0.0.2");
    let statuses: Vec<u16> = claiming_other_addresses(&spoofer, &server, &secret).await;
    assert_eq!(statuses, [200, 200, 429, 429], "{statuses:?}");
}

/// Four requests, each claiming another address.
async fn claiming_other_addresses(
    http: &reqwest::Client,
    server: &TestServer,
    secret: &str,
) -> Vec<u16> {
    let mut statuses = Vec::new();
    for n in 1..=4 {
        let claimed = format!("192.0.2.{n}");
        statuses.push(ask_token(http, server, Some(&claimed), secret).await);
    }
    statuses
}

/// Swagger UI runs scripts on the payment origin: its pages carry their own strict
/// Content-Security-Policy and may not be framed; production does not serve it by default.
#[tokio::test]
async fn swagger_ui_has_a_strict_csp_and_is_off_in_production() {
    let server = TestServer::sandbox("sec-swagger").await;
    for path in [
        "/swagger",
        "/swagger/",
        "/swagger/swagger-ui-bundle.js",
        "/swagger/swagger-initializer.js",
    ] {
        let reply = server.get(path, None).await;
        let csp = reply
            .headers
            .get("content-security-policy")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no CSP on {path}"));
        let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
        for expected in [
            "default-src 'none'",
            "script-src 'self'",
            "frame-ancestors 'none'",
            "connect-src 'self'",
            "form-action 'none'",
        ] {
            assert!(directives.contains(&expected), "{path}: {csp}");
        }
        assert!(!csp.contains("unsafe-eval"), "{csp}");
        assert!(
            !directives
                .iter()
                .any(|d| d.starts_with("script-src") && d.contains("unsafe-inline")),
            "{csp}"
        );
        assert_eq!(reply.headers["x-frame-options"], "DENY", "{path}");
        assert_eq!(reply.headers["x-content-type-options"], "nosniff", "{path}");
    }

    let production = TestServer::start("sec-swagger-prod", Mode::Production, &[]).await;
    assert_eq!(production.get("/swagger/", None).await.status, 404);
    assert_eq!(production.get("/swagger", None).await.status, 404);
    let document = production.get("/openapi.json", None).await;
    assert_eq!(document.status, 200, "the contract is still published");
    assert!(document.body["paths"].is_object());
    // A setting turns it on where an operator wants it.
    let opted_in = TestServer::start(
        "sec-swagger-on",
        Mode::Production,
        &[("CHECKOUT__SECURITY__SWAGGER_UI", "true")],
    )
    .await;
    assert_eq!(opted_in.get("/swagger/", None).await.status, 200);
}

/// Deactivating a client revokes the tokens it holds at once on every instance, including
/// tokens each instance has already verified and cached.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deactivating_a_client_revokes_its_tokens_on_every_instance() {
    let a = TestServer::sandbox("sec-revoke-a").await;
    let key = a.dir.join("data/keys/sandbox.pk8");
    let key = key.to_str().expect("a UTF-8 path");
    let b = TestServer::start_on(
        a.database(),
        "sec-revoke-b",
        Mode::Sandbox,
        &[
            ("CHECKOUT__IDENTITY__KEY_FILE", key),
            ("CHECKOUT__SANDBOX__CLIENT_SECRET", a.client_secret.as_str()),
        ],
    )
    .await;
    let token = a.token().await;
    let status = "/pay/api/payment/00000000-0000-4000-8000-000000000000";
    // Both instances have verified (and cached) the token.
    for server in [&a, &b] {
        for _ in 0..3 {
            assert_eq!(server.get(status, Some(&token)).await.status, 404);
        }
    }

    stdout(&checkout(&a, &["client", "deactivate", &a.client_id]));
    let deactivated = std::time::Instant::now();
    // Within the client status cache's second, then refused for good on both.
    for server in [&a, &b] {
        loop {
            let reply = server.get(status, Some(&token)).await;
            if reply.status == 401 {
                crate::assert_problem(
                    &reply,
                    401,
                    "https://tools.ietf.org/html/rfc7235#section-3.1",
                );
                break;
            }
            assert_eq!(reply.status, 404, "{}", reply.body);
            assert!(
                deactivated.elapsed() < std::time::Duration::from_millis(1500),
                "{} still accepts the token {:?} after the deactivation",
                server.base,
                deactivated.elapsed()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    for server in [&a, &b] {
        for _ in 0..3 {
            assert_eq!(server.get(status, Some(&token)).await.status, 401);
        }
        // And no new token either.
        let reply = server
            .post(
                AUTH,
                None,
                &json!({ "client_id": a.client_id, "client_secret": a.client_secret }),
            )
            .await;
        assert_eq!(reply.status, 401);
    }
}
