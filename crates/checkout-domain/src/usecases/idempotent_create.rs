//! Use cases: start payment and generate payment link sent with an `Idempotency-Key` (IETF
//! httpapi idempotency-key draft), and the sweep that forgets old keys.
//!
//! The first request with a key claims it, runs, and saves its response under the key when
//! that response is one to keep (a success, or a 4xx about the request: a validation error or
//! a service code); a retry with the same key and the same request gets that response again,
//! for [`IdempotencyPolicy::window`]. A 5xx, or a process that dies mid-request, keeps
//! nothing: the key is released (at once, or when the claim's lease ends) and a retry runs
//! again. Keys are the caller's terminal's: another terminal's key never replays.

use std::future::Future;

use time::Duration;

use super::Checkout;
use crate::auth::Claims;
use crate::error::{CheckoutError, IdempotencyConflict};
use crate::ports::{Claim, ClaimTimes, HeldKey, SavedResponse};
use crate::values::{IdempotencyKey, RequestFingerprint};

/// How long keys are remembered, and how long a claim holds a key without a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdempotencyPolicy {
    /// How long a key replays its first response (24 hours); after that it is forgotten and
    /// a request with it runs as new.
    pub window: Duration,
    /// How long a running request holds its key; a claim that neither saved nor released
    /// its key by then (the process died) lets the next request with the key run.
    pub lease: Duration,
}

impl Default for IdempotencyPolicy {
    /// A 24-hour window and a 60-second lease (far above what a create takes).
    fn default() -> Self {
        IdempotencyPolicy {
            window: Duration::hours(24),
            lease: Duration::seconds(60),
        }
    }
}

/// Whether an outcome is the last word on its request, so that its key may keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finality {
    /// The outcome stands: a key keeps it (a success, or an error about the request) and
    /// replays it.
    Final,
    /// A money movement the processor has not confirmed either way: the key keeps nothing,
    /// so that a retry with it answers the movement as it stands then.
    Unsettled,
}

/// A money movement after a request (a capture, void or refund in the ledger), whose answer
/// is final only once the processor has settled it.
pub(super) trait AsItStands {
    /// What the merchant is answered.
    type Answer;
    /// True once the processor's word is final.
    fn is_settled(&self) -> bool;
    /// The merchant's answer.
    fn answer(self) -> Result<Self::Answer, CheckoutError>;
}

/// The answer of `outcome` with its finality, for [`Checkout::run_once`]: an error before the
/// processor was asked is final, a movement is final once settled.
pub(super) fn as_it_stands<D: AsItStands>(
    outcome: Result<D, CheckoutError>,
) -> (Result<D::Answer, CheckoutError>, Finality) {
    match outcome {
        Ok(done) if done.is_settled() => (done.answer(), Finality::Final),
        Ok(done) => (done.answer(), Finality::Unsettled),
        Err(e) => (Err(e), Finality::Final),
    }
}

/// A create request sent with an `Idempotency-Key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotentRequest {
    /// The key, scoped to the caller's terminal.
    pub key: IdempotencyKey,
    /// The digest of the request it came with.
    pub fingerprint: RequestFingerprint,
}

/// What a create sent with a key answered.
#[derive(Debug)]
pub enum IdempotentAnswer {
    /// The create ran now. Its response is saved under the key when it is one to keep (2xx,
    /// 4xx); a 5xx released the key.
    Fresh(SavedResponse),
    /// The create ran now, but its response could not be saved (the store failed, or the
    /// claim had lapsed and another request took the key): a retry runs again once the claim
    /// lapses. The error is for the log; the response is still the truth for the caller.
    FreshUnsaved(SavedResponse, anyhow::Error),
    /// An earlier request with the same key and the same request answered this; nothing ran.
    Replayed(SavedResponse),
}

impl IdempotentAnswer {
    /// The response to send.
    pub fn response(&self) -> &SavedResponse {
        match self {
            IdempotentAnswer::Fresh(r)
            | IdempotentAnswer::FreshUnsaved(r, _)
            | IdempotentAnswer::Replayed(r) => r,
        }
    }

    /// True when the response is a replay of an earlier one.
    pub fn is_replay(&self) -> bool {
        matches!(self, IdempotentAnswer::Replayed(_))
    }
}

/// True for the outcomes whose response a key keeps: a success, or an error about the request
/// itself (its fields, its reference, its terminal). Faults keep nothing.
fn is_kept<T>(result: &Result<T, CheckoutError>) -> bool {
    match result {
        Ok(_)
        | Err(
            CheckoutError::Validation(_)
            | CheckoutError::Service { .. }
            | CheckoutError::NotFound(_),
        ) => true,
        Err(
            CheckoutError::Unauthenticated(_)
            | CheckoutError::Idempotency(_)
            | CheckoutError::Unavailable(_)
            | CheckoutError::LimitReached(_)
            | CheckoutError::TooManyRequests { .. }
            | CheckoutError::Unknown(_),
        ) => false,
    }
}

