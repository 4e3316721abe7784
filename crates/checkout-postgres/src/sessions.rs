//! `SessionRepository` over PostgreSQL: sessions with their items and charges, and payment
//! attempts. Every state change is a compare-and-set in SQL (`... WHERE state = from`).

use anyhow::Context;
use async_trait::async_trait;
use checkout_domain::ports::{InsertError, SessionRepository};
use checkout_domain::session::{PaymentAttempt, PaymentSession, SessionState};
use checkout_domain::values::{MerchantReference, SessionId, TerminalNumber};
use diesel::dsl::sql;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{self, Array, BigInt, Bool, Integer, Nullable, Numeric, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use rust_decimal::Decimal;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::models::{
    charge_rows, item_rows, session_from_rows, AttemptRow, ChargeRow, ItemRow, NewAttemptRow,
    NewSessionRow, SessionRow,
};
use crate::schema::{payment_attempts, payment_sessions, session_charges, session_items};
use crate::store::{is_unique_violation, PgStore};

/// The partial unique index that makes a merchant reference unique per terminal among the
/// sessions holding it.
pub(crate) const REFERENCE_INDEX: &str = "payment_sessions_reference_held";

/// The sessions that hold their reference (`SessionState::holds_reference`: all but Expired),
/// written as a literal so that the planner can use the partial index of the same predicate.
pub(crate) const HOLDS_REFERENCE_SQL: &str = "payment_sessions.state <> 6";

/// Pending sessions, as a literal so that the planner can use the partial expiry index.
pub(crate) const PENDING_SQL: &str = "payment_sessions.state = 0";

/// Sessions in Processing, as a literal so that the planner can use the partial index of
/// the same predicate.
pub(crate) const PROCESSING_SQL: &str = "payment_sessions.state = 4";

/// Loads the items and charges of `id`, in order, in one pipelined round trip.
async fn children(
    conn: &AsyncPgConnection,
    id: Uuid,
) -> QueryResult<(Vec<ItemRow>, Vec<ChargeRow>)> {
    let items = async {
        let mut c = conn;
        session_items::table
            .filter(session_items::session_id.eq(id))
            .order(session_items::position)
            .select(ItemRow::as_select())
            .load(&mut c)
            .await
    };
    let charges = async {
        let mut c = conn;
        session_charges::table
            .filter(session_charges::session_id.eq(id))
            .order(session_charges::position)
            .select(ChargeRow::as_select())
            .load(&mut c)
            .await
    };
    tokio::try_join!(items, charges)
}

/// Every item of one session in one statement whose text does not depend on how many there
/// are: `INSERT INTO session_items (...) SELECT $1, u.* FROM unnest($2, ..., $6) AS u(...)`,
/// one array per column. Its static query id lets diesel cache it as a prepared statement;
/// `sql_query` is never cached, and a multi-row `VALUES` list changes with the row count.
struct InsertItems<'a> {
    session_id: Uuid,
    positions: Vec<i32>,
    codes: Vec<Option<&'a str>>,
    quantities: Vec<i64>,
    descriptions: Vec<Option<&'a str>>,
    amounts: Vec<Decimal>,
}

/// Every additional charge of one session in one cached statement, like [`InsertItems`].
struct InsertCharges<'a> {
    session_id: Uuid,
    positions: Vec<i32>,
    names: Vec<Option<&'a str>>,
    amounts: Vec<Decimal>,
}

/// The static query ids of [`InsertItems`] and [`InsertCharges`] (their SQL never changes).
struct InsertItemsId;
struct InsertChargesId;

impl QueryId for InsertItems<'_> {
    type QueryId = InsertItemsId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryId for InsertCharges<'_> {
    type QueryId = InsertChargesId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Pg> for InsertItems<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            "INSERT INTO session_items \
             (session_id, position, item_code, quantity, description, amount) SELECT ",
        );
        out.push_bind_param::<sql_types::Uuid, _>(&self.session_id)?;
        out.push_sql(", u.* FROM unnest(");
        out.push_bind_param::<Array<Integer>, _>(&self.positions)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.codes)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.quantities)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.descriptions)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Numeric>, _>(&self.amounts)?;
        out.push_sql(") AS u (position, item_code, quantity, description, amount)");
        Ok(())
    }
}

impl QueryFragment<Pg> for InsertCharges<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("INSERT INTO session_charges (session_id, position, name, amount) SELECT ");
        out.push_bind_param::<sql_types::Uuid, _>(&self.session_id)?;
        out.push_sql(", u.* FROM unnest(");
        out.push_bind_param::<Array<Integer>, _>(&self.positions)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.names)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Numeric>, _>(&self.amounts)?;
        out.push_sql(") AS u (position, name, amount)");
        Ok(())
    }
}

