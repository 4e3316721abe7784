//! Use case: the payer submits a card. At most one authorisation per session, recorded as an
//! attempt before it is sent.

use std::collections::BTreeMap;

use super::settle::Answer;
use super::{Checkout, HostedPage};
use std::net::IpAddr;

use time::OffsetDateTime;

use super::CardGuardSetup;
use crate::card::{CardField, CardFieldError, CardInput};
use crate::error::{CheckoutError, SvcCode};
use crate::guard::{GuardAction, GuardRule, GuardSubject, ProofCheck, Verdict};
use crate::ports::ProcessorError;
use crate::session::{AttemptState, PaymentAttempt, PaymentSession, SessionFlow, SessionState};
use crate::terminal::Terminal;
use crate::values::SessionId;

/// How a card submission, a challenge answer or a cancel ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentResult {
    /// Authorised: the session is Successful or ApprovedTransaction.
    Approved,
    /// Declined (SVC_006): the session is Failed, or Pending when its terminal allows
    /// another card (`maxCardAttempts`) and the payer may pay with one.
    Declined {
        /// The processor's reason, safe to show.
        reason: String,
    },
    /// The payer must pass a 3DS challenge: the session is ChallengeRequired.
    ChallengeRequired {
        /// The processor's challenge page, or `None` for the service's own.
        challenge_url: Option<String>,
    },
    /// Nothing was charged, as the processor said, and the payer may try again (SVC_003 or
    /// SVC_004): the session is Pending.
    Retry {
        /// SVC_003 or SVC_004.
        code: SvcCode,
    },
    /// The processor's answer was lost (SVC_003): the session stays where it was (Processing
    /// after a card submission) until reconciliation learns the outcome by replaying the
    /// request with the same idempotency key.
    Unresolved,
    /// The payer cancelled: the session is Cancelled.
    Cancelled,
    /// Another request already owns the session (double click, second tab, already paid),
    /// or the answer was about an attempt that is no longer current; nothing was sent to the
    /// processor for this one. The session shows where it stands.
    AlreadyHandled,
    /// The card-testing guard held the post back ([`GuardAction::Challenged`] or
    /// [`GuardAction::Refused`]): nothing was sent to the processor; the session is Pending.
    Guarded(GuardAction),
}

impl PaymentResult {
    /// The service code the result carries, if any.
    pub fn svc_code(&self) -> Option<SvcCode> {
        match self {
            PaymentResult::Declined { .. } => Some(SvcCode::Svc006),
            PaymentResult::Retry { code } => Some(*code),
            PaymentResult::Unresolved => Some(SvcCode::Svc003),
            _ => None,
        }
    }
}

/// The session after a payment step, and how the step ended.
#[derive(Debug, Clone)]
pub struct PaymentOutcome {
    /// The session as it now stands.
    pub session: PaymentSession,
    /// How the step ended.
    pub result: PaymentResult,
}

/// What the card post's page needs: the page as it now stands, and how the post ended.
#[derive(Debug, Clone)]
pub struct CardPost {
    /// The session (as it now stands) and its merchant.
    pub page: HostedPage,
    /// How the step ended, or the card fields that failed the checks (nothing was sent).
    pub result: Result<PaymentResult, BTreeMap<CardField, CardFieldError>>,
    /// What the card-testing guard did, when it screened the post (a post whose fields failed
    /// the checks, or of a session that is not Pending, is not screened).
    pub guard: Option<GuardAction>,
}

/// What the page knows of a card post besides the card: where it came from and the proof of
/// work sent with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardedPost {
    /// The client's address, as the trusted-proxy rules resolve it.
    pub address: Option<IpAddr>,
    /// The proof of work sent with the post.
    pub proof: ProofCheck,
}

impl Default for GuardedPost {
    fn default() -> Self {
        GuardedPost {
            address: None,
            proof: ProofCheck::Absent,
        }
    }
}

impl Checkout {
    /// POST /pay/process-payment: checks the card and authorises it for the session `id`.
    ///
    /// The session is read once, without its items and charges; an outcome that shows the
    /// form again (checks failed, a retry, a declined card that may be replaced) reads it
    /// again whole for the order. Unknown or expired sessions are SVC_002, a deactivated
    /// terminal SVC_005. The card is turned into the processor's payment-method reference
    /// first (nothing charged); then exactly one of racing submissions records its attempt and
    /// moves the session from Pending to Processing, and only that one asks for the
    /// authorisation; the others get [`PaymentResult::AlreadyHandled`]. A lost answer is
    /// replayed once at once with the same idempotency key, and otherwise left to
    /// reconciliation ([`PaymentResult::Unresolved`]).
    pub async fn process_payment(
        &self,
        id: SessionId,
        input: &CardInput,
    ) -> Result<CardPost, CheckoutError> {
        self.process_card(id, input, &GuardedPost::default()).await
    }