impl Checkout {
    /// A create with an `Idempotency-Key` (POST /pay/api/start-payment over
    /// [`Checkout::start_payment`], POST /pay/api/generate-payment-link over
    /// [`Checkout::generate_payment_link`]): `create`, a future not polled yet, runs at most
    /// once per key of the caller's terminal. `render` turns the outcome into the response
    /// that is sent and saved; it is called only for outcomes that are kept.
    ///
    /// Errors: [`IdempotencyConflict::KeyReused`] when the key was used with another request,
    /// [`IdempotencyConflict::InProgress`] while the first request with it runs, and the
    /// create's own fault (after releasing the key).
    pub async fn create_once<T, R>(
        &self,
        caller: &Claims,
        once: &IdempotentRequest,
        create: impl Future<Output = Result<T, CheckoutError>>,
        render: R,
    ) -> Result<IdempotentAnswer, CheckoutError>
    where
        R: FnOnce(&Result<T, CheckoutError>) -> SavedResponse,
    {
        let create = async { (create.await, Finality::Final) };
        self.run_once(caller, once, create, render).await
    }

    /// Forgets the keys whose replay window is over; returns how many. (Claims ignore such
    /// keys anyway: this sweep only reclaims their space.)
    pub async fn forget_idempotency_keys(&self) -> Result<u64, CheckoutError> {
        let before = self.now() - self.policy.idempotency.window;
        Ok(self.ports.idempotency.forget_before(before).await?)
    }

    /// Claims the key, runs `operation` if the claim is won, and saves or releases the key:
    /// an outcome to keep and [final](Finality::Final) is saved, any other releases
    /// the key (a fault is answered as an error, an unsettled outcome is answered as it
    /// renders but not replayed).
    pub(super) async fn run_once<T, F, R>(
        &self,
        caller: &Claims,
        once: &IdempotentRequest,
        operation: F,
        render: R,
    ) -> Result<IdempotentAnswer, CheckoutError>
    where
        F: Future<Output = (Result<T, CheckoutError>, Finality)>,
        R: FnOnce(&Result<T, CheckoutError>) -> SavedResponse,
    {
        let store = &self.ports.idempotency;
        let terminal = &caller.terminal;
        let now = self.now();
        let policy = self.policy.idempotency;
        let times = ClaimTimes {
            now,
            lease_until: now + policy.lease,
            forget_before: now - policy.window,
        };
        let token = match store
            .claim(terminal, &once.key, &once.fingerprint, times)
            .await?
        {
            Claim::Claimed(token) => token,
            Claim::Held(HeldKey { fingerprint, .. }) if fingerprint != once.fingerprint => {
                return Err(IdempotencyConflict::KeyReused.into())
            }
            Claim::Held(HeldKey {
                response: Some(response),
                ..
            }) => return Ok(IdempotentAnswer::Replayed(response)),
            Claim::Held(HeldKey { response: None, .. }) => {
                return Err(IdempotencyConflict::InProgress.into())
            }
        };

        let (result, finality) = operation.await;
        if finality == Finality::Unsettled && is_kept(&result) {
            let response = render(&result);
            return match store.release(terminal, &once.key, token).await {
                Ok(()) => Ok(IdempotentAnswer::Fresh(response)),
                Err(e) => Ok(IdempotentAnswer::FreshUnsaved(response, e)),
            };
        }
        if !is_kept(&result) {
            let released = store.release(terminal, &once.key, token).await;
            return Err(match (result, released) {
                (Err(CheckoutError::Unknown(e)), Err(r)) => CheckoutError::Unknown(
                    e.context(format!("and releasing the idempotency key failed: {r:#}")),
                ),
                (Err(e), _) => e,
                // `is_kept` keeps every success; this arm is never taken.
                (Ok(_), _) => CheckoutError::Unknown(anyhow::anyhow!(
                    "a successful create was not kept under its idempotency key"
                )),
            });
        }

        let response = render(&result);
        if response.status >= 500 {
            // The renderer could not answer the outcome: nothing to replay.
            return match store.release(terminal, &once.key, token).await {
                Ok(()) => Ok(IdempotentAnswer::Fresh(response)),
                Err(e) => Ok(IdempotentAnswer::FreshUnsaved(response, e)),
            };
        }
        match store
            .complete(terminal, &once.key, token, &response, self.now())
            .await
        {
            Ok(true) => Ok(IdempotentAnswer::Fresh(response)),
            Ok(false) => Ok(IdempotentAnswer::FreshUnsaved(
                response,
                anyhow::anyhow!(
                    "the claim on the idempotency key lapsed before its response was saved"
                ),
            )),
            Err(e) => Ok(IdempotentAnswer::FreshUnsaved(
                response,
                e.context("saving the response under its idempotency key"),
            )),
        }
    }
}
