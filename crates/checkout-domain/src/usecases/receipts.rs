//! Use case: the receipt worker. It claims the due receipt mails, sends each once through the
//! mail server, and records what came of it: sent, retried later on the schedule, or failed
//! for good (a refusal, or the schedule ran out).

use std::sync::Arc;

use time::Duration;

use crate::ports::{Clock, ReceiptMailer, ReceiptOutbox};
use crate::receipts::{MailFailure, ReceiptRun};
use crate::webhooks::{NextStep, RetrySchedule};

/// How the receipt worker sends.
#[derive(Debug, Clone)]
pub struct ReceiptPolicy {
    /// The waits between sendings of one mail.
    pub schedule: RetrySchedule,
    /// The most mails one claim takes.
    pub batch: u32,
    /// How long a claimed mail is leased: longer than `batch` sendings may take (they run one
    /// after the other), so that no other worker takes a mail while its sending may still
    /// run.
    pub lease: Duration,
}

/// The receipt outbox and the mail server.
#[derive(Clone)]
pub struct Receipts {
    outbox: Arc<dyn ReceiptOutbox>,
    mailer: Arc<dyn ReceiptMailer>,
    clock: Arc<dyn Clock>,
    policy: ReceiptPolicy,
}

impl Receipts {
    /// The use case over its ports.
    pub fn new(
        outbox: Arc<dyn ReceiptOutbox>,
        mailer: Arc<dyn ReceiptMailer>,
        clock: Arc<dyn Clock>,
        policy: ReceiptPolicy,
    ) -> Self {
        Receipts {
            outbox,
            mailer,
            clock,
            policy,
        }
    }

    /// Claims the due mails (at most the batch) and sends each, one after the other.
    pub async fn send_due(&self) -> anyhow::Result<ReceiptRun> {
        let now = self.clock.now();
        let due = self
            .outbox
            .claim_due(now, now + self.policy.lease, self.policy.batch)
            .await?;
        let mut run = ReceiptRun::default();
        for mail in due {
            let result = self.mailer.send(&mail.receipt).await;
            let at = self.clock.now();
            let attempt = mail.attempts_before + 1;
            let (next, error) = match result {
                Ok(()) => (NextStep::Delivered, None),
                Err(MailFailure::Transient(e)) => (
                    self.policy.schedule.next(mail.id, attempt, false, at),
                    Some(e),
                ),
                Err(MailFailure::Permanent(e)) => (NextStep::GiveUp, Some(e)),
            };
            let changed = self
                .outbox
                .record_send(&mail, at, next, error.as_deref())
                .await?;
            match next {
                _ if !changed => run.stale += 1,
                NextStep::Delivered => run.sent += 1,
                NextStep::RetryAt(_) => run.retrying += 1,
                NextStep::GiveUp => run.failed += 1,
            }
        }
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;

    use async_trait::async_trait;
    use rust_decimal::Decimal;
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::card::CardBrand;
    use crate::receipts::{DueReceipt, QueuedReceipt, Receipt};
    use crate::values::{Culture, Currency, SessionId, TerminalNumber};

    const T0: OffsetDateTime = time::macros::datetime!(2026-11-28 12:00 UTC);

    /// A clock stopped at `T0`.
    struct Stopped;

    impl Clock for Stopped {
        fn now(&self) -> OffsetDateTime {
            T0
        }
    }

    /// An outbox of due mails that records what each sending came to; `lost` claims lose
    /// their lease before the result comes back.
    #[derive(Default)]
    struct Outbox {
        due: Mutex<Vec<DueReceipt>>,
        recorded: Mutex<Vec<(Uuid, NextStep, Option<String>)>>,
        lost: Vec<Uuid>,
    }

    #[async_trait]
    impl ReceiptOutbox for Outbox {
        async fn claim_due(
            &self,
            _now: OffsetDateTime,
            _lease_until: OffsetDateTime,
            limit: u32,
        ) -> anyhow::Result<Vec<DueReceipt>> {
            let mut due = self.due.lock().unwrap();
            let n = due.len().min(limit as usize);
            Ok(due.drain(..n).collect())
        }

        async fn record_send(
            &self,
            due: &DueReceipt,
            _at: OffsetDateTime,
            next: NextStep,
            error: Option<&str>,
        ) -> anyhow::Result<bool> {
            if self.lost.contains(&due.id) {
                return Ok(false);
            }
            self.recorded
                .lock()
                .unwrap()
                .push((due.id, next, error.map(str::to_owned)));
            Ok(true)
        }

        async fn list(
            &self,
            _terminal: Option<&TerminalNumber>,
            _limit: u32,
        ) -> anyhow::Result<Vec<QueuedReceipt>> {
            Ok(Vec::new())
        }
    }

    /// A mail server that answers each address as told: `ok@`, `busy@` (4xx), `no@` (5xx).
    struct Server;

    #[async_trait]
    impl ReceiptMailer for Server {
        async fn send(&self, receipt: &Receipt) -> Result<(), MailFailure> {
            match receipt.to.split('@').next() {
                Some("ok") => Ok(()),
                Some("busy") => Err(MailFailure::Transient("451 try later".into())),
                _ => Err(MailFailure::Permanent("550 no such user".into())),
            }
        }
    }

    fn due(to: &str, attempts_before: u32) -> DueReceipt {
        DueReceipt {
            id: Uuid::from_u128(
                to.bytes().map(u128::from).sum::<u128>() + u128::from(attempts_before),
            ),
            claim: Uuid::from_u128(7),
            attempts_before,
            receipt: Receipt {
                session_id: SessionId::from_uuid(Uuid::from_u128(1)),
                terminal: TerminalNumber::parse("T-1").unwrap(),
                to: to.to_owned(),
                culture: Culture::Es,
                merchant: "Shop".into(),
                description: None,
                amount: Decimal::ONE,
                currency: Currency::parse("USD").unwrap(),
                card_brand: CardBrand::Visa,
                card_last4: "4242".into(),
                internal_reference: "INT-1".into(),
                paid_at: T0,
            },
        }
    }

    #[tokio::test]
    async fn sent_retried_refused_and_lost_mails_are_recorded_as_such() {
        let schedule = RetrySchedule::new(vec![std::time::Duration::from_secs(60)], 1.0).unwrap();
        let lost = due("ok@lost.example", 0);
        let outbox = Arc::new(Outbox {
            due: Mutex::new(vec![
                due("ok@a.example", 0),
                due("busy@b.example", 0),
                due("busy@c.example", 1),
                due("no@d.example", 0),
                lost.clone(),
            ]),
            lost: vec![lost.id],
            ..Outbox::default()
        });
        let receipts = Receipts::new(
            outbox.clone(),
            Arc::new(Server),
            Arc::new(Stopped),
            ReceiptPolicy {
                schedule,
                batch: 10,
                lease: Duration::seconds(60),
            },
        );
        let run = receipts.send_due().await.unwrap();
        assert_eq!(
            run,
            ReceiptRun {
                sent: 1,
                retrying: 1,
                failed: 2,
                stale: 1
            }
        );
        let recorded = outbox.recorded.lock().unwrap().clone();
        assert_eq!(recorded[0].1, NextStep::Delivered);
        assert!(matches!(recorded[1].1, NextStep::RetryAt(t) if t > T0));
        assert_eq!(recorded[1].2.as_deref(), Some("451 try later"));
        // The schedule ran out after its one wait; a refusal is never retried.
        assert_eq!(recorded[2].1, NextStep::GiveUp);
        assert_eq!(recorded[3].1, NextStep::GiveUp);
        assert_eq!(recorded[3].2.as_deref(), Some("550 no such user"));
    }
}
