//! What an operator and the HTTP edge need to know about the database: whether it is ready
//! (it answers and every embedded migration is applied), how busy the pool is, and whether an
//! error means "the database cannot be reached right now" rather than a bug.

use std::collections::HashSet;
use std::time::Duration;

use diesel::migration::MigrationSource;
use diesel::pg::Pg;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use checkout_domain::Unreachable;

use crate::pool::NoConnection;
use crate::{PgStore, MIGRATIONS};

/// How busy the connection pool is, right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    /// The most connections the pool opens.
    pub max_size: usize,
    /// Connections open (idle or lent out).
    pub open: usize,
    /// Connections lent out to a caller.
    pub in_use: usize,
    /// Callers waiting for a connection.
    pub waiting: usize,
}

#[derive(QueryableByName)]
struct AppliedVersion {
    #[diesel(sql_type = Text)]
    version: String,
}

impl PgStore {
    /// How busy the pool is.
    pub fn pool_status(&self) -> PoolStatus {
        let status = self.pool().status();
        PoolStatus {
            max_size: status.max_size,
            open: status.size,
            in_use: status.size.saturating_sub(status.available),
            waiting: status.waiting,
        }
    }

    /// `Ok` when a connection to a writable primary can be had from the pool within `within`
    /// (the path requests take), no pooled connection was closed as stalled within
    /// `stall_window` (so that a stalled instance stays out of the balancer until it has
    /// served again for that long), and
    /// every migration embedded in this binary is applied. One small query; changes nothing.
    pub async fn check_ready(
        &self,
        within: Duration,
        stall_window: Duration,
    ) -> anyhow::Result<()> {
        if self.watchdog().stalled_within(stall_window) {
            return Err(NoConnection(format!(
                "a database connection stalled within the last {} ms",
                stall_window.as_millis()
            ))
            .into());
        }
        let check = async {
            let mut conn = self.conn().await?;
            let applied: HashSet<String> =
                diesel::sql_query("SELECT version FROM __diesel_schema_migrations")
                    .load::<AppliedVersion>(&mut conn)
                    .await
                    .context("reading the applied migrations")?
                    .into_iter()
                    .map(|row| row.version)
                    .collect();
            let embedded = MigrationSource::<Pg>::migrations(&MIGRATIONS)
                .map_err(|e| anyhow::anyhow!("reading the embedded migrations: {e}"))?;
            let missing = embedded
                .iter()
                .filter(|m| !applied.contains(&m.name().version().to_string()))
                .count();
            anyhow::ensure!(missing == 0, "{missing} migrations are not applied");
            Ok(())
        };
        tokio::time::timeout(within, check)
            .await
            .unwrap_or_else(|_| {
                Err(NoConnection(format!(
                    "the readiness check took more than {} ms",
                    within.as_millis()
                ))
                .into())
            })
    }
}

/// `error`, marked [`Unreachable`] when it means the database cannot be reached right now
/// ([`is_unavailable`]), so that the use case's error is `CheckoutError::Unavailable` (a
/// 503) rather than a fault.
pub(crate) fn classified(error: anyhow::Error) -> anyhow::Error {
    if is_unavailable(&error) && !checkout_domain::is_unreachable(&error) {
        error.context(Unreachable(
            "the database cannot be reached right now".into(),
        ))
    } else {
        error
    }
}

/// The store's `context` and `with_context`: anyhow's, after [`classified`]. Every file of the
/// adapter imports this trait in place of `anyhow::Context`, so that each error leaving a
/// port method carries the mark when it should.
pub(crate) trait StoreContext<T> {
    /// Wraps the error with `context`, after classifying it.
    fn context<C>(self, context: C) -> anyhow::Result<T>
    where
        C: std::fmt::Display + Send + Sync + 'static;

    /// Wraps the error with the context `f` gives, after classifying it.
    fn with_context<C, F>(self, f: F) -> anyhow::Result<T>
    where
        C: std::fmt::Display + Send + Sync + 'static,
        F: FnOnce() -> C;
}

impl<T> StoreContext<T> for Option<T> {
    fn context<C>(self, context: C) -> anyhow::Result<T>
    where
        C: std::fmt::Display + Send + Sync + 'static,
    {
        anyhow::Context::context(self, context)
    }

    fn with_context<C, F>(self, f: F) -> anyhow::Result<T>
    where
        C: std::fmt::Display + Send + Sync + 'static,
        F: FnOnce() -> C,
    {
        anyhow::Context::with_context(self, f)
    }
}

impl<T, E: Into<anyhow::Error>> StoreContext<T> for Result<T, E> {
    fn context<C>(self, context: C) -> anyhow::Result<T>
    where
        C: std::fmt::Display + Send + Sync + 'static,
    {
        self.map_err(|e| classified(e.into()).context(context))
    }

    fn with_context<C, F>(self, f: F) -> anyhow::Result<T>
    where
        C: std::fmt::Display + Send + Sync + 'static,
        F: FnOnce() -> C,
    {
        self.map_err(|e| classified(e.into()).context(f()))
    }
}

/// True when `error` (an error of this crate's store) means the database cannot be reached
/// right now: no connection could be had, a connection broke or closed mid-request, the server
/// is shutting down or starting, or the session landed on a read-only standby (a failover in
/// progress). Such a request may be retried; anything else is a bug or a refused statement.
pub(crate) fn is_unavailable(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        if cause.is::<NoConnection>() {
            return true;
        }
        match cause.downcast_ref::<DieselError>() {
            Some(DieselError::DatabaseError(kind, info)) => match kind {
                DatabaseErrorKind::ClosedConnection
                | DatabaseErrorKind::UnableToSendCommand
                | DatabaseErrorKind::ReadOnlyTransaction => true,
                // 57P01..57P03 (admin or crash shutdown, cannot connect now) carry no kind of
                // their own in diesel; their messages are PostgreSQL's fixed texts.
                _ => {
                    let message = info.message();
                    message.starts_with("terminating connection")
                        || message.starts_with("the database system is")
                }
            },
            Some(DieselError::BrokenTransactionManager) => true,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use checkout_domain::CheckoutError;

    use super::*;

    #[test]
    fn a_lost_database_leaves_the_store_marked_and_a_bug_does_not() {
        let lost: Result<(), DieselError> = Err(DieselError::BrokenTransactionManager);
        let lost = lost.context("reading a session").unwrap_err();
        let lost = lost.context("the use case's own context");
        assert!(matches!(
            CheckoutError::from(lost),
            CheckoutError::Unavailable(_)
        ));

        let pool: anyhow::Error = NoConnection("timed out".into()).into();
        assert!(matches!(
            CheckoutError::from(classified(pool)),
            CheckoutError::Unavailable(_)
        ));

        let bug: Result<(), DieselError> = Err(DieselError::NotFound);
        let bug = bug.context("reading a session").unwrap_err();
        assert!(matches!(
            CheckoutError::from(bug),
            CheckoutError::Unknown(_)
        ));
    }
}