    /// [`process_payment`](Self::process_payment) screened by the card-testing guard (when
    /// one is wired): after the card's fields pass their checks and before anything is sent,
    /// the guard's counts decide ([`GuardPolicy::decide`](crate::guard::GuardPolicy::decide));
    /// a challenged post without a valid, unspent proof bound to the session, and a refused
    /// post, end [`PaymentResult::Guarded`] with nothing sent. The processor's answer (a
    /// decline or not) is then recorded. A guard that cannot be read fails closed: SVC-less
    /// [`CheckoutError::Unavailable`] (503), nothing sent.
    pub async fn process_card(
        &self,
        id: SessionId,
        input: &CardInput,
        post: &GuardedPost,
    ) -> Result<CardPost, CheckoutError> {
        // The session without its items and charges, with its terminal (one statement for a
        // session that has had no card yet): a post that settles the payment shows no order;
        // the outcomes that show the form again read the whole session (`with_order`).
        let read = self
            .ports
            .sessions
            .get_for_card_post(id)
            .await?
            .ok_or_else(|| CheckoutError::svc(SvcCode::Svc002))?;
        let mut page = self.check_payable(read, None).await?;
        if page.session.state() != SessionState::Pending {
            return Ok(CardPost {
                page,
                result: Ok(PaymentResult::AlreadyHandled),
                guard: None,
            });
        }
        let now = self.now();
        let card = match input.validate(now) {
            Ok(card) => card,
            Err(errors) => {
                return Ok(CardPost {
                    page: self.with_order(page).await?,
                    result: Err(errors),
                    guard: None,
                })
            }
        };
        let mut screened = None;
        if let Some(guard) = &self.guard {
            let subject = GuardSubject {
                terminal: page.session.terminal().clone(),
                session: id,
                address: post.address.map(|a| guard.keys.address(a)),
                card: Some(guard.keys.card(&card.number)),
            };
            let action = screen(guard, &subject, &post.proof, now).await?;
            if matches!(action, GuardAction::Challenged(_) | GuardAction::Refused(_)) {
                return Ok(CardPost {
                    page: self.with_order(page).await?,
                    result: Ok(PaymentResult::Guarded(action)),
                    guard: Some(action),
                });
            }
            screened = Some((guard, subject, action));
        }
        let attempt_id = self.ports.ids.attempt_id();
        let payment_method = match self.ports.processor.tokenize(attempt_id, &card).await {
            Ok(reference) => reference,
            // No authorisation was asked for: nothing can have been charged.
            Err(e) => {
                let code = match e {
                    ProcessorError::Communication(_) => SvcCode::Svc003,
                    ProcessorError::Controlled(_) => SvcCode::Svc004,
                };
                return Ok(CardPost {
                    page: self.with_order(page).await?,
                    result: Ok(PaymentResult::Retry { code }),
                    guard: screened.map(|(_, _, action)| action),
                });
            }
        };
        let attempt = PaymentAttempt {
            id: attempt_id,
            session_id: id,
            card_brand: card.number.brand(),
            card_last4: card.number.last4().to_owned(),
            payment_method,
            return_url: self.policy.processor_return_url(id),
            capture_method: page.capture_method,
            processor_reference: None,
            challenge_url: None,
            state: AttemptState::Sent,
            svc_code: None,
            checks: 0,
            // A process killed before the answer is recorded leaves the attempt Sent:
            // reconciliation replays it from then on.
            next_check_at: Some(now + self.policy.reconcile.first_check_after),
            created_at: now,
            updated_at: now,
        };
        drop(card);
        let processing = page
            .session
            .state()
            .apply(crate::session::SessionEvent::CardSubmitted)?;
        if !self
            .ports
            .attempts
            .begin_attempt(&attempt, SessionState::Pending, processing)
            .await?
        {
            page.session = self.reload(id).await?;
            return Ok(CardPost {
                page,
                result: Ok(PaymentResult::AlreadyHandled),
                guard: None,
            });
        }
        let session = page.session.submitted(attempt.id, now)?;
        let mut answer = self.send_authorization(&session, &attempt).await;
        if matches!(answer, Err(ProcessorError::Communication(_))) {
            // One replay with the same key: the same request, so never a second charge.
            answer = self.send_authorization(&session, &attempt).await;
        }
        let outcome = self
            .record_answer(
                session,
                &attempt,
                &AttemptState::UNRESOLVED,
                Answer::of_authorization(answer),
            )
            .await?;
        page.session = outcome.session;
        let guard_action = screened.as_ref().map(|(_, _, action)| *action);
        if let Some((guard, subject, _)) = screened {
            let declined = match outcome.result {
                PaymentResult::Declined { .. } => Some(true),
                PaymentResult::Approved | PaymentResult::ChallengeRequired { .. } => Some(false),
                _ => None,
            };
            if let Some(declined) = declined {
                // The payment is decided: a failed record must not hide its outcome. The next
                // post reads the store again, and fails closed if it still cannot.
                let _ = guard.store.record_outcome(&subject, declined, now).await;
            }
        }
        // Still Pending (the processor asked to retry, or declined a card the terminal lets
        // the payer replace): the form is shown again.
        if page.session.state() == SessionState::Pending {
            page = self.with_order(page).await?;
        }
        Ok(CardPost {
            page,
            result: Ok(outcome.result),
            guard: guard_action,
        })
    }

