//! `SessionRepository` over PostgreSQL: sessions with their items and charges, and payment
//! attempts. Every state change is a compare-and-set in SQL (`... WHERE state = from`).

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::ports::{
    AttemptChange, AttemptLedger, InsertError, Recorded, SessionRepository, Sweeps,
};
use checkout_domain::session::{PaymentAttempt, PaymentSession, SessionEvent, SessionState};
use checkout_domain::terminal::Terminal;
use checkout_domain::values::{AttemptId, MerchantReference, SessionId, TerminalNumber};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{self, BigInt, Bool};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::attempt_combining::{AttemptBegins, AttemptRecords};
use crate::attempt_writes::{Begin, Record};
use crate::combining;
use crate::models::{session_from_rows, AttemptRow, ChargeRow, ItemRow, SessionRow};
use crate::read_combining::{SessionReads, WholeSessionReads};
use crate::schema::{payment_attempts, payment_sessions, session_charges, session_items};
use crate::store::PgStore;
use crate::{card_attempts, counters, write_combining};

/// Unresolved attempts (`AttemptState::UNRESOLVED`), as a literal matching the partial index
/// `payment_attempts_unresolved`.
pub(crate) const UNRESOLVED_SQL: &str = "payment_attempts.state IN ('sent', 'unknown')";

/// Claims the due attempts in a checked state (`AttemptState::CHECKED`, as in the partial
/// index `payment_attempts_due`): `$1` now, `$2` how many, `$3` the lease.
/// The state the expiry sweep moves sessions from (`pending_until` is set only in it).
const EXPIRY_FROM: SessionState = SessionState::Pending;

const CLAIM_DUE_SQL: &str = "\
    WITH due AS (\
        SELECT id, next_check_at FROM payment_attempts \
        WHERE state IN ('sent', 'unknown', 'requires_action') AND next_check_at IS NOT NULL \
          AND next_check_at <= $1 \
        ORDER BY next_check_at LIMIT $2 FOR UPDATE SKIP LOCKED) \
    UPDATE payment_attempts a SET next_check_at = $3 FROM due WHERE a.id = due.id \
    RETURNING a.id, a.session_id, a.card_brand, a.card_last4, a.processor_reference, \
        a.challenge_url, a.state, a.svc_code, a.payment_method, a.return_url, a.checks, \
        due.next_check_at AS next_check_at, due.next_check_at AS due_at, a.created_at, \
        a.updated_at, a.capture_method";

/// Claims the held authorisations due for a check (`Sweeps::claim_due_holds`): authorized
/// attempts (the partial index `payment_attempts_held`) since `$1` or earlier, not claimed
/// past `$2`, oldest first, at most `$3`, `FOR UPDATE OF a SKIP LOCKED` so that two sweeps never
/// claim one. Each one's `next_check_at` goes to `$4` when its session still holds it
/// (ApprovedTransaction, 3, by this attempt), else to `$5`, far ahead: never checked again.
/// Only the held ones are returned.
const CLAIM_HOLDS_SQL: &str = "\
    WITH due AS (\
        SELECT a.id, a.session_id, a.updated_at, \
            (s.state = 3 AND s.current_attempt_id = a.id) AS held \
        FROM payment_attempts a JOIN payment_sessions s ON s.id = a.session_id \
        WHERE a.state = 'authorized' AND a.updated_at <= $1 \
          AND (a.next_check_at IS NULL OR a.next_check_at <= $2) \
        ORDER BY a.updated_at LIMIT $3 FOR UPDATE OF a SKIP LOCKED), \
    claimed AS (\
        UPDATE payment_attempts a SET next_check_at = CASE WHEN due.held THEN $4 ELSE $5 END \
        FROM due WHERE a.id = due.id \
        RETURNING due.session_id, due.updated_at AS held_since, due.held) \
    SELECT session_id, held_since FROM claimed WHERE held";

/// The next check of an authorised attempt whose session no longer holds it: never.
const NEVER: OffsetDateTime = time::macros::datetime!(9999-12-31 00:00 UTC);

