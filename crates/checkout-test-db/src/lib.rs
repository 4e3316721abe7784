//! The test-database harness: one PostgreSQL server per test run, one migrated
//! template database, and a fresh database per test cloned from it.
//!
//! Which server: the one at `CHECKOUT_TEST_DATABASE_URL` (or, when that is unset,
//! `DATABASE_URL`) when set (an admin URL: a role that may create databases), else a private cluster in `CHECKOUT_TEST_CLUSTER_DIR`, by default
//! `/tmp/hc-pg-<uid>`. The first test process that finds no server there starts one (under a
//! lock, so concurrent processes start one between them) and leaves it running; later test
//! processes, and later runs, reuse it. Stop it with `pg_ctl stop -D /tmp/hc-pg-<uid>/data`
//! (as root: `runuser -u postgres -- pg_ctl stop -D ...`); the next run starts it again.
//!
//! The template is named after the migrations' fingerprint, so a changed migration gets a new
//! template and a stale one is never reused. Each [`TestDatabase`] is a
//! `CREATE DATABASE ... TEMPLATE ... STRATEGY FILE_COPY` copy, dropped when the handle is.
//! The times taken are printed to stderr (`checkout-test-db: ...`).

use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use anyhow::{bail, Context};
use diesel::sql_types::{BigInt, Bool, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use checkout_pg_cluster::{effective_uid, LocalCluster};
use checkout_postgres::{run_migrations, PgStore, MIGRATIONS_FINGERPRINT};

/// The environment variable naming an existing server to test against (an admin URL).
pub const DATABASE_URL_ENV: &str = "CHECKOUT_TEST_DATABASE_URL";

/// The general server variable, used by the tests when [`DATABASE_URL_ENV`] is unset.
pub const FALLBACK_DATABASE_URL_ENV: &str = "DATABASE_URL";

/// The environment variable naming the folder of the shared test cluster.
pub const CLUSTER_DIR_ENV: &str = "CHECKOUT_TEST_CLUSTER_DIR";

/// How many connections the store of a [`TestDatabase`] may open.
pub const TEST_POOL_SIZE: usize = 10;

/// The advisory lock that serialises template creation on one server.
const TEMPLATE_LOCK: i64 = 0x6863_746d_706c_6174;

/// The folder of the shared test cluster: `CHECKOUT_TEST_CLUSTER_DIR`, else
/// `/tmp/hc-pg-<uid>` (short, for the socket path limit).
pub fn cluster_dir() -> anyhow::Result<PathBuf> {
    match std::env::var_os(CLUSTER_DIR_ENV) {
        Some(dir) if !dir.is_empty() => std::path::absolute(PathBuf::from(dir))
            .with_context(|| format!("resolving {CLUSTER_DIR_ENV}")),
        _ => Ok(PathBuf::from(format!("/tmp/hc-pg-{}", effective_uid()?))),
    }
}

/// The name of the template database for the current migrations.
pub fn template_name() -> String {
    format!("hc_tmpl_{MIGRATIONS_FINGERPRINT}")
}

/// `url` with its database replaced by `database`. Accepts `postgres://` and
/// `postgresql://` URLs, with or without a host (`postgres://u@/db?host=/socket/dir`).
pub fn with_database(url: &str, database: &str) -> anyhow::Result<String> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let Some((scheme, rest)) = base.split_once("://") else {
        bail!("the database URL must look like postgres://user@host/database");
    };
    if scheme != "postgres" && scheme != "postgresql" {
        bail!("the database URL must start with postgres:// or postgresql://");
    }
    let authority = rest
        .split_once('/')
        .map_or(rest, |(authority, _)| authority);
    let mut out = format!("{scheme}://{authority}/{database}");
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    Ok(out)
}

/// A fresh, migrated database of its own for one test; dropped (best effort) with the handle.
pub struct TestDatabase {
    name: String,
    url: String,
    admin_url: String,
    store: PgStore,
}

impl std::fmt::Debug for TestDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestDatabase")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(QueryableByName)]
struct Flag {
    #[diesel(sql_type = Bool)]
    flag: bool,
}

fn unique_name() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!(
        "t_{}_{}_{:08x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        hasher.finish() as u32
    )
}

