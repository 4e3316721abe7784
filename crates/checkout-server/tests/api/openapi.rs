//! The OpenAPI document (a snapshot in docs/openapi.json) and the Swagger UI at /swagger.

use std::path::Path;

use crate::support::TestServer;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");

#[tokio::test]
async fn the_served_document_matches_the_snapshot() {
    let server = TestServer::sandbox("openapi").await;
    let reply = server.get("/openapi.json", None).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["openapi"], "3.1.0");
    for path in [
        "/api/public/security/auth",
        "/pay/api/start-payment",
        "/pay/api/generate-payment-link",
        "/pay/api/payment/{checkoutSessionId}",
    ] {
        assert!(
            reply.body["paths"].get(path).is_some(),
            "{path} is documented"
        );
    }
    let served = serde_json::to_string_pretty(&reply.body).expect("json") + "\n";
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(SNAPSHOT, &served).expect("write the snapshot");
        return;
    }
    let saved = std::fs::read_to_string(Path::new(SNAPSHOT)).unwrap_or_default();
    assert!(
        saved == served,
        "the OpenAPI document changed; review the diff and run \
         `UPDATE_SNAPSHOTS=1 cargo nextest run -p checkout-server openapi` to accept it"
    );
}

#[tokio::test]
async fn swagger_serves_the_ui_from_vendored_assets() {
    let server = TestServer::sandbox("swagger").await;
    let redirect = server.get("/swagger", None).await;
    assert!(redirect.status.is_redirection());
    assert_eq!(redirect.headers["location"], "/swagger/");

    let page = server.get("/swagger/", None).await;
    assert_eq!(page.status, 200);
    assert!(page.content_type().starts_with("text/html"));
    let html = page.body.as_str().expect("html text");
    assert!(html.contains("swagger-ui"), "{html}");

    for asset in [
        "/swagger/swagger-ui.css",
        "/swagger/swagger-ui-bundle.js",
        "/swagger/swagger-initializer.js",
    ] {
        let reply = server.get(asset, None).await;
        assert_eq!(reply.status, 200, "{asset}");
    }
    let init = server.get("/swagger/swagger-initializer.js", None).await;
    assert!(init
        .body
        .as_str()
        .is_some_and(|js| js.contains("/openapi.json")));
}
