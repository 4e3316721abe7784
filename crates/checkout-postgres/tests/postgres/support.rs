//! The test database, and the domain's shared builders.

pub use checkout_domain::testing::builders::*;

use checkout_domain::terminal::Terminal;
use checkout_postgres::PgStore;
use checkout_test_db::TestDatabase;

/// A fresh database with the terminals `T-1` and `T-2`.
pub async fn database() -> (TestDatabase, PgStore) {
    let db = TestDatabase::create().await.unwrap();
    let store = db.store();
    for number in ["T-1", "T-2"] {
        store
            .create_terminal(&Terminal {
                number: terminal(number),
                display_name: format!("Merchant {number}"),
                active: true,
                callback_hosts: None,
                max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
                capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
            })
            .await
            .unwrap();
    }
    (db, store)
}

/// Runs one SQL query returning a count on the test's database.
pub async fn count(db: &TestDatabase, query: &str) -> i64 {
    use diesel::sql_types::BigInt;
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let row: Count = diesel::sql_query(query)
        .get_result(&mut conn)
        .await
        .unwrap();
    row.n
}

/// The plan lines of `EXPLAIN <query>` on the test's database, with sequential scans off (so
/// that a table of a few rows is read as a large one would be).
pub async fn plan(db: &TestDatabase, query: &str) -> Vec<String> {
    use diesel::sql_types::Text;
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
        line: String,
    }
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    diesel::sql_query("SET enable_seqscan = off")
        .execute(&mut conn)
        .await
        .unwrap();
    let lines: Vec<Line> = diesel::sql_query(format!("EXPLAIN {query}"))
        .load(&mut conn)
        .await
        .unwrap();
    lines.into_iter().map(|l| l.line).collect()
}
