//! The readiness check of `GET /health/ready`: the service is not shutting down, and the
//! database answers through the pool requests use, has not stalled lately, and is migrated.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use checkout_http::health::ReadinessCheck;
use checkout_postgres::PgStore;

/// How long the readiness check may take before it answers "not ready".
const READY_WITHIN: Duration = Duration::from_secs(2);

/// How long after a pooled connection was closed as stalled the instance stays not ready.
const STALL_WINDOW: Duration = Duration::from_secs(3);

/// Set once a stop signal came: readiness answers 503 from then on, and the answers ask
/// their connections to close (`Connection: close`).
#[derive(Debug, Clone, Default)]
pub struct Draining(Arc<AtomicBool>);

impl Draining {
    /// Marks the service as shutting down.
    pub fn start(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the service is shutting down.
    pub fn is_draining(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Ready when the service is not shutting down, a connection to a writable primary can be
/// had from the pool, no pooled connection stalled in the last seconds, and every migration
/// is applied.
pub struct DatabaseReadiness {
    store: PgStore,
    draining: Draining,
}

impl DatabaseReadiness {
    /// Checks `store`'s database, and `draining`.
    pub fn new(store: PgStore, draining: Draining) -> DatabaseReadiness {
        DatabaseReadiness { store, draining }
    }
}

#[async_trait]
impl ReadinessCheck for DatabaseReadiness {
    async fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            !self.draining.is_draining(),
            "shutting down: the listener closes after the grace period"
        );
        self.store.check_ready(READY_WITHIN, STALL_WINDOW).await
    }
}
