//! Combined statements planned once per connection instead of once per execution.
//!
//! PostgreSQL plans a prepared statement again for each execution while such a custom plan
//! looks cheaper than the generic one, and for the combined statements it always does: the
//! generic plan takes an array parameter to hold 10 elements, a custom plan sees the few it
//! holds. Their plan never depends on the values (index lookups by key, one per element), so
//! planning them each time is pure cost: 0.16 to 0.38 ms for an attempt write and about
//! 0.1 ms for the four reads of whole sessions (`pg_stat_statements` with `track_planning`,
//! docs/performance.md). The attempt writes, the creates, the whole session reads and the
//! card post's session read with its terminal run this way; the status reads do not: their
//! statements carry many reads each, and setting and resetting the mode cost more than the
//! planning it saved.
//!
//! [`generically`] runs a statement with `plan_cache_mode = force_generic_plan` set just
//! before it and reset just after it, both pipelined with it in one round trip, so that no
//! other statement on the connection is planned generically (a query whose best plan depends
//! on its values, such as the events feed's optional cursor, keeps its custom plans).

use std::future::Future;

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// `SET plan_cache_mode = force_generic_plan`.
struct ForceGenericPlans;

/// `RESET plan_cache_mode`.
struct ResetPlanCacheMode;

impl QueryId for ForceGenericPlans {
    type QueryId = ForceGenericPlans;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Pg> for ForceGenericPlans {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("SET plan_cache_mode = force_generic_plan");
        Ok(())
    }
}

impl QueryId for ResetPlanCacheMode {
    type QueryId = ResetPlanCacheMode;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Pg> for ResetPlanCacheMode {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("RESET plan_cache_mode");
        Ok(())
    }
}

/// Runs `statement`, a statement on `conn` that has not been polled yet, with generic plans:
/// the setting, the statement and the reset are sent together and run in that order. A
/// statement not prepared yet on the connection is sent after its preparation, that is after
/// the reset, and planned as usual that once.
///
/// The statement's result is returned as it is, whatever became of the setting and the
/// reset: a statement that committed is never reported as failed (its callers would carry it
/// out again). A reset that failed is logged; the connection then plans generically until it
/// is closed.
pub(crate) async fn generically<'a, R>(
    conn: &'a AsyncPgConnection,
    statement: impl Future<Output = QueryResult<R>> + Send + 'a,
) -> QueryResult<R> {
    let set = async {
        let mut c = conn;
        ForceGenericPlans.execute(&mut c).await
    };
    let reset = async {
        let mut c = conn;
        ResetPlanCacheMode.execute(&mut c).await
    };
    // join! polls the three in order, and each sends its messages on its first poll.
    let (_, result, reset) = tokio::join!(set, statement, reset);
    if let Err(e) = reset {
        tracing::warn!(error = %e, "could not reset plan_cache_mode after a combined statement");
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use diesel::query_builder::Query;
    use diesel::sql_types::Text;
    use diesel_async::AsyncConnection;

    use super::*;

    /// `SELECT current_setting('plan_cache_mode')`, cached as a prepared statement.
    struct PlanMode;

    impl QueryId for PlanMode {
        type QueryId = PlanMode;
        const HAS_STATIC_QUERY_ID: bool = true;
    }

    impl Query for PlanMode {
        type SqlType = Text;
    }

    impl QueryFragment<Pg> for PlanMode {
        fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
            out.push_sql("SELECT current_setting('plan_cache_mode')");
            Ok(())
        }
    }

    async fn plan_mode(conn: &AsyncPgConnection) -> QueryResult<String> {
        let mut c = conn;
        PlanMode.get_result(&mut c).await
    }

    #[tokio::test]
    async fn only_the_statement_runs_with_generic_plans() {
        let db = checkout_test_db::TestDatabase::create().await.unwrap();
        let conn = AsyncPgConnection::establish(db.url()).await.unwrap();
        assert_eq!(plan_mode(&conn).await.unwrap(), "auto");
        // Prepared on the connection by now (and so are the setting and the reset, after
        // their first use): the three go out together, in order.
        generically(&conn, plan_mode(&conn)).await.unwrap();
        for _ in 0..3 {
            let inside = generically(&conn, plan_mode(&conn)).await.unwrap();
            assert_eq!(inside, "force_generic_plan");
            assert_eq!(plan_mode(&conn).await.unwrap(), "auto");
        }
    }

    #[tokio::test]
    async fn a_failed_statement_still_resets_the_mode() {
        let db = checkout_test_db::TestDatabase::create().await.unwrap();
        let conn = AsyncPgConnection::establish(db.url()).await.unwrap();
        generically(&conn, plan_mode(&conn)).await.unwrap();
        let failing = async {
            let mut c = &conn;
            diesel::sql_query("SELECT 1/0").execute(&mut c).await
        };
        assert!(generically(&conn, failing).await.is_err());
        assert_eq!(plan_mode(&conn).await.unwrap(), "auto");
    }
}
