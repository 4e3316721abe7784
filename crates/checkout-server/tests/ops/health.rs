//! `GET /health/live` and `GET /health/ready`: unauthenticated, cheap, JSON.

use crate::support::TestServer;

#[tokio::test]
async fn live_and_ready_answer_200_without_a_token() {
    let server = TestServer::sandbox("health").await;
    let live = server.get("/health/live", None).await;
    assert_eq!(live.status, 200, "{}", live.body);
    assert_eq!(live.body["status"], "live");
    let ready = server.get("/health/ready", None).await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(ready.body["status"], "ready");
}

#[tokio::test]
async fn ready_is_503_when_a_migration_is_missing() {
    let server = TestServer::sandbox("health-migrations").await;
    let mut conn = <diesel_async::AsyncPgConnection as diesel_async::AsyncConnection>::establish(
        server.database_url(),
    )
    .await
    .expect("connect");
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(
            "DELETE FROM __diesel_schema_migrations \
             WHERE version = (SELECT max(version) FROM __diesel_schema_migrations)",
        ),
        &mut conn,
    )
    .await
    .expect("forget the newest migration");
    let ready = server.get("/health/ready", None).await;
    crate::assert_problem(&ready, 503);
    assert_eq!(ready.headers["retry-after"], "1");
    // The process still answers.
    assert_eq!(server.get("/health/live", None).await.status, 200);
}

#[tokio::test]
async fn health_routes_take_only_get() {
    let server = TestServer::sandbox("health-methods").await;
    let reply = server
        .post("/health/ready", None, &serde_json::json!({}))
        .await;
    crate::assert_problem(&reply, 405);
    assert_eq!(reply.headers["allow"], "GET");
}
