//! The merchant's capture and refunds over PostgreSQL: a capture is one guarded UPDATE; a
//! refund is reserved under a row lock of its session (`SELECT ... FOR UPDATE`) and settled by
//! a compare-and-set on its own state, which adds a confirmed amount to the session's refunded
//! amount in the same transaction (whose trigger writes the `payment.refunded` event).

use anyhow::Context;
use checkout_domain::ports::Reservation;
use checkout_domain::session::{Refund, RefundState, SessionState};
use checkout_domain::values::SessionId;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use rust_decimal::Decimal;
use time::OffsetDateTime;

use crate::models::RefundRow;
use crate::schema::{payment_refunds, payment_sessions};
use crate::store::PgStore;

/// Why a reservation inserted nothing.
enum Refused {
    Store(diesel::result::Error),
    Reservation(Reservation),
}

impl From<diesel::result::Error> for Refused {
    fn from(e: diesel::result::Error) -> Self {
        Refused::Store(e)
    }
}

/// The refund states that keep their amount reserved (`RefundState::reserves`).
fn reserving_states() -> Vec<&'static str> {
    RefundState::ALL
        .into_iter()
        .filter(|s| s.reserves())
        .map(RefundState::as_str)
        .collect()
}

impl PgStore {
    /// `SessionRepository::record_capture`.
    pub(crate) async fn capture_session(
        &self,
        id: SessionId,
        captured: Decimal,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let moved = diesel::update(
            payment_sessions::table
                .find(id.as_uuid())
                .filter(payment_sessions::state.eq(SessionState::ApprovedTransaction.code())),
        )
        .set((
            payment_sessions::state.eq(SessionState::Successful.code()),
            payment_sessions::captured_amount.eq(Some(captured)),
            payment_sessions::updated_at.eq(at),
        ))
        .execute(&mut conn)
        .await
        .with_context(|| format!("recording the capture of session {id}"))?;
        Ok(moved == 1)
    }

    /// `SessionRepository::reserve_refund`.
    pub(crate) async fn reserve(&self, refund: &Refund) -> anyhow::Result<Reservation> {
        let row = RefundRow::of(refund);
        let mut conn = self.conn().await?;
        let result = conn
            .transaction(async |conn| {
                let (state, amount, captured): (i16, Decimal, Option<Decimal>) =
                    payment_sessions::table
                        .find(row.session_id)
                        .select((
                            payment_sessions::state,
                            payment_sessions::amount,
                            payment_sessions::captured_amount,
                        ))
                        .for_update()
                        .first(conn)
                        .await?;
                let state = SessionState::from_code(state).unwrap_or(SessionState::Pending);
                if state != SessionState::Successful {
                    return Err(Refused::Reservation(Reservation::NotCaptured(state)));
                }
                let reserved: Option<Decimal> = payment_refunds::table
                    .filter(payment_refunds::session_id.eq(row.session_id))
                    .filter(payment_refunds::state.eq_any(reserving_states()))
                    .select(diesel::dsl::sum(payment_refunds::amount))
                    .first(conn)
                    .await?;
                let refundable = captured.unwrap_or(amount) - reserved.unwrap_or_default();
                if row.amount > refundable {
                    return Err(Refused::Reservation(Reservation::Exceeds { refundable }));
                }
                diesel::insert_into(payment_refunds::table)
                    .values(&row)
                    .execute(conn)
                    .await?;
                Ok(())
            })
            .await;
        match result {
            Ok(()) => Ok(Reservation::Reserved),
            Err(Refused::Reservation(r)) => Ok(r),
            Err(Refused::Store(e)) => Err(anyhow::Error::new(e).context(format!(
                "reserving refund {} of {}",
                refund.id, refund.session_id
            ))),
        }
    }

    /// `SessionRepository::settle_refund`.
    pub(crate) async fn settle(&self, refund: &Refund) -> anyhow::Result<bool> {
        let row = RefundRow::of(refund);
        let unsettled: Vec<&str> = RefundState::UNSETTLED
            .into_iter()
            .map(RefundState::as_str)
            .collect();
        let succeeded = refund.state == RefundState::Succeeded;
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let saved = diesel::update(
                payment_refunds::table
                    .find(row.id)
                    .filter(payment_refunds::state.eq_any(unsettled)),
            )
            .set((
                payment_refunds::state.eq(&row.state),
                payment_refunds::processor_reference.eq(&row.processor_reference),
                payment_refunds::svc_code.eq(&row.svc_code),
                payment_refunds::updated_at.eq(row.updated_at),
            ))
            .execute(conn)
            .await?;
            if saved == 1 && succeeded {
                diesel::update(payment_sessions::table.find(row.session_id))
                    .set((
                        payment_sessions::refunded_amount
                            .eq(payment_sessions::refunded_amount + row.amount),
                        payment_sessions::updated_at.eq(row.updated_at),
                    ))
                    .execute(conn)
                    .await?;
            }
            Ok::<_, diesel::result::Error>(saved == 1)
        })
        .await
        .with_context(|| format!("settling refund {}", refund.id))
    }

    /// `SessionRepository::refunds`.
    pub(crate) async fn refunds_of(&self, session: SessionId) -> anyhow::Result<Vec<Refund>> {
        let mut conn = self.conn().await?;
        let rows: Vec<RefundRow> = payment_refunds::table
            .filter(payment_refunds::session_id.eq(session.as_uuid()))
            .order((payment_refunds::created_at, payment_refunds::seq))
            .select(RefundRow::as_select())
            .load(&mut conn)
            .await
            .with_context(|| format!("reading the refunds of session {session}"))?;
        rows.into_iter().map(Refund::try_from).collect()
    }
}
