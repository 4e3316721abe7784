//! The Swagger UI at /swagger. The OpenAPI document itself is compared with its snapshot,
//! `docs/openapi.json`, in process by `checkout-http`'s tests (`tests/in_process/openapi.rs`).

use crate::support::TestServer;

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
