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
use crate::watchdog::Watchdog;
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
    /// What each pooled connection waits for; closes those that stall.
    watchdog: Arc<Watchdog>,
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
        let watchdog = Arc::new(Watchdog::default());
        let store = PgStore {
            inner: Arc::new(Inner {
                pool: pool::build(database_url, settings, watchdog.clone())?,
                checkout_timeout: settings.checkout_timeout,
                watchdog,
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
        tokio::spawn(watch_for_stalls(
            Arc::downgrade(&store.inner),
            settings.answer_timeout,
        ));
        tracing::debug!(max_size = settings.max_size, "database pool ready");
        Ok(store)
    }

    /// The stall watchdog of the pool's connections.
    pub(crate) fn watchdog(&self) -> &Watchdog {
        &self.inner.watchdog
    }

    /// Pooled connections closed because a statement had no answer within the bound, since
    /// the start (a counter for the metrics).
    pub fn stalled_connections_closed(&self) -> u64 {
        self.inner.watchdog.closed()
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

/// Every quarter of a second, while the store lives: closes the connections with a statement
/// unanswered for longer than `bound`, and when it closed any, drops the idle ones too (they
/// ran over the same path, and would each cost a request the bound again); new connections
/// replace them on demand.
async fn watch_for_stalls(store: std::sync::Weak<Inner>, bound: Duration) {
    let mut ticker = tokio::time::interval(Duration::from_millis(250));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(inner) = store.upgrade() else { return };
        if inner.watchdog.sweep(bound) > 0 {
            inner.pool.retain(|_, _| false);
        }
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
