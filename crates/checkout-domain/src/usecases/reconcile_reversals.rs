//! Settling captures, voids and refunds whose processor answer was lost or is not final: the
//! request path asks once (a refund twice), and the reconciliation sweep asks again later,
//! always about the same row with the row's own processor key. A refund whose processor
//! reference is known is read (a retrieve); one without is replayed with its key, but only
//! within the processor's key lifetime: after it a replay could refund anew, so the refund is
//! left for review instead.

use super::{Checkout, ReconcileReport};
use crate::error::{CheckoutError, SvcCode};
use crate::ports::{ProcessorError, RefundOutcome, RefundRequest};
use crate::session::{LedgerState, PaymentSession, Refund};
use crate::values::Amount;

impl Checkout {
    /// Asks the processor about an unsettled `refund` of `session` and records the answer;
    /// with `retry`, a lost answer is asked once more at once. Returns the refund as stored
    /// afterwards.
    pub(super) async fn drive_refund(
        &self,
        session: &PaymentSession,
        mut refund: Refund,
        retry: bool,
    ) -> Result<Refund, CheckoutError> {
        let mut answer = self.ask_about_refund(session, &refund).await?;
        if retry && matches!(answer, Err(ProcessorError::Communication(_))) {
            // The same request again, with the same key: the processor answers what it did.
            answer = self.ask_about_refund(session, &refund).await?;
        }
        let (state, reference) = match answer {
            Ok(RefundOutcome::Succeeded { refund_reference }) => {
                (LedgerState::Succeeded, Some(refund_reference))
            }
            Ok(RefundOutcome::Pending { refund_reference }) => {
                (LedgerState::Unknown, Some(refund_reference))
            }
            Ok(RefundOutcome::Failed {
                refund_reference, ..
            }) => (LedgerState::Failed, refund_reference),
            // A refusal of the refund request itself; a status read that is refused tells
            // nothing about the refund.
            Err(ProcessorError::Controlled(_)) if refund.processor_reference.is_none() => {
                (LedgerState::Failed, None)
            }
            Err(_) => (LedgerState::Unknown, None),
        };
        let now = self.now();
        refund.state = state;
        refund.processor_reference = reference.or(refund.processor_reference);
        refund.svc_code = (state != LedgerState::Succeeded).then_some(SvcCode::Svc009);
        refund.updated_at = now;
        refund.next_check_at =
            (!state.is_settled()).then(|| now + self.ledger_wait(refund.created_at));
        if self.ports.reversals.settle_refund(&refund).await? {
            return Ok(refund);
        }
        // Settled meanwhile by another request or the sweep: its word stands.
        let stored = self.ports.reversals.refunds(session.id()).await?;
        stored
            .into_iter()
            .find(|r| r.id == refund.id)
            .ok_or_else(|| anyhow::anyhow!("refund {} vanished", refund.id).into())
    }

    /// One question to the processor about `refund`: a read when its reference is known,
    /// else the refund request again with its own key.
    async fn ask_about_refund(
        &self,
        session: &PaymentSession,
        refund: &Refund,
    ) -> Result<Result<RefundOutcome, ProcessorError>, CheckoutError> {
        if let Some(reference) = &refund.processor_reference {
            return Ok(self.ports.processor.refund_status(reference).await);
        }
        let (_, payment_reference) = self.processor_reference(session).await?;
        let amount = Amount::new(refund.amount, session.amount().currency())
            .map_err(|e| anyhow::anyhow!("refund {}: {e:?}", refund.id))?;
        let request = RefundRequest {
            refund: refund.id,
            processor_reference: &payment_reference,
            amount,
        };
        Ok(self.ports.processor.refund(request).await)
    }

    /// The sweep's share for the reversal ledger: claims the due unsettled captures, voids
    /// and refunds (each reserved so another instance's sweep skips it), asks the processor
    /// about each once, and records the answer into `report`.
    pub(super) async fn reconcile_reversals(
        &self,
        report: &mut ReconcileReport,
    ) -> Result<(), CheckoutError> {
        let now = self.now();
        let policy = self.policy.reconcile;
        let lease_until = now + policy.lease;
        let actions = self
            .ports
            .reversals
            .claim_due_actions(now, lease_until, policy.batch)
            .await?;
        for action in actions {
            report.reversals_examined += 1;
            // One row that cannot be asked about never stops the others: it is counted, and
            // asked about again once its lease is over.
            let asked = async {
                let session = self.load(action.session_id).await?;
                self.drive_action(&session, action).await
            };
            match asked.await {
                Ok(after) => report.count_reversal(after.state),
                Err(e) => report.reversal_failed(e),
            }
        }
        let refunds = self
            .ports
            .reversals
            .claim_due_refunds(now, lease_until, policy.batch)
            .await?;
        for mut refund in refunds {
            report.reversals_examined += 1;
            if refund.processor_reference.is_none()
                && now - refund.created_at > policy.give_up_after
            {
                // The processor may have forgotten the key: a replay could refund anew.
                refund.next_check_at = None;
                refund.updated_at = now;
                self.ports.reversals.settle_refund(&refund).await?;
                report.reversals_given_up += 1;
                continue;
            }
            let asked = async {
                let session = self.load(refund.session_id).await?;
                self.drive_refund(&session, refund, false).await
            };
            match asked.await {
                Ok(after) => report.count_reversal(after.state),
                Err(e) => report.reversal_failed(e),
            }
        }
        Ok(())
    }
}

impl ReconcileReport {
    /// Counts a reversal the sweep could not ask about (the store or the session failed), and
    /// keeps the first such error for the log.
    fn reversal_failed(&mut self, error: CheckoutError) {
        self.reversals_failed += 1;
        if self.first_reversal_error.is_none() {
            self.first_reversal_error = Some(error.to_string());
        }
    }

    /// Counts a reversal asked about by the sweep, by the state it was left in.
    fn count_reversal(&mut self, state: LedgerState) {
        if state.is_settled() {
            self.reversals_settled += 1;
        } else {
            self.reversals_rescheduled += 1;
        }
    }
}
