//! The processor's events over PostgreSQL: `processor_notices` keeps each absorbed event id
//! (`NoticeStore`), `payment_disputes` the disputes (`DisputeLedger`), and the lookups by the
//! processor references the events carry use the partial indexes of the migration
//! `2026-11-28-000003_processor_events`.
//!
//! - A dispute is inserted `ON CONFLICT DO NOTHING` (of racing first records one inserts),
//!   else moved by an UPDATE guarded by the statuses that
//!   [can become](DisputeStatus::can_become) the new one: a closed dispute is never changed.
//! - The triggers of the migration write `payment.dispute_opened` and
//!   `payment.dispute_closed` in the same transaction as the row's change.

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::ports::{DisputeLedger, DisputeRecorded, NoticeStore};
use checkout_domain::session::{Dispute, DisputeStatus, PaymentAttempt, PaymentSession, Refund};
use checkout_domain::values::{RefundId, SessionId};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::models::{AttemptRow, DisputeRow, RefundRow};
use crate::schema::{payment_attempts, payment_disputes, payment_refunds, processor_notices};
use crate::store::PgStore;

/// The stored statuses that may become `next`.
fn statuses_that_can_become(next: DisputeStatus) -> Vec<&'static str> {
    DisputeStatus::ALL
        .into_iter()
        .filter(|s| s.can_become(next))
        .map(DisputeStatus::as_str)
        .collect()
}

/// The dispute rows of the sessions `ids`, by session, oldest first.
async fn dispute_rows(conn: &AsyncPgConnection, ids: &[Uuid]) -> QueryResult<Vec<DisputeRow>> {
    let mut c = conn;
    payment_disputes::table
        .filter(payment_disputes::session_id.eq_any(ids))
        .order((
            payment_disputes::session_id,
            payment_disputes::opened_at,
            payment_disputes::seq,
        ))
        .select(DisputeRow::as_select())
        .load(&mut c)
        .await
}

/// Fills [`PaymentSession::disputes`] of every captured session in `sessions` (only a
/// captured payment can be disputed), with one statement.
pub(crate) async fn fill_disputes<'a>(
    conn: &AsyncPgConnection,
    sessions: impl IntoIterator<Item = &'a mut PaymentSession>,
) -> anyhow::Result<()> {
    let mut captured: Vec<&mut PaymentSession> = sessions
        .into_iter()
        .filter(|s| s.state() == checkout_domain::session::SessionState::Successful)
        .collect();
    if captured.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = captured.iter().map(|s| s.id().as_uuid()).collect();
    let rows = dispute_rows(conn, &ids)
        .await
        .context("reading the disputes of sessions")?;
    for row in rows {
        let dispute = Dispute::try_from(row)?;
        for session in captured.iter_mut().filter(|s| s.id() == dispute.session_id) {
            session.attach_dispute(dispute.clone());
        }
    }
    Ok(())
}

#[async_trait]
impl NoticeStore for PgStore {
    async fn notice_seen(&self, id: &str) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let found: Option<String> = processor_notices::table
            .find(id)
            .select(processor_notices::id)
            .first(&mut conn)
            .await
            .optional()
            .context("reading an absorbed processor event")?;
        Ok(found.is_some())
    }

    async fn record_notice(&self, id: &str, at: OffsetDateTime) -> anyhow::Result<()> {
        let mut conn = self.conn().await?;
        diesel::insert_into(processor_notices::table)
            .values((
                processor_notices::id.eq(id),
                processor_notices::absorbed_at.eq(at),
            ))
            .on_conflict_do_nothing()
            .execute(&mut conn)
            .await
            .context("recording an absorbed processor event")?;
        Ok(())
    }

    async fn forget_notices_before(&self, before: OffsetDateTime) -> anyhow::Result<u64> {
        let mut conn = self.conn().await?;
        let forgotten = diesel::delete(
            processor_notices::table.filter(processor_notices::absorbed_at.lt(before)),
        )
        .execute(&mut conn)
        .await
        .context("forgetting old processor events")?;
        Ok(u64::try_from(forgotten).unwrap_or(u64::MAX))
    }

    async fn attempt_by_reference(
        &self,
        reference: &str,
    ) -> anyhow::Result<Option<PaymentAttempt>> {
        let mut conn = self.conn().await?;
        let row: Option<AttemptRow> = payment_attempts::table
            .filter(payment_attempts::processor_reference.eq(reference))
            .select(AttemptRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .context("finding an attempt by its processor reference")?;
        row.map(PaymentAttempt::try_from).transpose()
    }

    async fn find_refund(
        &self,
        id: Option<RefundId>,
        reference: &str,
    ) -> anyhow::Result<Option<Refund>> {
        let mut conn = self.conn().await?;
        let by_id = match id {
            Some(id) => payment_refunds::table
                .find(id.as_uuid())
                .select(RefundRow::as_select())
                .first(&mut conn)
                .await
                .optional()
                .context("finding a refund by its id")?,
            None => None,
        };
        let row = match by_id {
            Some(row) => Some(row),
            None => payment_refunds::table
                .filter(payment_refunds::processor_reference.eq(reference))
                .select(RefundRow::as_select())
                .first(&mut conn)
                .await
                .optional()
                .context("finding a refund by its processor reference")?,
        };
        row.map(Refund::try_from).transpose()
    }
}

#[async_trait]
impl DisputeLedger for PgStore {
    async fn record_dispute(&self, dispute: &Dispute) -> anyhow::Result<DisputeRecorded> {
        let row = DisputeRow::of(dispute);
        let mut conn = self.conn().await?;
        let inserted = diesel::insert_into(payment_disputes::table)
            .values(&row)
            .on_conflict_do_nothing()
            .execute(&mut conn)
            .await
            .with_context(|| format!("recording dispute {}", dispute.reference))?;
        if inserted == 1 {
            return Ok(DisputeRecorded::Opened);
        }
        let moved = diesel::update(
            payment_disputes::table
                .find(&row.reference)
                .filter(payment_disputes::status.eq_any(statuses_that_can_become(dispute.status))),
        )
        .set((
            payment_disputes::status.eq(&row.status),
            payment_disputes::updated_at.eq(row.updated_at),
        ))
        .execute(&mut conn)
        .await
        .with_context(|| format!("moving dispute {}", dispute.reference))?;
        Ok(if moved == 1 {
            DisputeRecorded::Moved
        } else {
            DisputeRecorded::Unchanged
        })
    }

    async fn disputes(&self, session: SessionId) -> anyhow::Result<Vec<Dispute>> {
        let conn = self.conn().await?;
        let rows = dispute_rows(&conn, &[session.as_uuid()])
            .await
            .with_context(|| format!("reading the disputes of session {session}"))?;
        rows.into_iter().map(Dispute::try_from).collect()
    }
}
