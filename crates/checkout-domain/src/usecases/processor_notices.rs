//! Use case: the processor's own news comes in. A verified event names an object (an
//! authorisation, a refund, a dispute); the service reads that object from the processor and
//! records what it says through the same compare-and-set the request paths and the
//! reconciliation sweep use. So an event is only ever a reason to look: a duplicate is a
//! no-op, a late or reordered one finds the ledger already ahead of it, and a forged one never
//! passes the adapter's signature check.

use super::Checkout;
use crate::error::CheckoutError;
use crate::ports::{
    ActionBegun, NoticeRejected, NoticeSubject, ProcessorError, ProcessorNotice, ProcessorOutcome,
};
use crate::session::{
    AttemptState, Dispute, HoldAction, HoldActionKind, LedgerState, PaymentSession, SessionState,
};
use crate::values::{AttemptId, RefundId};

/// How long the id of an absorbed processor event is kept to refuse its redeliveries: ten
/// times the 3 days for which Stripe redelivers an event.
pub const NOTICE_MEMORY: time::Duration = time::Duration::days(30);

/// What absorbing one processor event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeOutcome {
    /// The object was read from the processor and the ledger brought up to it (which may
    /// have changed nothing: the ledger already knew).
    Applied,
    /// The event id was absorbed before: nothing done.
    Duplicate,
    /// The event names an object the service has no row for (another integration's payment
    /// on the same processor account): logged, nothing done.
    Unknown,
    /// An event type the service does not follow: nothing done.
    Ignored,
}

impl NoticeOutcome {
    /// The name the route answers and the log and metric use.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeOutcome::Applied => "applied",
            NoticeOutcome::Duplicate => "duplicate",
            NoticeOutcome::Unknown => "unknown_object",
            NoticeOutcome::Ignored => "ignored",
        }
    }
}