    /// `page` with its session read again whole (items and charges), for a page that shows
    /// the form and the order again.
    async fn with_order(&self, mut page: HostedPage) -> Result<HostedPage, CheckoutError> {
        page.session = self.reload(page.session.id()).await?;
        Ok(page)
    }

    /// The session `id` with its merchant, for a payment step: SVC_002 when unknown, of the
    /// other `flow` (when given) or expired (after the expiry is written, which for a pending
    /// challenge cancels it at the processor first); SVC_005 when its terminal is deactivated
    /// and the session could still be paid.
    pub(super) async fn open_payable(
        &self,
        id: SessionId,
        flow: Option<SessionFlow>,
    ) -> Result<HostedPage, CheckoutError> {
        let read = self
            .ports
            .sessions
            .get_for_page(id)
            .await?
            .ok_or_else(|| CheckoutError::svc(SvcCode::Svc002))?;
        self.check_payable(read, flow).await
    }

    /// [`open_payable`](Self::open_payable)'s checks of a session and its terminal already
    /// read.
    async fn check_payable(
        &self,
        (session, terminal): (PaymentSession, Option<Terminal>),
        flow: Option<SessionFlow>,
    ) -> Result<HostedPage, CheckoutError> {
        if flow.is_some_and(|flow| !session.kind().is_flow(flow)) {
            return Err(CheckoutError::svc(SvcCode::Svc002));
        }
        let session = self.settle_expiry(session).await?;
        if session.state() == SessionState::Expired {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc002,
                "The payment session has expired.",
            ));
        }
        let payable = matches!(
            session.state(),
            SessionState::Pending | SessionState::ChallengeRequired
        );
        if payable && !terminal.as_ref().is_some_and(|t| t.active) {
            return Err(CheckoutError::svc_with(
                SvcCode::Svc005,
                "The merchant's terminal is not active; this payment cannot be made.",
            ));
        }
        Ok(HostedPage::of(session, terminal))
    }
}

/// The guard's decision for `subject` at `now` with `proof`, raising or lowering the
/// terminal's alert as its decline rate says. Any failure of the store is
/// [`CheckoutError::Unavailable`]: the post fails closed.
async fn screen(
    guard: &CardGuardSetup,
    subject: &GuardSubject,
    proof: &ProofCheck,
    now: OffsetDateTime,
) -> Result<GuardAction, CheckoutError> {
    let closed = |e: anyhow::Error| CheckoutError::Unavailable(e.context("the card-testing guard"));
    let counts = guard
        .store
        .counts(
            subject,
            &guard.policy.windows,
            &guard.policy.terminal_caps(),
            now,
        )
        .await
        .map_err(closed)?;
    let spiking = guard.policy.terminal_spiking(&counts);
    if spiking != counts.terminal_alerted {
        guard
            .store
            .set_alert(&subject.terminal, spiking, subject.session, now)
            .await
            .map_err(closed)?;
    }
    Ok(match guard.policy.decide(&counts) {
        Verdict::Allow => GuardAction::Allowed,
        Verdict::Refuse(rule) => GuardAction::Refused(rule),
        Verdict::Challenge(rule) => match proof {
            ProofCheck::Absent | ProofCheck::Expired => GuardAction::Challenged(rule),
            ProofCheck::Forged => GuardAction::Refused(GuardRule::Proof),
            ProofCheck::Solved { id, expires_at } => {
                if guard
                    .store
                    .spend_proof(id, *expires_at, now)
                    .await
                    .map_err(closed)?
                {
                    GuardAction::Passed(rule)
                } else {
                    // Replayed: spent already.
                    GuardAction::Refused(GuardRule::Proof)
                }
            }
        },
    })
}
