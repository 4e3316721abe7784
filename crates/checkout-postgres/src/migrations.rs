//! The migrations of the top-level `migrations/` folder, embedded in the binary.

use anyhow::{anyhow, Context};
use diesel::sql_types::BigInt;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::AsyncPgConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

/// The embedded migrations.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

/// A fingerprint of the migrations' names and contents (computed by the build script):
/// it changes whenever a migration does.
pub const MIGRATIONS_FINGERPRINT: &str = env!("CHECKOUT_MIGRATIONS_FINGERPRINT");

/// The advisory lock that serialises concurrent migration runs on one server.
const MIGRATION_LOCK: i64 = 0x6863_6d69_6772_6174;

/// Applies the pending migrations to the database at `database_url` (none when it is up to
/// date).
///
/// Runs diesel_migrations' synchronous harness over diesel-async's `AsyncConnectionWrapper`
/// inside `spawn_blocking`, so it never blocks an async worker. Concurrent runs against one
/// server (several service instances starting at once) take turns on an advisory lock.
pub async fn run_migrations(database_url: &str) -> anyhow::Result<()> {
    // Connected here, in async code, so that a URL naming a CA gets verified TLS.
    let conn = crate::tls::establish(database_url)
        .await
        .context("connecting to apply migrations")?;
    tokio::task::spawn_blocking(move || run_blocking(AsyncConnectionWrapper::from(conn)))
        .await
        .context("the migration task failed")?
}

fn run_blocking(mut conn: AsyncConnectionWrapper<AsyncPgConnection>) -> anyhow::Result<()> {
    use diesel::RunQueryDsl;

    diesel::sql_query("SELECT pg_advisory_lock($1)")
        .bind::<BigInt, _>(MIGRATION_LOCK)
        .execute(&mut conn)
        .context("taking the migration lock")?;
    let applied = conn
        .run_pending_migrations(MIGRATIONS)
        .map(|versions| versions.len())
        .map_err(|e| anyhow!("applying migrations: {e}"));
    // Closing the connection releases the lock too; unlock explicitly all the same.
    let _ = diesel::sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<BigInt, _>(MIGRATION_LOCK)
        .execute(&mut conn);
    let applied = applied?;
    if applied > 0 {
        tracing::info!(applied, "database migrations applied");
    }
    Ok(())
}
