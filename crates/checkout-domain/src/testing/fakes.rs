//! Fakes for the identity provider, the processor, the clock and the id generator.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use time::{Duration, OffsetDateTime};

use super::InMemoryClients;
use crate::auth::{Claims, ClientCredentials, IssuedToken, Secret};
use crate::error::AuthFailure;
use crate::ports::{
    AuthorizationRequest, CardProcessor, ChallengeAnswer, ClientStore, Clock, IdGenerator,
    IdentityError, IdentityProvider, ProcessorError, ProcessorOutcome,
};
use crate::values::{AttemptId, InternalReference, SessionId};

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

/// A processor that answers from scripts and counts its calls. With nothing scripted,
/// `authorize` approves and captures. Every authorisation it "performs" is remembered by
/// attempt id, as a real processor's idempotency would, and `lookup` finds it.
#[derive(Default)]
pub struct ScriptedProcessor {
    authorize_script: Mutex<VecDeque<Scripted>>,
    challenge_script: Mutex<VecDeque<Result<ProcessorOutcome, ProcessorError>>>,
    charges: Mutex<HashMap<AttemptId, ProcessorOutcome>>,
    lookup_fails: Mutex<bool>,
    authorize_calls: AtomicU64,
    challenge_calls: AtomicU64,
}

/// One scripted authorisation.
#[derive(Debug, Clone)]
pub struct Scripted {
    /// What `authorize` returns.
    pub answer: Result<ProcessorOutcome, ProcessorError>,
    /// What the processor really did, as `lookup` later reports it (for lost answers).
    pub really: Option<ProcessorOutcome>,
}

impl ScriptedProcessor {
    /// The next `authorize` returns `answer` (and a successful answer is remembered).
    pub fn push_authorize(&self, answer: Result<ProcessorOutcome, ProcessorError>) {
        let really = answer.as_ref().ok().cloned();
        lock(&self.authorize_script).push_back(Scripted { answer, really });
    }

    /// The next `authorize` fails with `error` although the processor did `really` happen
    /// (`None`: nothing was charged).
    pub fn push_lost_answer(&self, error: ProcessorError, really: Option<ProcessorOutcome>) {
        lock(&self.authorize_script).push_back(Scripted {
            answer: Err(error),
            really,
        });
    }

    /// The next `complete_challenge` returns `answer`.
    pub fn push_challenge(&self, answer: Result<ProcessorOutcome, ProcessorError>) {
        lock(&self.challenge_script).push_back(answer);
    }

    /// Makes `lookup` fail (the processor is down).
    pub fn fail_lookups(&self, fail: bool) {
        *lock(&self.lookup_fails) = fail;
    }

    /// How many times `authorize` was called.
    pub fn authorize_calls(&self) -> u64 {
        self.authorize_calls.load(Ordering::SeqCst)
    }

    /// How many times `complete_challenge` was called.
    pub fn challenge_calls(&self) -> u64 {
        self.challenge_calls.load(Ordering::SeqCst)
    }
}

/// An approval with capture, as the default script answers.
pub fn approved(reference: &str) -> ProcessorOutcome {
    ProcessorOutcome::Approved {
        processor_reference: reference.to_owned(),
        captured: true,
    }
}

#[async_trait]
impl CardProcessor for ScriptedProcessor {
    async fn authorize(
        &self,
        request: AuthorizationRequest<'_>,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.authorize_calls.fetch_add(1, Ordering::SeqCst);
        let scripted = lock(&self.authorize_script).pop_front().unwrap_or_else(|| {
            let outcome = approved(&format!("ch_{}", request.attempt));
            Scripted {
                answer: Ok(outcome.clone()),
                really: Some(outcome),
            }
        });
        if let Some(really) = scripted.really {
            lock(&self.charges).insert(request.attempt, really);
        }
        scripted.answer
    }

    async fn complete_challenge(
        &self,
        processor_reference: &str,
        answer: ChallengeAnswer,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.challenge_calls.fetch_add(1, Ordering::SeqCst);
        if let Some(scripted) = lock(&self.challenge_script).pop_front() {
            return scripted;
        }
        Ok(match answer {
            ChallengeAnswer::Passed | ChallengeAnswer::Returned => approved(processor_reference),
            ChallengeAnswer::Failed => ProcessorOutcome::Declined {
                processor_reference: Some(processor_reference.to_owned()),
                reason: "authentication failed".into(),
            },
        })
    }

    async fn lookup(&self, attempt: AttemptId) -> Result<Option<ProcessorOutcome>, ProcessorError> {
        if *lock(&self.lookup_fails) {
            return Err(ProcessorError::Communication("lookup failed".into()));
        }
        Ok(lock(&self.charges).get(&attempt).cloned())
    }
}
