//! Refunds left for review, for the operator: reconciliation gives up a refund whose
//! processor answer was lost when the processor's idempotency key lifetime passed before it
//! learnt the refund's processor reference (a replay then could refund anew). Such a refund
//! stays unsettled (its amount reserved) with no next check. The operator lists them and, once
//! they found the refund at the processor, puts one back into reconciliation with its processor
//! reference, so that the sweep reads it there; nothing here marks money as moved.

use anyhow::Context;
use checkout_domain::session::Refund;
use checkout_domain::values::{RefundId, TerminalNumber};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

use crate::models::RefundRow;
use crate::schema::{payment_refunds, payment_sessions};
use crate::store::PgStore;

/// A refund left for review, with what the operator needs to find it at the processor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundForReview {
    /// The refund (its id is its processor idempotency key).
    pub refund: Refund,
    /// The terminal of its session.
    pub terminal: TerminalNumber,
    /// The currency of its amount.
    pub currency: String,
}

/// What putting a refund back into reconciliation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recheck {
    /// It is due for the next sweep, which reads it at the processor.
    Queued,
    /// No refund with that id is left for review (unknown, settled, or still being checked).
    NotForReview,
}

/// Unsettled refunds with no next check: the ones reconciliation left for review.
fn for_review() -> diesel::dsl::And<
    diesel::dsl::EqAny<payment_refunds::state, [&'static str; 2]>,
    diesel::dsl::IsNull<payment_refunds::next_check_at>,
> {
    payment_refunds::state
        .eq_any(["sent", "unknown"])
        .and(payment_refunds::next_check_at.is_null())
}

impl PgStore {
    /// The refunds left for review, of `terminal` when given, oldest first, at most `limit`.
    pub async fn refunds_for_review(
        &self,
        terminal: Option<&TerminalNumber>,
        limit: i64,
    ) -> anyhow::Result<Vec<RefundForReview>> {
        let mut conn = self.conn().await?;
        let mut query = payment_refunds::table
            .inner_join(payment_sessions::table)
            .filter(for_review())
            .order((payment_refunds::created_at, payment_refunds::seq))
            .limit(limit)
            .select((
                RefundRow::as_select(),
                payment_sessions::terminal_number,
                payment_sessions::currency,
            ))
            .into_boxed();
        if let Some(terminal) = terminal {
            query = query.filter(payment_sessions::terminal_number.eq(terminal.as_str()));
        }
        let rows: Vec<(RefundRow, String, String)> = query
            .load(&mut conn)
            .await
            .context("listing the refunds left for review")?;
        rows.into_iter()
            .map(|(row, terminal, currency)| {
                Ok(RefundForReview {
                    refund: Refund::try_from(row)?,
                    terminal: TerminalNumber::parse(&terminal)
                        .map_err(|e| anyhow::anyhow!("stored terminal number {e}"))?,
                    currency,
                })
            })
            .collect()
    }

    /// Puts refund `id`, left for review, back into reconciliation at `now`: due at once, with
    /// `processor_reference` recorded (the refund as the operator found it at the processor)
    /// so that the sweep reads it rather than replaying it. Changes nothing unless the refund
    /// is left for review and has no processor reference yet.
    pub async fn recheck_refund(
        &self,
        id: RefundId,
        processor_reference: &str,
        now: OffsetDateTime,
    ) -> anyhow::Result<Recheck> {
        let mut conn = self.conn().await?;
        let changed = diesel::update(
            payment_refunds::table
                .find(id.as_uuid())
                .filter(for_review())
                .filter(payment_refunds::processor_reference.is_null()),
        )
        .set((
            payment_refunds::processor_reference.eq(processor_reference),
            payment_refunds::next_check_at.eq(now),
        ))
        .execute(&mut conn)
        .await
        .context("putting a refund back into reconciliation")?;
        Ok(if changed == 1 {
            Recheck::Queued
        } else {
            Recheck::NotForReview
        })
    }
}
