//! The connection pool: diesel-async connections in a deadpool pool, with a connect timeout
//! and a checkout (wait) timeout. Asynchronous so that no query holds an actix worker thread
//! (`docs/decisions/0002-async-database-access.md`).

use std::time::Duration;

use anyhow::Context;

use crate::availability::classified;
use diesel::ConnectionError;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
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
}

impl PoolSettings {
    /// `max_size` connections (at least 1), a 10 s connect timeout and a 5 s checkout timeout.
    pub fn new(max_size: usize) -> PoolSettings {
        PoolSettings {
            max_size: max_size.max(1),
            connect_timeout: Duration::from_secs(10),
            checkout_timeout: Duration::from_secs(5),
        }
    }
}

/// Builds the pool; it opens connections on demand.
///
/// Recycling is `Fast`: a returned connection is reused unless its transaction state is
/// broken or its socket closed, without a `SELECT 1` round trip per checkout.
pub(crate) fn build(
    database_url: &str,
    settings: PoolSettings,
) -> anyhow::Result<Pool<AsyncPgConnection>> {
    let connect_timeout = settings.connect_timeout;
    let mut config = ManagerConfig::<AsyncPgConnection>::default();
    config.recycling_method = RecyclingMethod::Fast;
    config.custom_setup = Box::new(move |url| {
        Box::pin(async move {
            match tokio::time::timeout(connect_timeout, crate::tls::establish(url)).await {
                Ok(connection) => connection,
                Err(_) => Err(ConnectionError::BadConnection(format!(
                    "timed out after {} ms connecting to the database",
                    connect_timeout.as_millis()
                ))),
            }
        })
    });
    let manager = AsyncDieselConnectionManager::new_with_config(database_url, config);
    Pool::builder(manager)
        .max_size(settings.max_size)
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
