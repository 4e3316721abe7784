//! The connection pool: diesel-async connections in a deadpool pool, with a connect timeout
//! and a checkout (wait) timeout. Asynchronous so that no query holds an actix worker thread
//! (`docs/decisions/0002-async-database-access.md`). Every connection it opens applies the
//! service's own bounds whatever the URL says (TCP user timeout, keepalives, statement and
//! idle-in-transaction timeouts) and is watched for stalls ([`crate::watchdog`];
//! `docs/decisions/0018-shutdown-and-database-timeouts.md`).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::availability::classified;
use crate::watchdog::Watchdog;
use diesel::ConnectionError;
use diesel_async::pooled_connection::deadpool::{Hook, Object, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::AsyncPgConnection;

/// A pooled connection.
pub(crate) type PooledConnection = Object<AsyncPgConnection>;

/// How big the pool is and how long it waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// The most connections open at once.
    pub max_size: usize,
    /// How long opening one connection may take.
    pub connect_timeout: Duration,
    /// How long a caller may wait for a free connection before getting an error.
    pub checkout_timeout: Duration,
    /// `tcp_user_timeout`: how long sent data may stay unacknowledged before the kernel
    /// closes the socket (a Duration: tokio-postgres's URL parameter is in seconds, libpq's
    /// in milliseconds, so the service never takes it from the URL).
    pub tcp_user_timeout: Duration,
    /// TCP keepalives: idle time before the first probe.
    pub keepalives_idle: Duration,
    /// TCP keepalives: time between probes.
    pub keepalives_interval: Duration,
    /// TCP keepalives: probes unanswered before the socket is closed.
    pub keepalives_retries: u32,
    /// The server-side `statement_timeout` of every pooled session.
    pub statement_timeout: Duration,
    /// The server-side `idle_in_transaction_session_timeout` of every pooled session.
    pub idle_in_transaction_timeout: Duration,
    /// How long a statement may go without any answer before the stall watchdog closes its
    /// connection. MUST be longer than `statement_timeout` (a live server answers first).
    pub answer_timeout: Duration,
}

impl PoolSettings {
    /// `max_size` connections (at least 1), a 5 s connect timeout, a 5 s checkout timeout,
    /// a 5 s TCP user timeout, keepalives after 5 s idle every 2 s (3 probes), a 5 s
    /// statement timeout, a 10 s idle-in-transaction timeout and a 7 s answer bound
    /// (`docs/decisions/0018-shutdown-and-database-timeouts.md` says why).
    pub fn new(max_size: usize) -> PoolSettings {
        PoolSettings {
            max_size: max_size.max(1),
            connect_timeout: Duration::from_secs(5),
            checkout_timeout: Duration::from_secs(5),
            tcp_user_timeout: Duration::from_secs(5),
            keepalives_idle: Duration::from_secs(5),
            keepalives_interval: Duration::from_secs(2),
            keepalives_retries: 3,
            statement_timeout: Duration::from_secs(5),
            idle_in_transaction_timeout: Duration::from_secs(10),
            answer_timeout: Duration::from_secs(7),
        }
    }

    /// `tokio_postgres` configuration for a pooled connection: `config` with these bounds
    /// applied over whatever the URL said.
    pub(crate) fn apply(&self, config: &mut tokio_postgres::Config) {
        let options = format!(
            "{} -c statement_timeout={} -c idle_in_transaction_session_timeout={}",
            config.get_options().unwrap_or(""),
            self.statement_timeout.as_millis(),
            self.idle_in_transaction_timeout.as_millis()
        );
        config
            .connect_timeout(self.connect_timeout)
            .tcp_user_timeout(self.tcp_user_timeout)
            .keepalives(true)
            .keepalives_idle(self.keepalives_idle)
            .keepalives_interval(self.keepalives_interval)
            .keepalives_retries(self.keepalives_retries)
            .options(options.trim_start());
    }
}

/// Builds the pool; it opens connections on demand.
///
/// Recycling is `Fast`: a returned connection is reused unless its transaction state is
/// broken or its socket closed, without a `SELECT 1` round trip per checkout.
pub(crate) fn build(
    database_url: &str,
    settings: PoolSettings,
    watchdog: Arc<Watchdog>,
) -> anyhow::Result<Pool<AsyncPgConnection>> {
    let connect_timeout = settings.connect_timeout;
    let mut config = ManagerConfig::<AsyncPgConnection>::default();
    config.recycling_method = RecyclingMethod::Fast;
    config.custom_setup = Box::new(move |url| {
        let watchdog = watchdog.clone();
        Box::pin(async move {
            let establish = crate::tls::establish_pooled(url, &settings, &watchdog);
            let connection = match tokio::time::timeout(connect_timeout, establish).await {
                Ok(connection) => connection,
                Err(_) => Err(ConnectionError::BadConnection(format!(
                    "timed out after {} ms connecting to the database",
                    connect_timeout.as_millis()
                ))),
            };
            if connection.is_err() {
                // Opened by hand (the watchdog drives it), so diesel reports no event of it.
                crate::statement_metrics::count_failed_connection();
            }
            connection
        })
    });
    let manager = AsyncDieselConnectionManager::new_with_config(database_url, config);
    Pool::builder(manager)
        .max_size(settings.max_size)
        // A connection lent again starts with nothing pending (`watchdog::reset`).
        .pre_recycle(Hook::sync_fn(|conn, _| {
            crate::watchdog::reset(conn);
            Ok(())
        }))
        .build()
        .context("building the database pool")
}

/// No connection could be had from the pool: none could be opened (the database is down,
/// or no host of a multi-host URL is a writable primary yet) or none came free in time.
#[derive(Debug, thiserror::Error)]
#[error("no database connection: {0}")]
pub(crate) struct NoConnection(pub(crate) String);

/// Takes a connection from `pool`, waiting at most `timeout`.
pub(crate) async fn checkout(
    pool: &Pool<AsyncPgConnection>,
    timeout: Duration,
) -> anyhow::Result<PooledConnection> {
    match tokio::time::timeout(timeout, pool.get()).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(e)) => Err(classified(NoConnection(e.to_string()).into())),
        Err(_) => Err(classified(
            NoConnection(format!(
                "timed out after {} ms waiting for one (pool of {})",
                timeout.as_millis(),
                pool.status().max_size
            ))
            .into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_services_bounds_replace_whatever_the_url_says() {
        // A libpq-style millisecond value, which tokio-postgres would read as 83 minutes,
        // keepalives off, and options of the URL's own.
        let mut config: tokio_postgres::Config =
            "postgres://u@h/db?tcp_user_timeout=5000&keepalives=0&connect_timeout=600&options=-c%20search_path%3Dx"
                .parse()
                .unwrap();
        PoolSettings::new(4).apply(&mut config);
        assert_eq!(config.get_tcp_user_timeout(), Some(&Duration::from_secs(5)));
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(5)));
        assert!(config.get_keepalives());
        assert_eq!(config.get_keepalives_idle(), Duration::from_secs(5));
        assert_eq!(
            config.get_keepalives_interval(),
            Some(Duration::from_secs(2))
        );
        assert_eq!(config.get_keepalives_retries(), Some(3));
        assert_eq!(
            config.get_options(),
            Some(
                "-c search_path=x -c statement_timeout=5000 \
                 -c idle_in_transaction_session_timeout=10000"
            )
        );
    }
}
