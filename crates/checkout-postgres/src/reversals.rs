//! The reversal ledger over PostgreSQL (`ReversalLedger`): captures and voids in
//! `hold_actions`, refunds in `payment_refunds`.
//!
//! - A refund is reserved under a row lock of its session (`SELECT ... FOR UPDATE`), so that
//!   racing refunds never reserve more than was captured; a merchant key is unique per session
//!   (`payment_refunds_key`), so racing requests with one key insert one row.
//! - A capture or void is one INSERT guarded by the session's state, under the same lock; the
//!   partial unique index `hold_actions_holding` lets one action hold the authorisation.
//! - Settling is a compare-and-set on the row's state, in the same transaction as the session
//!   change it makes (whose trigger writes the merchant's event); a refund's row is locked and
//!   its move checked by [`LedgerState::refund_can_become`], the one rule with a move out of
//!   Succeeded (a refund the processor failed later, taken out of the refunded amount).
//! - Claims for reconciliation lock the due rows `FOR UPDATE SKIP LOCKED` and lease them.

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::ports::{ActionBegun, Reservation, ReversalLedger, SessionMove};
use checkout_domain::session::{HoldAction, LedgerState, Refund, SessionState};
use checkout_domain::values::SessionId;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use rust_decimal::Decimal;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::models::{HoldActionRow, RefundRow};
use crate::schema::{hold_actions, payment_refunds, payment_sessions};
use crate::store::PgStore;

/// The stored names of the states in which a row reserves (money, or the authorisation).
fn reserving_states() -> Vec<&'static str> {
    LedgerState::ALL
        .into_iter()
        .filter(|s| s.reserves())
        .map(LedgerState::as_str)
        .collect()
}

/// The stored names of the states a row may still leave: those whose
/// [`can_become`](LedgerState::can_become) allows `next`.
fn states_that_can_become(next: LedgerState) -> Vec<&'static str> {
    LedgerState::ALL
        .into_iter()
        .filter(|s| s.can_become(next))
        .map(LedgerState::as_str)
        .collect()
}

/// The unsettled states, whose rows the sweep may claim.
fn unsettled_states() -> Vec<&'static str> {
    LedgerState::ALL
        .into_iter()
        .filter(|s| !s.is_settled())
        .map(LedgerState::as_str)
        .collect()
}

/// Claims the unsettled rows of ledger table `$table` (rows `$row`) due at `$now`, oldest due
/// first, at most `$limit`: locks them `FOR UPDATE SKIP LOCKED` (another claimer skips them),
/// sets their `next_check_at` to `$lease` and returns them so, in one transaction. A macro
/// because the two ledger tables are two diesel types with the same columns.
macro_rules! claim_due {
    ($conn:expr, $table:ident, $row:ty, $now:expr, $lease:expr, $limit:expr) => {
        $conn
            .transaction(async |conn| {
                let mut rows: Vec<$row> = $table::table
                    .filter($table::state.eq_any(unsettled_states()))
                    .filter($table::next_check_at.le($now))
                    .order($table::next_check_at)
                    .limit(i64::from($limit))
                    .select(<$row>::as_select())
                    .for_update()
                    .skip_locked()
                    .load(conn)
                    .await?;
                let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
                diesel::update($table::table.filter($table::id.eq_any(&ids)))
                    .set($table::next_check_at.eq($lease))
                    .execute(conn)
                    .await?;
                for row in &mut rows {
                    row.next_check_at = Some($lease);
                }
                Ok::<_, diesel::result::Error>(rows)
            })
            .await
    };
}