/// Inserts the items of session `id` with one cached statement ([`InsertItems`]).
async fn insert_items(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    items: &[ItemRow],
) -> QueryResult<()> {
    InsertItems {
        session_id: id,
        positions: items.iter().map(|i| i.position).collect(),
        codes: items.iter().map(|i| i.item_code.as_deref()).collect(),
        quantities: items.iter().map(|i| i.quantity).collect(),
        descriptions: items.iter().map(|i| i.description.as_deref()).collect(),
        amounts: items.iter().map(|i| i.amount).collect(),
    }
    .execute(conn)
    .await
    .map(drop)
}

/// Inserts the charges of session `id` with one cached statement ([`InsertCharges`]).
async fn insert_charges(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    charges: &[ChargeRow],
) -> QueryResult<()> {
    InsertCharges {
        session_id: id,
        positions: charges.iter().map(|c| c.position).collect(),
        names: charges.iter().map(|c| c.name.as_deref()).collect(),
        amounts: charges.iter().map(|c| c.amount).collect(),
    }
    .execute(conn)
    .await
    .map(drop)
}

/// The guarded move of one session: `WHERE id = $id AND state = $from`.
async fn move_state(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    from: SessionState,
    to: SessionState,
    at: OffsetDateTime,
) -> QueryResult<bool> {
    let moved = diesel::update(
        payment_sessions::table
            .find(id)
            .filter(payment_sessions::state.eq(from.code())),
    )
    .set((
        payment_sessions::state.eq(to.code()),
        payment_sessions::updated_at.eq(at),
    ))
    .execute(conn)
    .await?;
    Ok(moved == 1)
}

#[async_trait]
impl SessionRepository for PgStore {
    async fn insert(&self, session: &PaymentSession) -> Result<(), InsertError> {
        let row = NewSessionRow::of(session);
        let items = item_rows(session)?;
        let charges = charge_rows(session)?;
        let mut conn = self.conn().await?;
        let result = if items.is_empty() && charges.is_empty() {
            // One statement is atomic on its own.
            diesel::insert_into(payment_sessions::table)
                .values(&row)
                .execute(&mut conn)
                .await
                .map(drop)
        } else {
            conn.transaction(async |conn| {
                diesel::insert_into(payment_sessions::table)
                    .values(&row)
                    .execute(conn)
                    .await?;
                if !items.is_empty() {
                    insert_items(conn, row.id, &items).await?;
                }
                if !charges.is_empty() {
                    insert_charges(conn, row.id, &charges).await?;
                }
                Ok::<_, diesel::result::Error>(())
            })
            .await
        };
        match result {
            Ok(()) => Ok(()),
            Err(e) if is_unique_violation(&e, REFERENCE_INDEX) => {
                Err(InsertError::DuplicateReference)
            }
            Err(e) => Err(InsertError::Store(
                anyhow::Error::new(e).context(format!("inserting payment session {}", session.id)),
            )),
        }
    }

    async fn get(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        let conn = self.conn().await?;
        let conn: &AsyncPgConnection = &conn;
        let uuid = id.as_uuid();
        // Session, items and charges in one pipelined round trip.
        let session = async {
            let mut c = conn;
            payment_sessions::table
                .find(uuid)
                .select(SessionRow::as_select())
                .first(&mut c)
                .await
                .optional()
        };
        let (row, (items, charges)) = tokio::try_join!(session, children(conn, uuid))
            .with_context(|| format!("reading payment session {id}"))?;
        row.map(|row| session_from_rows(row, items, charges))
            .transpose()
    }

    async fn find_holding_reference(
        &self,
        terminal: &TerminalNumber,
        reference: &MerchantReference,
    ) -> anyhow::Result<Option<PaymentSession>> {
        let mut conn = self.conn().await?;
        let row = payment_sessions::table
            .filter(payment_sessions::terminal_number.eq(terminal.as_str()))
            .filter(payment_sessions::merchant_reference.eq(reference.as_str()))
            .filter(sql::<Bool>(HOLDS_REFERENCE_SQL))
            .select(SessionRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .context("finding the session holding a reference")?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (items, charges) = children(&conn, row.id)
            .await
            .context("reading a session's items and charges")?;
        session_from_rows(row, items, charges).map(Some)
    }

    async fn transition(
        &self,
        id: SessionId,
        from: SessionState,
        to: SessionState,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        move_state(&mut conn, id.as_uuid(), from, to, at)
            .await
            .with_context(|| format!("moving session {id} from {from} to {to}"))
    }

    async fn begin_attempt(
        &self,
        attempt: &PaymentAttempt,
        from: SessionState,
        to: SessionState,
    ) -> anyhow::Result<bool> {
        let row = NewAttemptRow::of(attempt);
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            if !move_state(conn, row.session_id, from, to, attempt.updated_at).await? {
                return Ok(false);
            }
            diesel::insert_into(payment_attempts::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok::<_, diesel::result::Error>(true)
        })
        .await
        .with_context(|| {
            format!(
                "beginning attempt {} of session {}",
                attempt.id, attempt.session_id
            )
        })
    }

