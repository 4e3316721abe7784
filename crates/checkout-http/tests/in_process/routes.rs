//! Each route declared once: every operation the served `/openapi.json` documents is mounted
//! (the router answers it, neither its 404 nor a 405), every other method on a documented path
//! is a 405 whose `Allow` lists exactly the documented ones, and the API's route table
//! (`checkout_http::routes`) is exactly the document's paths.

use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;

use crate::support;

/// The router's own 404 detail (an unknown address), as opposed to a handler's 404.
const NO_ROUTE: &str = "No resource exists at this address.";

/// `/pay/api/payment/{checkoutSessionId}` with each template filled.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "00000000-0000-4000-8000-000000000000"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[actix_web::test]
async fn every_documented_operation_is_mounted_and_nothing_else_on_its_path() {
    let app = support::start().await;
    let doc = app
        .send(TestRequest::get().uri("/openapi.json"))
        .await
        .json();
    let paths = doc["paths"].as_object().expect("paths");
    let table = checkout_http::routes::documented_routes();
    assert_eq!(
        paths.keys().cloned().collect::<Vec<_>>(),
        table.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(),
        "the served document's paths are the route table's"
    );
    for (path, methods) in &table {
        let documented: Vec<String> = paths[path]
            .as_object()
            .expect("a path item")
            .keys()
            .map(|m| m.to_uppercase())
            .collect();
        let mut listed: Vec<String> = methods.iter().map(Method::to_string).collect();
        let mut sorted = documented.clone();
        sorted.sort();
        listed.sort();
        assert_eq!(sorted, listed, "{path}");
        for method in methods {
            let reply = app
                .send(
                    TestRequest::default()
                        .method(method.clone())
                        .uri(&concrete(path)),
                )
                .await;
            let routed = reply.status != StatusCode::METHOD_NOT_ALLOWED
                && !(reply.status == StatusCode::NOT_FOUND && reply.json()["detail"] == NO_ROUTE);
            assert!(
                routed,
                "{method} {path} is documented but not mounted: {}",
                reply.text()
            );
        }
        let reply = app
            .send(
                TestRequest::default()
                    .method(Method::PUT)
                    .uri(&concrete(path)),
            )
            .await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "PUT {path}");
        let allow: Vec<String> = methods.iter().map(Method::to_string).collect();
        assert_eq!(reply.header("allow"), allow.join(", "), "{path}");
    }
}