impl Checkout {
    /// The request header the processor signs its events in.
    pub fn processor_signature_header(&self) -> &'static str {
        self.ports.processor_events.signature_header()
    }

    /// Verifies a processor event as received (`payload`, exactly the bytes) and reads which
    /// object it is about; nothing is changed. A request without a signature is refused as
    /// unsigned whatever the configuration.
    pub fn read_processor_event(
        &self,
        payload: &[u8],
        signature: Option<&str>,
    ) -> Result<ProcessorNotice, NoticeRejected> {
        if signature.is_none() {
            return Err(NoticeRejected::Unsigned);
        }
        self.ports
            .processor_events
            .read(payload, signature, self.now())
    }

    /// Forgets the ids of processor events absorbed more than [`NOTICE_MEMORY`] ago; returns
    /// how many. A processor stops redelivering an event long before (Stripe: 3 days).
    pub async fn forget_processor_notices(&self) -> Result<u64, CheckoutError> {
        let before = self.now() - NOTICE_MEMORY;
        Ok(self.ports.notices.forget_notices_before(before).await?)
    }

    /// Absorbs a verified processor event once: reads the object it names from the processor
    /// and records what the processor holds. The event id is recorded only after the ledger
    /// was brought up to date, so an event whose absorption failed (the processor or the store
    /// unavailable: an error, and the processor delivers it again) is absorbed on its next
    /// delivery.
    pub async fn absorb_processor_event(
        &self,
        notice: &ProcessorNotice,
    ) -> Result<NoticeOutcome, CheckoutError> {
        if self.ports.notices.notice_seen(&notice.id).await? {
            return Ok(NoticeOutcome::Duplicate);
        }
        let outcome = match &notice.subject {
            NoticeSubject::Payment { reference, attempt } => {
                self.payment_notice(reference, *attempt).await?
            }
            NoticeSubject::Refund { reference, refund } => {
                self.refund_notice(reference, *refund).await?
            }
            NoticeSubject::Dispute { reference } => self.dispute_notice(reference).await?,
            NoticeSubject::Other => NoticeOutcome::Ignored,
        };
        self.ports
            .notices
            .record_notice(&notice.id, self.now())
            .await?;
        Ok(outcome)
    }

    /// An authorisation changed at the processor: an attempt still unresolved is resolved
    /// (read, and its answer recorded), and an authorisation still held is checked for an
    /// expiry.
    async fn payment_notice(
        &self,
        reference: &str,
        attempt: Option<AttemptId>,
    ) -> Result<NoticeOutcome, CheckoutError> {
        let mut found = self.ports.notices.attempt_by_reference(reference).await?;
        if found.is_none() {
            if let Some(id) = attempt {
                found = self.ports.attempts.attempt(id).await?;
            }
        }
        let Some(attempt) = found else {
            return Ok(NoticeOutcome::Unknown);
        };
        if !attempt.state.is_final() {
            // As the sweep would, only now: read it by its reference, or, when its answer
            // (and so its reference) was lost, replay it with its own key — but, as the sweep,
            // never past the processor's key lifetime, where a replay could charge anew: such
            // an attempt stays left for review.
            let key_expired = attempt.processor_reference.is_none()
                && self.now() - attempt.created_at > self.policy.reconcile.give_up_after;
            if !key_expired {
                self.resolve(&attempt).await?;
            }
            return Ok(NoticeOutcome::Applied);
        }
        let session = self.load(attempt.session_id).await?;
        if attempt.state == AttemptState::Authorized
            && session.state() == SessionState::ApprovedTransaction
            && session.current_attempt() == Some(attempt.id)
        {
            self.check_hold(&session).await?;
        }
        Ok(NoticeOutcome::Applied)
    }

    /// Checks whether the processor released the held authorisation of `session` on its own
    /// (it expired uncaptured); if so, records it as the ledger row of an expiry, which moves
    /// the session ApprovedTransaction → Expired (and announces
    /// `payment.authorization_expired`). A capture or void that holds the authorisation is
    /// left to settle first.
    pub(super) async fn check_hold(&self, session: &PaymentSession) -> Result<(), CheckoutError> {
        let (_, reference) = self.processor_reference(session).await?;
        match self.ports.processor.retrieve(&reference).await {
            Ok(ProcessorOutcome::Canceled { .. }) => {}
            Ok(_) | Err(ProcessorError::Controlled(_)) => return Ok(()),
            Err(e @ ProcessorError::Communication(_)) => return Err(anyhow::Error::new(e).into()),
        }
        let now = self.now();
        let expiry = HoldAction {
            id: self.ports.ids.action_id(),
            session_id: session.id(),
            kind: HoldActionKind::Expiry,
            amount: session.amount().value(),
            state: LedgerState::Sent,
            captured: None,
            svc_code: None,
            key: None,
            next_check_at: Some(now + self.policy.reconcile.first_check_after),
            created_at: now,
            updated_at: now,
        };
        match self.ports.reversals.begin_action(&expiry).await? {
            ActionBegun::Begun => {
                self.drive_action(session, expiry).await?;
            }
            // Another row holds the authorisation (it settles it), or the session moved on.
            ActionBegun::Existing(_) | ActionBegun::Held(_) | ActionBegun::NotHeld(_) => {}
        }
        Ok(())
    }

    /// A refund changed at the processor: read it and record what it says; a refund the
    /// processor failed after confirming it leaves the refunded amount and announces
    /// `payment.refund_failed`.
    async fn refund_notice(
        &self,
        reference: &str,
        id: Option<RefundId>,
    ) -> Result<NoticeOutcome, CheckoutError> {
        let Some(mut refund) = self.ports.notices.find_refund(id, reference).await? else {
            return Ok(NoticeOutcome::Unknown);
        };
        let session = self.load(refund.session_id).await?;
        if refund.state == LedgerState::Failed {
            return Ok(NoticeOutcome::Applied);
        }
        // Read, never replay: the event told the service the refund's reference. A
        // Succeeded refund is read too: the processor may have failed it since, the one move
        // a settled refund can still make (`LedgerState::refund_can_become`).
        refund.processor_reference = Some(reference.to_owned());
        self.drive_refund(&session, refund, false).await?;
        Ok(NoticeOutcome::Applied)
    }

    /// A dispute opened, moved or closed: read it and record it (moving only forward).
    async fn dispute_notice(&self, reference: &str) -> Result<NoticeOutcome, CheckoutError> {
        let report = match self.ports.processor.dispute(reference).await {
            Ok(report) => report,
            // The processor has no such dispute for this account: nothing to record.
            Err(ProcessorError::Controlled(_)) => return Ok(NoticeOutcome::Unknown),
            Err(e @ ProcessorError::Communication(_)) => return Err(anyhow::Error::new(e).into()),
        };
        let Some(attempt) = self
            .ports
            .notices
            .attempt_by_reference(&report.payment_reference)
            .await?
        else {
            return Ok(NoticeOutcome::Unknown);
        };
        let now = self.now();
        let dispute = Dispute {
            reference: report.reference,
            session_id: attempt.session_id,
            amount: report.amount,
            reason: report.reason,
            status: report.status,
            opened_at: now,
            updated_at: now,
        };
        // Opened, moved, or unchanged (a late event): the ledger holds the processor's word.
        self.ports.disputes.record_dispute(&dispute).await?;
        Ok(NoticeOutcome::Applied)
    }
}
