//! The readiness check of `GET /health/ready`: the database answers and is migrated.

use std::time::Duration;

use async_trait::async_trait;
use checkout_http::health::ReadinessCheck;
use checkout_postgres::PgStore;

/// How long the readiness check may take before it answers "not ready".
const READY_WITHIN: Duration = Duration::from_secs(2);

/// Ready when a connection to a writable primary can be had and every migration is applied.
pub struct DatabaseReadiness {
    store: PgStore,
}

impl DatabaseReadiness {
    /// Checks `store`'s database.
    pub fn new(store: PgStore) -> DatabaseReadiness {
        DatabaseReadiness { store }
    }
}

#[async_trait]
impl ReadinessCheck for DatabaseReadiness {
    async fn check(&self) -> anyhow::Result<()> {
        self.store.check_ready(READY_WITHIN).await
    }
}
