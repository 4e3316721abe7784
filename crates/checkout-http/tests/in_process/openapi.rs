//! The OpenAPI document served at `/openapi.json`, compared with its one snapshot,
//! `docs/openapi.json` (which the OpenAPI linters and the README read too). Like the other
//! generated documents in `docs/`, it is rewritten with `UPDATE_SNAPSHOTS=1`.

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;

use crate::support;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");

#[actix_web::test]
async fn the_served_document_matches_docs_openapi_json() {
    let app = support::start().await;
    let reply = app.send(TestRequest::get().uri("/openapi.json")).await;
    assert_eq!(reply.status, StatusCode::OK);
    let served = serde_json::to_string_pretty(&reply.json()).expect("json") + "\n";
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(SNAPSHOT, &served).expect("write the snapshot");
        return;
    }
    let saved = std::fs::read_to_string(SNAPSHOT).unwrap_or_default();
    if saved != served {
        let diff = similar::TextDiff::from_lines(&saved, &served);
        panic!(
            "the OpenAPI document changed; review the diff and accept it with \
             `UPDATE_SNAPSHOTS=1 cargo nextest run -p checkout-http openapi`:\n{}",
            diff.unified_diff().header("docs/openapi.json", "served")
        );
    }
}