/// The session's state, read under a row lock.
async fn lock_session(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> QueryResult<(SessionState, Decimal, Option<Decimal>)> {
    let (state, amount, captured): (i16, Decimal, Option<Decimal>) = payment_sessions::table
        .find(id)
        .select((
            payment_sessions::state,
            payment_sessions::amount,
            payment_sessions::captured_amount,
        ))
        .for_update()
        .first(conn)
        .await?;
    let state = SessionState::from_code(state).unwrap_or(SessionState::Pending);
    Ok((state, amount, captured))
}

/// The refund of `session` under merchant `key`, if any.
async fn refund_by_key(
    conn: &mut AsyncPgConnection,
    session: Uuid,
    key: &str,
) -> QueryResult<Option<RefundRow>> {
    payment_refunds::table
        .filter(payment_refunds::session_id.eq(session))
        .filter(payment_refunds::idempotency_key.eq(key))
        .select(RefundRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// The action of `session` under merchant `key`, if any.
async fn action_by_key(
    conn: &mut AsyncPgConnection,
    session: Uuid,
    key: &str,
) -> QueryResult<Option<HoldActionRow>> {
    hold_actions::table
        .filter(hold_actions::session_id.eq(session))
        .filter(hold_actions::idempotency_key.eq(key))
        .select(HoldActionRow::as_select())
        .first(conn)
        .await
        .optional()
}

impl PgStore {
    /// `ReversalLedger::reserve_refund`, as rows.
    async fn reserve_row(&self, row: &RefundRow) -> anyhow::Result<Result<(), ReservedRow>> {
        let mut conn = self.conn().await?;
        let decided = conn
            .transaction(async |conn| {
                // The session's lock orders racing requests with one key too.
                let (state, amount, captured) = lock_session(conn, row.session_id).await?;
                if let Some(key) = &row.idempotency_key {
                    if let Some(stored) = refund_by_key(conn, row.session_id, key).await? {
                        return Ok(Err(ReservedRow::Existing(stored)));
                    }
                }
                if state != SessionState::Successful {
                    return Ok(Err(ReservedRow::Refused(Reservation::NotCaptured(state))));
                }
                let reserved: Option<Decimal> = payment_refunds::table
                    .filter(payment_refunds::session_id.eq(row.session_id))
                    .filter(payment_refunds::state.eq_any(reserving_states()))
                    .select(diesel::dsl::sum(payment_refunds::amount))
                    .first(conn)
                    .await?;
                let refundable = captured.unwrap_or(amount) - reserved.unwrap_or_default();
                if row.amount > refundable {
                    return Ok(Err(ReservedRow::Refused(Reservation::Exceeds {
                        refundable,
                    })));
                }
                diesel::insert_into(payment_refunds::table)
                    .values(row)
                    .execute(conn)
                    .await?;
                Ok::<_, diesel::result::Error>(Ok(()))
            })
            .await?;
        Ok(decided)
    }

    /// `ReversalLedger::begin_action`, as rows.
    async fn begin_row(&self, row: &HoldActionRow) -> anyhow::Result<Option<BegunRow>> {
        let mut conn = self.conn().await?;
        let decided = conn
            .transaction(async |conn| {
                let (state, _, _) = lock_session(conn, row.session_id).await?;
                if let Some(key) = &row.idempotency_key {
                    if let Some(stored) = action_by_key(conn, row.session_id, key).await? {
                        return Ok(Some(BegunRow::Existing(stored)));
                    }
                }
                let holder: Option<HoldActionRow> = hold_actions::table
                    .filter(hold_actions::session_id.eq(row.session_id))
                    .filter(hold_actions::state.eq_any(reserving_states()))
                    .select(HoldActionRow::as_select())
                    .first(conn)
                    .await
                    .optional()?;
                if let Some(holder) = holder {
                    return Ok(Some(BegunRow::Held(holder)));
                }
                if state != SessionState::ApprovedTransaction {
                    return Ok(Some(BegunRow::NotHeld(state)));
                }
                diesel::insert_into(hold_actions::table)
                    .values(row)
                    .execute(conn)
                    .await?;
                Ok::<_, diesel::result::Error>(None)
            })
            .await?;
        Ok(decided)
    }
}

/// Why a refund was not inserted, as rows.
enum ReservedRow {
    Existing(RefundRow),
    Refused(Reservation),
}

/// Why an action was not inserted, as rows.
enum BegunRow {
    Existing(HoldActionRow),
    Held(HoldActionRow),
    NotHeld(SessionState),
}

#[async_trait]
impl ReversalLedger for PgStore {
    async fn reserve_refund(&self, refund: &Refund) -> anyhow::Result<Reservation> {
        let context = || format!("reserving refund {} of {}", refund.id, refund.session_id);
        match self
            .reserve_row(&RefundRow::of(refund))
            .await
            .with_context(context)?
        {
            Ok(()) => Ok(Reservation::Reserved),
            Err(ReservedRow::Existing(row)) => Ok(Reservation::Existing(Refund::try_from(row)?)),
            Err(ReservedRow::Refused(r)) => Ok(r),
        }
    }

    async fn settle_refund(&self, refund: &Refund) -> anyhow::Result<bool> {
        let row = RefundRow::of(refund);
        let next = refund.state;
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let stored: Option<String> = payment_refunds::table
                .find(row.id)
                .select(payment_refunds::state)
                .for_update()
                .first(conn)
                .await
                .optional()?;
            let Some(was) = stored.as_deref().and_then(LedgerState::parse) else {
                return Ok(false);
            };
            if !was.refund_can_become(next) {
                return Ok(false);
            }
            // The session first, so that the refund's own trigger (payment.refund_failed)
            // writes the session as this transaction leaves it.
            let change = match (was, next) {
                (_, LedgerState::Succeeded) => Some(row.amount),
                (LedgerState::Succeeded, LedgerState::Failed) => Some(-row.amount),
                _ => None,
            };
            if let Some(change) = change {
                diesel::update(payment_sessions::table.find(row.session_id))
                    .set((
                        payment_sessions::refunded_amount
                            .eq(payment_sessions::refunded_amount + change),
                        payment_sessions::updated_at.eq(row.updated_at),
                    ))
                    .execute(conn)
                    .await?;
            }
            diesel::update(payment_refunds::table.find(row.id))
                .set((
                    payment_refunds::state.eq(&row.state),
                    payment_refunds::processor_reference.eq(&row.processor_reference),
                    payment_refunds::svc_code.eq(&row.svc_code),
                    payment_refunds::next_check_at.eq(row.next_check_at),
                    payment_refunds::updated_at.eq(row.updated_at),
                ))
                .execute(conn)
                .await?;
            Ok::<_, diesel::result::Error>(true)
        })
        .await
        .with_context(|| format!("settling refund {}", refund.id))
    }

    async fn refunds(&self, session: SessionId) -> anyhow::Result<Vec<Refund>> {
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

    async fn claim_due_refunds(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<Refund>> {
        let mut conn = self.conn().await?;
        let rows = claim_due!(conn, payment_refunds, RefundRow, now, lease_until, limit)
            .context("claiming the refunds due for reconciliation")?;
        rows.into_iter().map(Refund::try_from).collect()
    }

    async fn begin_action(&self, action: &HoldAction) -> anyhow::Result<ActionBegun> {
        let begun = self
            .begin_row(&HoldActionRow::of(action))
            .await
            .with_context(|| format!("recording {:?} {}", action.kind, action.id))?;
        Ok(match begun {
            None => ActionBegun::Begun,
            Some(BegunRow::Existing(row)) => ActionBegun::Existing(HoldAction::try_from(row)?),
            Some(BegunRow::Held(row)) => ActionBegun::Held(HoldAction::try_from(row)?),
            Some(BegunRow::NotHeld(state)) => ActionBegun::NotHeld(state),
        })
    }

    async fn settle_action(
        &self,
        action: &HoldAction,
        session_move: Option<SessionMove>,
    ) -> anyhow::Result<bool> {
        let row = HoldActionRow::of(action);
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let saved = diesel::update(
                hold_actions::table
                    .find(row.id)
                    .filter(hold_actions::state.eq_any(states_that_can_become(action.state))),
            )
            .set((
                hold_actions::state.eq(&row.state),
                hold_actions::captured_amount.eq(row.captured_amount),
                hold_actions::svc_code.eq(&row.svc_code),
                hold_actions::next_check_at.eq(row.next_check_at),
                hold_actions::updated_at.eq(row.updated_at),
            ))
            .execute(conn)
            .await?;
            if let (1, Some(SessionMove { from, to })) = (saved, session_move) {
                let session = payment_sessions::table
                    .find(row.session_id)
                    .filter(payment_sessions::state.eq(from.code()));
                match row.captured_amount {
                    Some(captured) => {
                        diesel::update(session)
                            .set((
                                payment_sessions::state.eq(to.code()),
                                payment_sessions::captured_amount.eq(Some(captured)),
                                payment_sessions::updated_at.eq(row.updated_at),
                            ))
                            .execute(conn)
                            .await?
                    }
                    None => {
                        diesel::update(session)
                            .set((
                                payment_sessions::state.eq(to.code()),
                                payment_sessions::updated_at.eq(row.updated_at),
                            ))
                            .execute(conn)
                            .await?
                    }
                };
            }
            Ok::<_, diesel::result::Error>(saved == 1)
        })
        .await
        .with_context(|| format!("settling {:?} {}", action.kind, action.id))
    }

    async fn actions(&self, session: SessionId) -> anyhow::Result<Vec<HoldAction>> {
        let mut conn = self.conn().await?;
        let rows: Vec<HoldActionRow> = hold_actions::table
            .filter(hold_actions::session_id.eq(session.as_uuid()))
            .order((hold_actions::created_at, hold_actions::seq))
            .select(HoldActionRow::as_select())
            .load(&mut conn)
            .await
            .with_context(|| format!("reading the captures and voids of session {session}"))?;
        rows.into_iter().map(HoldAction::try_from).collect()
    }

    async fn claim_due_actions(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<HoldAction>> {
        let mut conn = self.conn().await?;
        let rows = claim_due!(conn, hold_actions, HoldActionRow, now, lease_until, limit)
            .context("claiming the captures and voids due for reconciliation")?;
        rows.into_iter().map(HoldAction::try_from).collect()
    }
}