/// Where the test server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    /// Named by `CHECKOUT_TEST_DATABASE_URL` or `DATABASE_URL`: maybe shared with other machines.
    External,
    /// The shared cluster of this machine.
    Local,
}

/// An admin connection to the test server, starting the shared cluster when needed.
async fn admin_connection() -> anyhow::Result<(String, AsyncPgConnection, Server)> {
    let named = [DATABASE_URL_ENV, FALLBACK_DATABASE_URL_ENV]
        .into_iter()
        .find_map(|var| {
            std::env::var(var)
                .ok()
                .filter(|u| !u.is_empty())
                .map(|u| (var, u))
        });
    if let Some((var, url)) = named {
        let conn = AsyncPgConnection::establish(&url)
            .await
            .with_context(|| format!("connecting to the server named by {var}"))?;
        return Ok((url, conn, Server::External));
    }
    let dir = cluster_dir()?;
    let started = Instant::now();
    if dir
        .join(format!(".s.PGSQL.{}", checkout_pg_cluster::PORT))
        .exists()
    {
        let url = checkout_pg_cluster::socket_url(
            &dir,
            checkout_pg_cluster::PORT,
            checkout_pg_cluster::DEFAULT_DATABASE,
        );
        if let Ok(conn) = AsyncPgConnection::establish(&url).await {
            eprintln!(
                "checkout-test-db: cluster in {} is running ({:.3} s to reach it)",
                dir.display(),
                started.elapsed().as_secs_f64()
            );
            return Ok((url, conn, Server::Local));
        }
    }
    let cluster = tokio::task::spawn_blocking(move || LocalCluster::shared(dir))
        .await
        .context("the cluster start task failed")?
        .context("starting the shared test cluster")?;
    eprintln!(
        "checkout-test-db: cluster in {} {} in {:.3} s",
        cluster.socket_dir().display(),
        if cluster.was_started() {
            "started"
        } else {
            "found running"
        },
        started.elapsed().as_secs_f64()
    );
    let url = cluster.url();
    let conn = AsyncPgConnection::establish(&url)
        .await
        .context("connecting to the shared test cluster")?;
    Ok((url, conn, Server::Local))
}

async fn database_exists(conn: &mut AsyncPgConnection, name: &str) -> anyhow::Result<bool> {
    let row: Flag =
        diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS flag")
            .bind::<Text, _>(name)
            .get_result(conn)
            .await
            .context("looking up a database")?;
    Ok(row.flag)
}