    async fn finish_attempt(
        &self,
        attempt: &PaymentAttempt,
        from: SessionState,
        to: SessionState,
    ) -> anyhow::Result<bool> {
        let row = NewAttemptRow::of(attempt);
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            if !move_state(conn, row.session_id, from, to, attempt.updated_at).await? {
                return Ok(false);
            }
            let updated = diesel::update(
                payment_attempts::table
                    .find(row.id)
                    .filter(payment_attempts::session_id.eq(row.session_id)),
            )
            .set((
                payment_attempts::outcome.eq(row.outcome),
                payment_attempts::processor_reference.eq(row.processor_reference),
                payment_attempts::challenge_url.eq(row.challenge_url),
                payment_attempts::svc_code.eq(row.svc_code),
                payment_attempts::updated_at.eq(row.updated_at),
            ))
            .execute(conn)
            .await?;
            if updated != 1 {
                // Rolls the session's move back too.
                anyhow::bail!(
                    "attempt {} of session {} was never begun",
                    attempt.id,
                    attempt.session_id
                );
            }
            Ok(true)
        })
        .await
        .with_context(|| {
            format!(
                "finishing attempt {} of session {}",
                attempt.id, attempt.session_id
            )
        })
    }

    async fn latest_attempt(&self, session: SessionId) -> anyhow::Result<Option<PaymentAttempt>> {
        let mut conn = self.conn().await?;
        payment_attempts::table
            .filter(payment_attempts::session_id.eq(session.as_uuid()))
            .order((
                payment_attempts::created_at.desc(),
                payment_attempts::seq.desc(),
            ))
            .select(AttemptRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .with_context(|| format!("reading the latest attempt of session {session}"))?
            .map(PaymentAttempt::try_from)
            .transpose()
    }

    async fn expire_due(&self, now: OffsetDateTime) -> anyhow::Result<u64> {
        let mut conn = self.conn().await?;
        let moved = diesel::update(
            payment_sessions::table
                .filter(sql::<Bool>(PENDING_SQL))
                .filter(payment_sessions::expires_at.le(now)),
        )
        .set((
            payment_sessions::state.eq(SessionState::Expired.code()),
            payment_sessions::updated_at.eq(now),
        ))
        .execute(&mut conn)
        .await
        .context("expiring due sessions")?;
        Ok(u64::try_from(moved).unwrap_or_default())
    }

    async fn stale_processing(
        &self,
        before: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>> {
        let mut conn = self.conn().await?;
        let ids: Vec<Uuid> = payment_sessions::table
            .filter(sql::<Bool>(PROCESSING_SQL))
            .filter(payment_sessions::updated_at.le(before))
            .order(payment_sessions::updated_at)
            .limit(i64::from(limit))
            .select(payment_sessions::id)
            .load(&mut conn)
            .await
            .context("listing the sessions stale in processing")?;
        Ok(ids.into_iter().map(SessionId::from_uuid).collect())
    }

    async fn get_without_lines(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        let mut conn = self.conn().await?;
        // The session row only: one statement, one round trip.
        payment_sessions::table
            .find(id.as_uuid())
            .select(SessionRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .with_context(|| format!("reading payment session {id}"))?
            .map(|row| session_from_rows(row, Vec::new(), Vec::new()))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_literal_predicates_match_the_state_codes() {
        for state in SessionState::ALL {
            let holds_by_sql = state.code() != 6;
            assert_eq!(state.holds_reference(), holds_by_sql, "{state}");
            assert_eq!(state == SessionState::Pending, state.code() == 0, "{state}");
            assert_eq!(
                state == SessionState::Processing,
                state.code() == 4,
                "{state}"
            );
        }
        assert!(HOLDS_REFERENCE_SQL.ends_with("<> 6"));
        assert!(PENDING_SQL.ends_with("= 0"));
        assert!(PROCESSING_SQL.ends_with("= 4"));
    }
}
