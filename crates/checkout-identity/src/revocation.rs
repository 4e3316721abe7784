//! Whether the client a bearer token was issued to is still active, as read from the
//! [`ClientStore`] at most every `ttl`: deactivating a client (`checkout client deactivate`)
//! revokes its tokens on every instance within `ttl`, the verified-token cache included,
//! without a database read on every request.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use checkout_domain::ports::ClientStore;
use checkout_domain::values::TerminalNumber;

/// What is remembered of a client: its terminal and whether it is active; `None`: no client.
type Known = Option<(TerminalNumber, bool)>;

/// How long a client's active flag is trusted by default.
pub const DEFAULT_CLIENT_STATUS_TTL: Duration = Duration::from_secs(1);

/// The most clients remembered; when full, the memory is emptied (clients are few).
const MAX_CLIENTS: usize = 10_000;

/// Clients' terminals and active flags, each with when it was read.
pub(crate) struct ClientStatus {
    ttl: Duration,
    known: Mutex<HashMap<String, (Known, Instant)>>,
}

impl ClientStatus {
    /// Flags trusted for `ttl` (zero: read on every call).
    pub(crate) fn new(ttl: Duration) -> Self {
        ClientStatus {
            ttl,
            known: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, (Known, Instant)>> {
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
        Ok(self
            .lookup(store, client_id)
            .await?
            .is_some_and(|(_, active)| active))
    }

    /// The terminal of `client_id` and whether the client is active (`None`: no such
    /// client), read from `store` unless read less than `ttl` ago.
    pub(crate) async fn lookup(
        &self,
        store: &dyn ClientStore,
        client_id: &str,
    ) -> anyhow::Result<Known> {
        let now = Instant::now();
        if let Some((known, read)) = self.lock().get(client_id) {
            if now.saturating_duration_since(*read) < self.ttl {
                return Ok(known.clone());
            }
        }
        let known = store
            .get_client(client_id)
            .await?
            .map(|client| (client.terminal, client.active));
        if !self.ttl.is_zero() {
            let mut map = self.lock();
            if map.len() >= MAX_CLIENTS && !map.contains_key(client_id) {
                map.clear();
            }
            map.insert(client_id.to_owned(), (known.clone(), now));
        }
        Ok(known)
    }
}
