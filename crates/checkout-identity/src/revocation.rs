//! Whether the client a bearer token was issued to is still active, as read from the
//! [`ClientStore`] at most every `ttl`: deactivating a client (`checkout client deactivate`)
//! revokes its tokens on every instance within `ttl`, the verified-token cache included,
//! without a database read on every request.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use checkout_domain::ports::ClientStore;

/// How long a client's active flag is trusted by default.
pub const DEFAULT_CLIENT_STATUS_TTL: Duration = Duration::from_secs(1);

/// The most clients remembered; when full, the memory is emptied (clients are few).
const MAX_CLIENTS: usize = 10_000;

/// Clients' active flags, each with when it was read.
pub(crate) struct ClientStatus {
    ttl: Duration,
    known: Mutex<HashMap<String, (bool, Instant)>>,
}

impl ClientStatus {
    /// Flags trusted for `ttl` (zero: read on every call).
    pub(crate) fn new(ttl: Duration) -> Self {
        ClientStatus {
            ttl,
            known: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, (bool, Instant)>> {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// True when `client_id` names an active client, read from `store` unless read less than
    /// `ttl` ago. An unknown client is not active.
    pub(crate) async fn is_active(
        &self,
        store: &dyn ClientStore,
        client_id: &str,
    ) -> anyhow::Result<bool> {
        let now = Instant::now();
        if let Some((active, read)) = self.lock().get(client_id) {
            if now.saturating_duration_since(*read) < self.ttl {
                return Ok(*active);
            }
        }
        let active = store
            .get_client(client_id)
            .await?
            .is_some_and(|client| client.active);
        if !self.ttl.is_zero() {
            let mut known = self.lock();
            if known.len() >= MAX_CLIENTS && !known.contains_key(client_id) {
                known.clear();
            }
            known.insert(client_id.to_owned(), (active, now));
        }
        Ok(active)
    }
}
