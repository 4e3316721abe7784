//! Which database to use: `DATABASE_URL`, or in sandbox mode a private PostgreSQL cluster
//! under the data folder, made with the system's PostgreSQL binaries and kept between runs.

use anyhow::Context;
use checkout_pg_cluster::LocalCluster;
use secrecy::ExposeSecret;

use crate::settings::{Environment, Settings};

/// The database URL, and the cluster handle when this process started one. With
/// `database.ca_file`, the URL asks for verified TLS (`sslmode=verify-full`) with that CA.
pub async fn resolve(settings: &Settings) -> anyhow::Result<(String, Option<LocalCluster>)> {
    if let Some(url) = &settings.database.url {
        let url = url.expose_secret();
        let url = match &settings.database.ca_file {
            Some(ca_file) => checkout_postgres::with_ca_file(url, ca_file),
            None => url.to_owned(),
        };
        return Ok((url, None));
    }
    if settings.environment != Environment::Sandbox {
        anyhow::bail!("no database configured: set DATABASE_URL");
    }
    let dir = settings.data_dir.join("postgres");
    let cluster = tokio::task::spawn_blocking(move || LocalCluster::persistent(&dir))
        .await
        .context("starting the sandbox database")??;
    let url = cluster.url();
    tracing::info!("sandbox database ready");
    Ok((url, Some(cluster)))
}