/// Makes the migrated template if it is missing: built under a temporary name and renamed,
/// so that a crash half-way never leaves a half-migrated template behind.
async fn ensure_template(conn: &mut AsyncPgConnection, admin_url: &str) -> anyhow::Result<String> {
    let template = template_name();
    if database_exists(conn, &template).await? {
        return Ok(template);
    }
    let started = Instant::now();
    diesel::sql_query("SELECT pg_advisory_lock($1)")
        .bind::<BigInt, _>(TEMPLATE_LOCK)
        .execute(conn)
        .await
        .context("taking the template lock")?;
    let built = build_template(conn, admin_url, &template).await;
    let _ = diesel::sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<BigInt, _>(TEMPLATE_LOCK)
        .execute(conn)
        .await;
    if built? {
        eprintln!(
            "checkout-test-db: template {template} migrated in {:.3} s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(template)
}

/// Builds the template unless another process did while we waited; true when this one did.
async fn build_template(
    conn: &mut AsyncPgConnection,
    admin_url: &str,
    template: &str,
) -> anyhow::Result<bool> {
    if database_exists(conn, template).await? {
        return Ok(false);
    }
    let building = format!("{template}_build");
    for statement in [
        format!("DROP DATABASE IF EXISTS \"{building}\""),
        format!("CREATE DATABASE \"{building}\""),
    ] {
        diesel::sql_query(statement)
            .execute(conn)
            .await
            .context("creating the template database")?;
    }
    run_migrations(&with_database(admin_url, &building)?)
        .await
        .context("migrating the template database")?;
    for statement in [
        format!("ALTER DATABASE \"{building}\" RENAME TO \"{template}\""),
        format!("ALTER DATABASE \"{template}\" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"),
    ] {
        diesel::sql_query(statement)
            .execute(conn)
            .await
            .context("finishing the template database")?;
    }
    Ok(true)
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    datname: String,
}

/// Drops, once per process, the test databases of processes that no longer run (killed
/// before their handles dropped them). Their names carry the process id: `t_<pid>_...`.
async fn drop_leftovers(conn: &mut AsyncPgConnection) {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if DONE.swap(true, Ordering::Relaxed) || !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let Ok(names) = diesel::sql_query(
        "SELECT datname::text AS datname FROM pg_database WHERE datname LIKE 't\\_%'",
    )
    .load::<Name>(conn)
    .await
    else {
        return;
    };
    for Name { datname } in names {
        let pid = datname
            .split('_')
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        let Some(pid) = pid else { continue };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let dropped = diesel::sql_query(format!(
            "DROP DATABASE IF EXISTS \"{datname}\" WITH (FORCE)"
        ))
        .execute(conn)
        .await;
        if dropped.is_ok() {
            eprintln!("checkout-test-db: dropped {datname}, left by a dead process");
        }
    }
}

impl TestDatabase {
    /// Creates a fresh database from the migrated template, starting the shared cluster or
    /// making the template first when needed, and connects a [`PgStore`] to it.
    pub async fn create() -> anyhow::Result<TestDatabase> {
        let started = Instant::now();
        let (admin_url, mut conn, server) = admin_connection().await?;
        let template = ensure_template(&mut conn, &admin_url).await?;
        if server == Server::Local {
            drop_leftovers(&mut conn).await;
        }
        let name = unique_name();
        let file_copy =
            format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\" STRATEGY FILE_COPY");
        if let Err(e) = diesel::sql_query(file_copy).execute(&mut conn).await {
            // Servers before PostgreSQL 15 have no STRATEGY option.
            if !e.to_string().to_lowercase().contains("strategy") {
                return Err(e).context("creating the test database");
            }
            diesel::sql_query(format!(
                "CREATE DATABASE \"{name}\" TEMPLATE \"{template}\""
            ))
            .execute(&mut conn)
            .await
            .context("creating the test database")?;
        }
        drop(conn);
        let url = with_database(&admin_url, &name)?;
        let store = PgStore::connect(&url, TEST_POOL_SIZE).await?;
        eprintln!(
            "checkout-test-db: database {name} ready in {:.3} s",
            started.elapsed().as_secs_f64()
        );
        Ok(TestDatabase {
            name,
            url,
            admin_url,
            store,
        })
    }

    /// The URL of this test's database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A store on this test's database (clones share one pool).
    pub fn store(&self) -> PgStore {
        self.store.clone()
    }
}

/// Drops a test database from a thread of its own (a drop may happen inside an async
/// runtime, where blocking on another runtime is not allowed).
fn drop_database(admin_url: &str, name: &str) -> anyhow::Result<()> {
    use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
    let mut conn: AsyncConnectionWrapper<AsyncPgConnection> =
        diesel::Connection::establish(admin_url)?;
    diesel::RunQueryDsl::execute(
        diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")),
        &mut conn,
    )?;
    Ok(())
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        let dropped = std::thread::spawn(move || drop_database(&admin_url, &name)).join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!(
                "checkout-test-db: could not drop database {}: {e:#}",
                self.name
            ),
            Err(_) => eprintln!("checkout-test-db: dropping database {} panicked", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_swapped_in_urls() {
        assert_eq!(
            with_database("postgres://postgres@/postgres?host=/tmp/x&port=5432", "t_1").unwrap(),
            "postgres://postgres@/t_1?host=/tmp/x&port=5432"
        );
        assert_eq!(
            with_database("postgresql://u:p@db.example:5433/admin", "t_2").unwrap(),
            "postgresql://u:p@db.example:5433/t_2"
        );
        assert_eq!(
            with_database("postgres://u@localhost", "t_3").unwrap(),
            "postgres://u@localhost/t_3"
        );
        assert!(with_database("host=/tmp dbname=x", "t").is_err());
    }

    #[test]
    fn test_database_names_differ() {
        assert_ne!(unique_name(), unique_name());
    }
}
