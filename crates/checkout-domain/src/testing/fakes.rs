//! Fakes for the identity provider, the processor, the clock and the id generator.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use time::{Duration, OffsetDateTime};

use super::InMemoryClients;
use crate::auth::{Claims, ClientCredentials, IssuedToken, Secret};
use crate::error::AuthFailure;
use crate::ports::{ClientStore, Clock, IdGenerator, IdentityError, IdentityProvider};
use crate::values::{AttemptId, InternalReference, RefundId, SessionId};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A clock that moves only when told.
pub struct ManualClock {
    now: Mutex<OffsetDateTime>,
}

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: OffsetDateTime) -> Self {
        ManualClock {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        *lock(&self.now) += by;
    }

    /// The current reading.
    pub fn now_value(&self) -> OffsetDateTime {
        *lock(&self.now)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        self.now_value()
    }
}

/// Deterministic ids from a counter. Tests only: production ids are random (see the port).
#[derive(Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

impl SequentialIds {
    fn bytes(&self, kind: u8) -> [u8; 16] {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut b = [0u8; 16];
        b[0] = kind;
        b[8..].copy_from_slice(&n.to_be_bytes());
        b
    }
}

impl IdGenerator for SequentialIds {
    fn session_id(&self) -> SessionId {
        SessionId::from_random_bytes(self.bytes(0x5e))
    }

    fn internal_reference(&self) -> InternalReference {
        InternalReference::from_random_bytes(self.bytes(0x1e))
    }

    fn attempt_id(&self) -> AttemptId {
        AttemptId::from_random_bytes(self.bytes(0xa7))
    }

    fn webhook_endpoint_id(&self) -> uuid::Uuid {
        uuid::Uuid::from_bytes(self.bytes(0xeb))
    }

    fn refund_id(&self) -> RefundId {
        RefundId::from_random_bytes(self.bytes(0xef))
    }
}

/// An identity provider over [`InMemoryClients`]: secrets compare against `plain:<secret>`,
/// tokens are opaque strings remembered with their claims.
pub struct FakeIdentity {
    clients: Arc<InMemoryClients>,
    tokens: Mutex<HashMap<String, Claims>>,
    issued: AtomicU64,
}

/// The token lifetime of [`FakeIdentity`]: 300 seconds.
pub const FAKE_TOKEN_LIFETIME: u64 = 300;

impl FakeIdentity {
    /// A provider over `clients`.
    pub fn new(clients: Arc<InMemoryClients>) -> Self {
        FakeIdentity {
            clients,
            tokens: Mutex::new(HashMap::new()),
            issued: AtomicU64::new(0),
        }
    }

    /// Makes `token` verify into `claims` (to forge tokens without the role, say).
    pub fn accept(&self, token: &str, claims: Claims) {
        lock(&self.tokens).insert(token.to_owned(), claims);
    }
}

#[async_trait]
impl IdentityProvider for FakeIdentity {
    async fn issue_token(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<IssuedToken, IdentityError> {
        let client = self
            .clients
            .get_client(&credentials.client_id)
            .await?
            .filter(|c| {
                c.active && c.secret_hash == format!("plain:{}", credentials.client_secret.expose())
            })
            .ok_or(AuthFailure::InvalidCredentials)?;
        let n = self.issued.fetch_add(1, Ordering::Relaxed);
        let token = format!("fake-token-{n}");
        let claims = Claims {
            client_id: client.client_id,
            terminal: client.terminal,
            roles: client.roles,
            expires_at: OffsetDateTime::UNIX_EPOCH + Duration::days(365 * 100),
        };
        self.accept(&token, claims);
        Ok(IssuedToken {
            token: Secret::new(token),
            expires_in: FAKE_TOKEN_LIFETIME,
        })
    }

    async fn verify(&self, token: &str) -> Result<Claims, IdentityError> {
        lock(&self.tokens)
            .get(token)
            .cloned()
            .ok_or(IdentityError::Rejected(AuthFailure::InvalidToken))
    }
}

/// A processor that sends no events (the sandbox's case): every event is refused as not
/// configured. Domain tests hand [`ProcessorNotice`](crate::ports::ProcessorNotice)s to
/// [`Checkout::absorb_processor_event`](crate::usecases::Checkout::absorb_processor_event)
/// directly.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProcessorEvents;

impl crate::ports::ProcessorNotices for NoProcessorEvents {
    fn signature_header(&self) -> &'static str {
        "Processor-Signature"
    }

    fn read(
        &self,
        _payload: &[u8],
        _signature: Option<&str>,
        _now: OffsetDateTime,
    ) -> Result<crate::ports::ProcessorNotice, crate::ports::NoticeRejected> {
        Err(crate::ports::NoticeRejected::NotConfigured)
    }
}

/// Keyed hashes for tests: SipHash under a fixed key, spread to 64 hex digits. Not a MAC
/// (the production adapter is HMAC-SHA256); it keeps the same shape and the same promise
/// that one card or one address gives one key.
#[derive(Debug, Default, Clone, Copy)]
pub struct PlainGuardKeys;

impl PlainGuardKeys {
    fn hash(kind: &str, value: &str) -> String {
        use std::hash::{Hash, Hasher};
        (0..4u8)
            .map(|i| {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                (kind, value, i).hash(&mut h);
                format!("{:016x}", h.finish())
            })
            .collect()
    }
}

impl crate::ports::GuardKeys for PlainGuardKeys {
    fn card(&self, number: &crate::card::CardNumber) -> crate::guard::CardFingerprint {
        crate::guard::CardFingerprint::parse(&Self::hash("card", number.expose_digits()))
            .unwrap_or_else(|_| unreachable!())
    }

    fn address(&self, address: std::net::IpAddr) -> crate::guard::AddressKey {
        crate::guard::AddressKey::parse(&Self::hash("address", &address.to_string()))
            .unwrap_or_else(|_| unreachable!())
    }
}
