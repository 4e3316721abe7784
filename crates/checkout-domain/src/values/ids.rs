//! Identifiers the service mints: session ids, internal references, attempt ids.

use std::fmt;
use std::str::FromStr;

use uuid::Uuid;

/// The `checkoutSessionId`: 128 random bits, written as a lowercase hyphenated GUID.
///
/// It is never a counter: it is built only from random bytes handed in by an
/// [`IdGenerator`](crate::ports::IdGenerator), and knowing one id tells nothing about another.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(Uuid);

impl SessionId {
    /// Builds an id from 16 random bytes.
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        SessionId(Uuid::from_bytes(bytes))
    }

    /// The 16 bytes of the id (for storage).
    pub fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }

    /// The id as a UUID value (for storage in a `uuid` column).
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }

    /// Rebuilds an id read back from storage.
    pub fn from_uuid(uuid: Uuid) -> Self {
        SessionId(uuid)
    }
}

impl FromStr for SessionId {
    type Err = InvalidId;

    /// Parses the hyphenated GUID form (any case); anything else is [`InvalidId`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() != 36 {
            return Err(InvalidId);
        }
        Uuid::try_parse(s).map(SessionId).map_err(|_| InvalidId)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({self})")
    }
}

/// A string that is not a well-formed identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a well-formed identifier")]
pub struct InvalidId;

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The `internalTransactionReferenceNumber`: `HC` followed by 22 Crockford base-32 characters
/// (110 random bits), unique across the service and quoted by support.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InternalReference(String);

impl InternalReference {
    /// The prefix of every internal reference.
    pub const PREFIX: &'static str = "HC";
    const BODY_LEN: usize = 22;

    /// Builds a reference from 16 random bytes (the low 110 bits are used).
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        let mut n = u128::from_be_bytes(bytes);
        let mut body = [0u8; Self::BODY_LEN];
        for slot in body.iter_mut().rev() {
            *slot = CROCKFORD[(n & 31) as usize];
            n >>= 5;
        }
        let mut s = String::with_capacity(Self::PREFIX.len() + Self::BODY_LEN);
        s.push_str(Self::PREFIX);
        s.extend(body.iter().map(|b| char::from(*b)));
        InternalReference(s)
    }

    /// Parses a stored reference, checking its shape.
    pub fn parse(s: &str) -> Result<Self, InvalidId> {
        let body = s.strip_prefix(Self::PREFIX).ok_or(InvalidId)?;
        if body.len() == Self::BODY_LEN && body.bytes().all(|b| CROCKFORD.contains(&b)) {
            Ok(InternalReference(s.to_owned()))
        } else {
            Err(InvalidId)
        }
    }

    /// The reference as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InternalReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for InternalReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InternalReference({})", self.0)
    }
}

/// The id of one payment attempt; also the idempotency key sent to the card processor,
/// so that a retried call for the same attempt can never authorise twice.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttemptId(Uuid);

impl AttemptId {
    /// Builds an id from 16 random bytes.
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        AttemptId(Uuid::from_bytes(bytes))
    }

    /// The id as a UUID value (for storage).
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }

    /// Rebuilds an id read back from storage.
    pub fn from_uuid(uuid: Uuid) -> Self {
        AttemptId(uuid)
    }

    /// The idempotency key for the processor call of this attempt.
    pub fn idempotency_key(&self) -> String {
        format!("hc-attempt-{}", self.0.hyphenated())
    }
}

impl fmt::Display for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl fmt::Debug for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AttemptId({self})")
    }
}

/// The id of one refund; also the idempotency key sent to the card processor, so that a
/// replayed refund request can never refund twice.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefundId(Uuid);

impl RefundId {
    /// Builds an id from 16 random bytes.
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        RefundId(Uuid::from_bytes(bytes))
    }

    /// The id as a UUID value (for storage).
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }

    /// Rebuilds an id read back from storage.
    pub fn from_uuid(uuid: Uuid) -> Self {
        RefundId(uuid)
    }

    /// The idempotency key for the processor call of this refund.
    pub fn idempotency_key(&self) -> String {
        format!("hc-refund-{}", self.0.hyphenated())
    }
}

impl fmt::Display for RefundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl fmt::Debug for RefundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RefundId({self})")
    }
}

/// The id of one capture or void of a held authorisation
/// ([`HoldAction`](crate::session::HoldAction)); the processor idempotency key derives from
/// it, so that a replayed capture can never capture twice.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActionId(Uuid);

impl ActionId {
    /// The id as a UUID value (for storage).
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }

    /// Rebuilds an id read back from storage, or mints one from a fresh UUID.
    pub fn from_uuid(uuid: Uuid) -> Self {
        ActionId(uuid)
    }

    /// The idempotency key for the processor calls of this action.
    pub fn idempotency_key(&self) -> String {
        format!("hc-action-{}", self.0.hyphenated())
    }
}

impl fmt::Display for ActionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl fmt::Debug for ActionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ActionId({self})")
    }
}
