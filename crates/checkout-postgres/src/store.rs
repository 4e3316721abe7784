//! [`PgStore`]: the one handle on the database that every repository port is implemented on.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::AsyncPgConnection;

use crate::attempt_combining::{AttemptBegins, AttemptRecords};
use crate::combining::{runners_for, Combiner};
use crate::pool::{self, PoolSettings, PooledConnection};
use crate::read_combining::{SessionReads, TerminalReads, WholeSessionReads};
use crate::terminal_cache::TerminalsSeen;
use crate::write_combining::SessionWrites;

/// PostgreSQL storage of sessions, attempts, terminals and OAuth clients, over a pool of
/// diesel-async connections. Cheap to clone: clones share the pool.
///
/// It implements the domain ports `SessionRepository`, `TerminalDirectory`, `ClientStore`
/// and `IdempotencyStore`, and has the operator methods for terminals and clients.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool<AsyncPgConnection>,
    checkout_timeout: Duration,
    writes: Combiner<SessionWrites>,
    reads: Combiner<SessionReads>,
    whole_reads: Combiner<WholeSessionReads>,
    terminal_reads: Combiner<TerminalReads>,
    attempt_begins: Combiner<AttemptBegins>,
    attempt_records: Combiner<AttemptRecords>,
    /// The active terminals this store read, for the creates (`recent_terminal`).
    terminals_seen: TerminalsSeen,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.inner.pool.status();
        f.debug_struct("PgStore")
            .field("max_size", &status.max_size)
            .field("open", &status.size)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Builds the pool for `database_url` with at most `max_size` connections and the default
    /// timeouts of [`PoolSettings::new`], and checks that one connection opens. It does not
    /// apply migrations: call [`run_migrations`](crate::run_migrations) first.
    pub async fn connect(database_url: &str, max_size: usize) -> anyhow::Result<PgStore> {
        Self::connect_with(database_url, PoolSettings::new(max_size)).await
    }

    /// Like [`PgStore::connect`], with explicit pool settings.
    pub async fn connect_with(
        database_url: &str,
        settings: PoolSettings,
    ) -> anyhow::Result<PgStore> {
        let store = PgStore {
            inner: Arc::new(Inner {
                pool: pool::build(database_url, settings)?,
                checkout_timeout: settings.checkout_timeout,
                writes: Combiner::new(runners_for(settings.max_size)),
                reads: Combiner::new(runners_for(settings.max_size)),
                whole_reads: Combiner::new(runners_for(settings.max_size)),
                terminal_reads: Combiner::new(runners_for(settings.max_size)),
                attempt_begins: Combiner::new(runners_for(settings.max_size)),
                attempt_records: Combiner::new(runners_for(settings.max_size)),
                terminals_seen: TerminalsSeen::default(),
            }),
        };
        drop(store.conn().await?);
        tracing::debug!(max_size = settings.max_size, "database pool ready");
        Ok(store)
    }

    /// The active terminals this store read.
    pub(crate) fn terminals_seen(&self) -> &TerminalsSeen {
        &self.inner.terminals_seen
    }

    /// The pool itself.
    pub(crate) fn pool(&self) -> &Pool<AsyncPgConnection> {
        &self.inner.pool
    }

    /// The write combining of session creates.
    pub(crate) fn writes(&self) -> &Combiner<SessionWrites> {
        &self.inner.writes
    }

    /// The read combining of session reads without their lines.
    pub(crate) fn reads(&self) -> &Combiner<SessionReads> {
        &self.inner.reads
    }

    /// The read combining of whole session reads.
    pub(crate) fn whole_reads(&self) -> &Combiner<WholeSessionReads> {
        &self.inner.whole_reads
    }

    /// The read combining of terminal reads.
    pub(crate) fn terminal_reads(&self) -> &Combiner<TerminalReads> {
        &self.inner.terminal_reads
    }

    /// The write combining of attempts begun.
    pub(crate) fn attempt_begins(&self) -> &Combiner<AttemptBegins> {
        &self.inner.attempt_begins
    }

    /// The write combining of answers recorded.
    pub(crate) fn attempt_records(&self) -> &Combiner<AttemptRecords> {
        &self.inner.attempt_records
    }

    /// A connection from the pool, or an error after the checkout timeout.
    pub(crate) async fn conn(&self) -> anyhow::Result<PooledConnection> {
        pool::checkout(&self.inner.pool, self.inner.checkout_timeout).await
    }
}

/// True when `e` violates the unique constraint or index `name`.
pub(crate) fn is_unique_violation(e: &DieselError, name: &str) -> bool {
    matches!(e, DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info)
        if info.constraint_name() == Some(name))
}

/// True when `e` violates a foreign key.
pub(crate) fn is_foreign_key_violation(e: &DieselError) -> bool {
    matches!(
        e,
        DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _)
    )
}