/// A claimed hold: its session, and since when it is held.
#[derive(QueryableByName)]
struct ClaimedHold {
    #[diesel(sql_type = sql_types::Uuid)]
    session_id: Uuid,
    #[diesel(sql_type = sql_types::Timestamptz)]
    held_since: OffsetDateTime,
}

/// A claimed attempt, with the time it was due.
#[derive(QueryableByName)]
struct ClaimedAttempt {
    #[diesel(embed)]
    attempt: AttemptRow,
    #[diesel(sql_type = sql_types::Timestamptz)]
    due_at: OffsetDateTime,
}

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
        // Queued with the creates in flight and written with them in one statement, or at
        // once when none is queued (`write_combining`).
        write_combining::insert(self, session, None).await
    }

    async fn insert_for_terminal(
        &self,
        session: &PaymentSession,
        read: &Terminal,
    ) -> Result<(), InsertError> {
        // The terminal's check is part of the combined statement (`session_insert`).
        write_combining::insert(self, session, Some(read)).await
    }

    async fn get(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        // Read with the reads in flight, in one pipelined round trip, or at once when none is
        // queued (`read_combining`).
        Ok(combining::submit::<WholeSessionReads>(self, id)
            .await?
            .map(|(session, _)| session))
    }

    async fn find_holding_reference(
        &self,
        terminal: &TerminalNumber,
        reference: &MerchantReference,
    ) -> anyhow::Result<Option<PaymentSession>> {
        let mut conn = self.conn().await?;
        let row = payment_sessions::table
            .filter(payment_sessions::terminal_number.eq(terminal.as_str()))
            .filter(payment_sessions::held_reference.eq(reference.as_str()))
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

    async fn find_by_reference(
        &self,
        terminal: &TerminalNumber,
        reference: &MerchantReference,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentSession>> {
        let mut conn = self.conn().await?;
        // The session rows only (index payment_sessions_reference); the status records show
        // no items or charges. Then the card attempts of them all in one statement.
        let mut sessions = payment_sessions::table
            .filter(payment_sessions::terminal_number.eq(terminal.as_str()))
            .filter(payment_sessions::merchant_reference.eq(reference.as_str()))
            .order((
                payment_sessions::created_at.desc(),
                payment_sessions::id.desc(),
            ))
            .limit(i64::from(limit))
            .select(SessionRow::as_select())
            .load(&mut conn)
            .await
            .context("finding the sessions with a reference")?
            .into_iter()
            .map(|row| session_from_rows(row, Vec::new(), Vec::new()))
            .collect::<anyhow::Result<Vec<_>>>()?;
        card_attempts::fill(&conn, sessions.iter_mut()).await?;
        Ok(sessions)
    }

    async fn find_by_internal_reference(
        &self,
        reference: &checkout_domain::values::InternalReference,
    ) -> anyhow::Result<Option<PaymentSession>> {
        let mut conn = self.conn().await?;
        // The session row only (unique index payment_sessions_internal_reference_key).
        let row = payment_sessions::table
            .filter(payment_sessions::internal_reference.eq(reference.as_str()))
            .select(SessionRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .context("finding the session with an internal reference")?;
        let Some(row) = row else {
            return Ok(None);
        };
        let mut session = session_from_rows(row, Vec::new(), Vec::new())?;
        card_attempts::fill(&conn, std::iter::once(&mut session)).await?;
        Ok(Some(session))
    }

    async fn transition(
        &self,
        id: SessionId,
        from: SessionState,
        to: SessionState,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let moved = move_state(&mut conn, id.as_uuid(), from, to, at)
            .await
            .with_context(|| format!("moving session {id} from {from} to {to}"))?;
        counters::sessions_moved(to, u64::from(moved));
        Ok(moved)
    }

    async fn get_without_lines(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        // Read with the reads in flight, in one statement, or at once when none is queued
        // (`read_combining`).
        Ok(combining::submit::<SessionReads>(self, (id, false))
            .await?
            .map(|(session, _)| session))
    }

    async fn get_for_page(
        &self,
        id: SessionId,
    ) -> anyhow::Result<Option<(PaymentSession, Option<Terminal>)>> {
        // The session reads read each session's terminal in the same statement
        // (`read_combining`), after the call began.
        combining::submit::<WholeSessionReads>(self, id).await
    }

    async fn get_for_card_post(
        &self,
        id: SessionId,
    ) -> anyhow::Result<Option<(PaymentSession, Option<Terminal>)>> {
        combining::submit::<SessionReads>(self, (id, true)).await
    }
}

#[async_trait]
impl AttemptLedger for PgStore {
    async fn begin_attempt(
        &self,
        attempt: &PaymentAttempt,
        from: SessionState,
        to: SessionState,
    ) -> anyhow::Result<bool> {
        // Written with the attempts begun in flight, in one statement (`attempt_combining`).
        let begin = Begin {
            attempt: attempt.clone(),
            from: from.code(),
            to: to.code(),
        };
        combining::submit::<AttemptBegins>(self, begin).await
    }

    async fn record_attempt(&self, change: &AttemptChange<'_>) -> anyhow::Result<Recorded> {
        // Written with the answers in flight, in one statement (`attempt_combining`).
        let record = Record {
            attempt: change.attempt.clone(),
            expected: change.expected.iter().map(|s| s.as_str()).collect(),
            session_move: change
                .session_move
                .map(|(from, to)| (from.code(), to.code())),
        };
        let outcome = combining::submit::<AttemptRecords>(self, record).await?;
        let recorded = match (outcome.saved, outcome.moved) {
            (false, _) => Recorded::Stale,
            (true, true) => Recorded::Moved,
            (true, false) if change.session_move.is_none() => Recorded::Moved,
            (true, false) => Recorded::AttemptOnly,
        };
        if let (Recorded::Moved, Some((_, to))) = (recorded, change.session_move) {
            counters::sessions_moved(to, 1);
        }
        Ok(recorded)
    }

    async fn attempt(&self, id: AttemptId) -> anyhow::Result<Option<PaymentAttempt>> {
        let mut conn = self.conn().await?;
        payment_attempts::table
            .find(id.as_uuid())
            .select(AttemptRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .with_context(|| format!("reading attempt {id}"))?
            .map(PaymentAttempt::try_from)
            .transpose()
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

    async fn attempts(&self, session: SessionId) -> anyhow::Result<Vec<PaymentAttempt>> {
        let conn = self.conn().await?;
        card_attempts::attempt_rows(&conn, &[session.as_uuid()])
            .await
            .with_context(|| format!("reading the attempts of session {session}"))?
            .into_iter()
            .map(PaymentAttempt::try_from)
            .collect()
    }
}

#[async_trait]
impl Sweeps for PgStore {
    async fn expire_due(&self, now: OffsetDateTime) -> anyhow::Result<u64> {
        // The bulk form of `SessionState::apply(ExpiryPassed)` from Pending: the rows moved
        // are those whose `pending_until` is set, which it is only in that state (the test
        // `the_bulk_expiry_is_the_state_machines_move` ties the column to it).
        let to = EXPIRY_FROM
            .apply(SessionEvent::ExpiryPassed)
            .map_err(anyhow::Error::new)?;
        let mut conn = self.conn().await?;
        let moved = diesel::update(
            // Pending sessions past their expiry (the generated column is NULL otherwise).
            payment_sessions::table.filter(payment_sessions::pending_until.le(now)),
        )
        .set((
            payment_sessions::state.eq(to.code()),
            payment_sessions::updated_at.eq(now),
        ))
        .execute(&mut conn)
        .await
        .context("expiring due sessions")?;
        let moved = u64::try_from(moved).unwrap_or_default();
        counters::sessions_moved(to, moved);
        Ok(moved)
    }

    async fn due_challenges(
        &self,
        now: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>> {
        let mut conn = self.conn().await?;
        let ids: Vec<Uuid> = payment_sessions::table
            // Challenges past their expiry (the generated column is NULL otherwise).
            .filter(payment_sessions::challenge_until.le(now))
            .order(payment_sessions::challenge_until)
            .limit(i64::from(limit))
            .select(payment_sessions::id)
            .load(&mut conn)
            .await
            .context("listing the challenges past their expiry")?;
        Ok(ids.into_iter().map(SessionId::from_uuid).collect())
    }

    async fn claim_due_attempts(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentAttempt>> {
        let mut conn = self.conn().await?;
        // One statement: the due rows are locked (skipping rows another sweep is claiming),
        // pushed to the lease, and returned as they were claimed.
        let rows: Vec<ClaimedAttempt> = diesel::sql_query(CLAIM_DUE_SQL)
            .bind::<sql_types::Timestamptz, _>(now)
            .bind::<BigInt, _>(i64::from(limit))
            .bind::<sql_types::Timestamptz, _>(lease_until)
            .load(&mut conn)
            .await
            .context("claiming the attempts due for reconciliation")?;
        let mut claimed = rows
            .into_iter()
            .map(|c| {
                let due = c.due_at;
                PaymentAttempt::try_from(c.attempt).map(|a| (due, a))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        claimed.sort_by_key(|(due, _)| *due);
        Ok(claimed.into_iter().map(|(_, a)| a).collect())
    }

    async fn claim_due_holds(
        &self,
        held_since: OffsetDateTime,
        now: OffsetDateTime,
        until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>> {
        let mut conn = self.conn().await?;
        let mut rows: Vec<ClaimedHold> = diesel::sql_query(CLAIM_HOLDS_SQL)
            .bind::<sql_types::Timestamptz, _>(held_since)
            .bind::<sql_types::Timestamptz, _>(now)
            .bind::<BigInt, _>(i64::from(limit))
            .bind::<sql_types::Timestamptz, _>(until)
            .bind::<sql_types::Timestamptz, _>(NEVER)
            .load(&mut conn)
            .await
            .context("claiming the held authorisations due for a check")?;
        rows.sort_by_key(|r| r.held_since);
        Ok(rows
            .into_iter()
            .map(|r| SessionId::from_uuid(r.session_id))
            .collect())
    }

    async fn unresolved_attempts(&self) -> anyhow::Result<(u64, Option<OffsetDateTime>)> {
        let mut conn = self.conn().await?;
        let (count, oldest): (i64, Option<OffsetDateTime>) = payment_attempts::table
            .filter(sql::<Bool>(UNRESOLVED_SQL))
            .select((
                diesel::dsl::count_star(),
                diesel::dsl::min(payment_attempts::created_at),
            ))
            .first(&mut conn)
            .await
            .context("counting unresolved attempts")?;
        Ok((u64::try_from(count).unwrap_or_default(), oldest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bulk_expiry_is_the_state_machines_move() {
        // `pending_until` is the expiry of exactly the sessions in EXPIRY_FROM...
        let migration =
            include_str!("../../../migrations/2026-11-27-000001_hot_session_updates/up.sql");
        let column = format!(
            "pending_until timestamptz\n        GENERATED ALWAYS AS (CASE WHEN state = {} THEN",
            EXPIRY_FROM.code()
        );
        assert!(migration.contains(&column), "{column}");
        // ...and the state machine lets exactly those (and a challenge, which the use case
        // ends at the processor first) expire.
        let expirable: Vec<SessionState> = SessionState::ALL
            .into_iter()
            .filter(|s| s.apply(SessionEvent::ExpiryPassed).is_ok())
            .collect();
        assert_eq!(
            expirable,
            [SessionState::Pending, SessionState::ChallengeRequired]
        );
        assert_eq!(
            EXPIRY_FROM.apply(SessionEvent::ExpiryPassed),
            Ok(SessionState::Expired)
        );
    }

    #[test]
    fn the_literal_predicates_match_the_state_codes() {
        let unresolved: Vec<&str> = checkout_domain::session::AttemptState::UNRESOLVED
            .iter()
            .map(|s| s.as_str())
            .collect();
        assert_eq!(unresolved, ["sent", "unknown"]);
        assert!(UNRESOLVED_SQL.ends_with("('sent', 'unknown')"));
        let checked: Vec<String> = checkout_domain::session::AttemptState::CHECKED
            .iter()
            .map(|s| format!("'{}'", s.as_str()))
            .collect();
        let checked = format!("state IN ({})", checked.join(", "));
        assert!(CLAIM_DUE_SQL.contains(&checked));
    }
}
