//! Idempotency keys in memory.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::ports::{Claim, ClaimTimes, ClaimToken, HeldKey, IdempotencyStore, SavedResponse};
use crate::values::{IdempotencyKey, RequestFingerprint, TerminalNumber};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One key's record.
#[derive(Debug, Clone)]
struct Record {
    fingerprint: RequestFingerprint,
    token: ClaimToken,
    created_at: OffsetDateTime,
    lease_until: OffsetDateTime,
    response: Option<SavedResponse>,
}

/// Keys per (terminal, key) in a mutex; one lock per call makes every method atomic.
#[derive(Default)]
pub struct InMemoryIdempotency {
    records: Mutex<HashMap<(TerminalNumber, IdempotencyKey), Record>>,
    tokens: AtomicU64,
}

impl InMemoryIdempotency {
    /// How many keys are recorded (claimed or answered), of every terminal.
    pub fn len(&self) -> usize {
        lock(&self.records).len()
    }

    /// True when no key is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The saved response of `key` of `terminal`, if it has one.
    pub fn saved(&self, terminal: &TerminalNumber, key: &IdempotencyKey) -> Option<SavedResponse> {
        lock(&self.records)
            .get(&(terminal.clone(), key.clone()))
            .and_then(|r| r.response.clone())
    }
}

#[async_trait]
impl IdempotencyStore for InMemoryIdempotency {
    async fn claim(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        fingerprint: &RequestFingerprint,
        times: ClaimTimes,
    ) -> anyhow::Result<Claim> {
        let mut records = lock(&self.records);
        let id = (terminal.clone(), key.clone());
        if let Some(r) = records.get(&id) {
            let forgotten = r.created_at <= times.forget_before;
            let lapsed = r.response.is_none() && r.lease_until <= times.now;
            if !forgotten && !lapsed {
                return Ok(Claim::Held(HeldKey {
                    fingerprint: r.fingerprint,
                    response: r.response.clone(),
                }));
            }
        }
        let n = self.tokens.fetch_add(1, Ordering::Relaxed) + 1;
        let token = ClaimToken::from_uuid(Uuid::from_u128(u128::from(n)));
        records.insert(
            id,
            Record {
                fingerprint: *fingerprint,
                token,
                created_at: times.now,
                lease_until: times.lease_until,
                response: None,
            },
        );
        Ok(Claim::Claimed(token))
    }

    async fn complete(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        token: ClaimToken,
        response: &SavedResponse,
        _at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut records = lock(&self.records);
        match records.get_mut(&(terminal.clone(), key.clone())) {
            Some(r) if r.token == token && r.response.is_none() => {
                r.response = Some(response.clone());
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn release(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        token: ClaimToken,
    ) -> anyhow::Result<()> {
        let mut records = lock(&self.records);
        let id = (terminal.clone(), key.clone());
        if records
            .get(&id)
            .is_some_and(|r| r.token == token && r.response.is_none())
        {
            records.remove(&id);
        }
        Ok(())
    }

    async fn forget_before(&self, before: OffsetDateTime) -> anyhow::Result<u64> {
        let mut records = lock(&self.records);
        let was = records.len();
        records.retain(|_, r| r.created_at > before);
        Ok(u64::try_from(was - records.len()).unwrap_or_default())
    }
}
