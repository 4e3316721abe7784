//! The schema, the migrations and the test harness itself.

use checkout_domain::ports::TerminalDirectory;
use checkout_domain::terminal::Terminal;
use checkout_postgres::{run_migrations, MIGRATIONS_FINGERPRINT};
use checkout_test_db::{template_name, with_database, TestDatabase};
use diesel::sql_types::{Bool, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::support::*;

#[derive(diesel::QueryableByName, Debug, PartialEq, Eq)]
struct Column {
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Text)]
    data_type: String,
}

async fn columns(db: &TestDatabase, table: &str) -> Vec<(String, String)> {
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let rows: Vec<Column> = diesel::sql_query(
        "SELECT column_name::text AS column_name, data_type::text AS data_type \
         FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
    )
    .bind::<Text, _>(table)
    .load(&mut conn)
    .await
    .unwrap();
    rows.into_iter()
        .map(|c| (c.column_name, c.data_type))
        .collect()
}

#[tokio::test]
async fn attempts_keep_no_card_number_expiry_or_cvv() {
    let db = TestDatabase::create().await.unwrap();
    let names: Vec<String> = columns(&db, "payment_attempts")
        .await
        .into_iter()
        .map(|c| c.0)
        .collect();
    assert_eq!(
        names,
        [
            "id",
            "seq",
            "session_id",
            "card_brand",
            "card_last4",
            "processor_reference",
            "challenge_url",
            "state",
            "svc_code",
            "created_at",
            "updated_at",
            "payment_method",
            "return_url",
            "checks",
            "next_check_at",
            "capture_method"
        ]
    );
}

#[tokio::test]
async fn money_is_numeric_and_ids_are_uuids() {
    let db = TestDatabase::create().await.unwrap();
    for (table, column, expected) in [
        ("payment_sessions", "amount", "numeric"),
        ("session_items", "amount", "numeric"),
        ("session_charges", "amount", "numeric"),
        ("payment_sessions", "id", "uuid"),
        ("payment_attempts", "id", "uuid"),
        ("payment_sessions", "state", "smallint"),
        ("payment_sessions", "expires_at", "timestamp with time zone"),
        ("oauth_clients", "roles", "ARRAY"),
    ] {
        let cols = columns(&db, table).await;
        let found = cols.iter().find(|c| c.0 == column).map(|c| c.1.as_str());
        assert_eq!(found, Some(expected), "{table}.{column}");
    }
}

fn migrations_embedded() -> usize {
    use diesel::migration::MigrationSource;
    MigrationSource::<diesel::pg::Pg>::migrations(&checkout_postgres::MIGRATIONS)
        .unwrap()
        .len()
}

#[tokio::test]
async fn migrations_run_again_change_nothing() {
    let (db, store) = database().await;
    run_migrations(db.url()).await.unwrap();
    assert!(store
        .get_terminal(&terminal("T-1"))
        .await
        .unwrap()
        .is_some());
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM __diesel_schema_migrations").await,
        migrations_embedded() as i64
    );
}

#[tokio::test]
async fn the_template_is_named_after_the_migrations() {
    assert!(template_name().ends_with(MIGRATIONS_FINGERPRINT));
    assert_eq!(MIGRATIONS_FINGERPRINT.len(), 16);
}

#[derive(diesel::QueryableByName)]
struct Flag {
    #[diesel(sql_type = Bool)]
    flag: bool,
}

async fn database_exists(admin_url: &str, name: &str) -> bool {
    let mut conn = AsyncPgConnection::establish(admin_url).await.unwrap();
    let row: Flag =
        diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS flag")
            .bind::<Text, _>(name)
            .get_result(&mut conn)
            .await
            .unwrap();
    row.flag
}

#[tokio::test]
async fn each_test_database_is_separate_and_dropped_with_its_handle() {
    let one = TestDatabase::create().await.unwrap();
    let two = TestDatabase::create().await.unwrap();
    assert_ne!(one.name(), two.name());
    one.store()
        .create_terminal(&Terminal {
            number: terminal("ONLY-IN-ONE"),
            display_name: "x".to_owned(),
            active: true,
            callback_hosts: None,
            max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
            capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
        })
        .await
        .unwrap();
    assert!(two
        .store()
        .get_terminal(&terminal("ONLY-IN-ONE"))
        .await
        .unwrap()
        .is_none());

    let admin = with_database(two.url(), "postgres").unwrap();
    let name = one.name().to_owned();
    assert!(database_exists(&admin, &name).await);
    drop(one);
    assert!(!database_exists(&admin, &name).await);
}
