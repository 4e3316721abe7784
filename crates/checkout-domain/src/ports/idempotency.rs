//! Storage of idempotency keys and the responses they replay.

use std::fmt;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::values::{IdempotencyKey, RequestFingerprint, TerminalNumber};

/// A response kept for replay, exactly as it was first sent.
#[derive(Clone, PartialEq, Eq)]
pub struct SavedResponse {
    /// The HTTP status.
    pub status: u16,
    /// The media type (`Content-Type`).
    pub content_type: String,
    /// The body's bytes.
    pub body: Vec<u8>,
}

impl fmt::Debug for SavedResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SavedResponse")
            .field("status", &self.status)
            .field("content_type", &self.content_type)
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

/// Proof of one claim on a key: only its holder may save a response under the key or release
/// it. A claim that lapsed and was taken over holds nothing any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClaimToken(Uuid);

impl ClaimToken {
    /// Wraps a token minted by a store (unique per claim).
    pub fn from_uuid(uuid: Uuid) -> Self {
        ClaimToken(uuid)
    }

    /// The token as a UUID (for storage).
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }
}

/// The instants a claim is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimTimes {
    /// Now: the new record's creation time.
    pub now: OffsetDateTime,
    /// Until when the new claim keeps the key without a response.
    pub lease_until: OffsetDateTime,
    /// Records created at or before this instant are forgotten (the replay window is over).
    pub forget_before: OffsetDateTime,
}

/// A live record of a key, as a claim found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldKey {
    /// The fingerprint of the request that claimed it.
    pub fingerprint: RequestFingerprint,
    /// Its response, once that request finished; `None` while it runs.
    pub response: Option<SavedResponse>,
}

/// What [`IdempotencyStore::claim`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key was free and is now the caller's, under this token.
    Claimed(ClaimToken),
    /// Another request holds the key: still running, or finished with a saved response.
    Held(HeldKey),
}

/// Durable records of idempotency keys, per terminal: who claimed a key, for which request,
/// and the response to replay.
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `key` of `terminal` for a request with `fingerprint`.
    ///
    /// MUST return [`Claim::Claimed`] with a new token, and store a record with `fingerprint`,
    /// no response, created at `times.now` and leased until `times.lease_until`, when the key
    /// of `terminal` has no record, or its record was created at or before
    /// `times.forget_before` (forgotten), or its record holds no response and its lease ended
    /// at or before `times.now` (its request crashed or was abandoned). MUST otherwise return
    /// [`Claim::Held`] with the record's fingerprint and response, and change nothing.
    ///
    /// MUST decide atomically: of any number of racing claims of one free key exactly one is
    /// `Claimed`. MUST keep terminals apart: a claim never sees another terminal's record.
    async fn claim(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        fingerprint: &RequestFingerprint,
        times: ClaimTimes,
    ) -> anyhow::Result<Claim>;

    /// Saves `response` under the claim `token` of `key` of `terminal`, answered `at`.
    ///
    /// MUST save only if the record is still that claim's and holds no response, and return
    /// whether it saved (`false`: the claim lapsed and another request took the key).
    async fn complete(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        token: ClaimToken,
        response: &SavedResponse,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Releases the claim `token` of `key` of `terminal`, so that a retry runs again.
    ///
    /// MUST delete the record only if it is still that claim's and holds no response.
    async fn release(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        token: ClaimToken,
    ) -> anyhow::Result<()>;

    /// Deletes every record created at or before `before`, of every terminal; returns how
    /// many. (A claim also treats such records as absent, so this only reclaims space.)
    async fn forget_before(&self, before: OffsetDateTime) -> anyhow::Result<u64>;
}
