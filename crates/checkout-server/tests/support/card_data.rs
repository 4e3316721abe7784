//! Searches everything the service keeps (every row of every table, and its log) for card
//! numbers, expiries and CVVs that a test typed into the pages.

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::TestServer;

#[derive(QueryableByName)]
struct Line {
    #[diesel(sql_type = Text)]
    line: String,
}

/// Every row of every table of the public schema, one text line per row.
pub async fn dump_database(database_url: &str) -> String {
    let mut conn = AsyncPgConnection::establish(database_url)
        .await
        .expect("connect");
    let tables: Vec<Line> = diesel::sql_query(
        "SELECT table_name::text AS line FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    )
    .load(&mut conn)
    .await
    .expect("list tables");
    let mut out = String::new();
    for table in tables {
        let rows: Vec<Line> =
            diesel::sql_query(format!("SELECT t::text AS line FROM \"{}\" t", table.line))
                .load(&mut conn)
                .await
                .expect("dump a table");
        for row in rows {
            out.push_str(&table.line);
            out.push_str(": ");
            out.push_str(&row.line);
            out.push('\n');
        }
    }
    out
}

/// Whether `needle` occurs in `haystack` as a token of its own (not inside a longer run of
/// letters or digits), so that a CVV such as `918` is not "found" inside a timestamp.
pub fn contains_token(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(at, _)| {
        let before = haystack[..at].chars().next_back();
        let after = haystack[at + needle.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// Asserts that no secret of `secrets` (card numbers, with and without spaces; expiries;
/// CVVs) appears in the server's database or log. Returns how many bytes were searched.
pub async fn assert_absent(server: &TestServer, secrets: &[&str]) -> usize {
    let database = dump_database(server.database_url()).await;
    let log = server.log();
    assert!(
        database.contains("payment_attempts"),
        "the dump holds the attempts table (the flows ran): {database}"
    );
    for secret in secrets {
        let mut forms = vec![(*secret).to_owned()];
        if secret.contains('/') {
            forms.push(secret.replace('/', "%2F"));
        }
        for form in forms {
            assert!(
                !contains_token(&database, &form),
                "{form} is stored in the database"
            );
            assert!(!contains_token(&log, &form), "{form} is in the server log");
        }
    }
    database.len() + log.len()
}
