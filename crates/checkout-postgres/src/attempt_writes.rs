//! The two writes of a card attempt, each one statement in autocommit: one round trip and one
//! commit instead of `BEGIN`, two statements and `COMMIT`.
//!
//! Beginning an attempt moves its session and inserts the attempt only if the session moved:
//!
//! ```sql
//! WITH moved AS (UPDATE payment_sessions SET state = $to, updated_at = $now,
//!                current_attempt_id = $attempt WHERE id = $session AND state = $from
//!                RETURNING id)
//! INSERT INTO payment_attempts (...) SELECT $attempt, moved.id, ... FROM moved RETURNING id
//! ```
//!
//! Recording an answer saves the attempt only if it is in an expected state, and moves the
//! session only if the attempt was saved and is still the session's current one:
//!
//! ```sql
//! WITH saved AS (UPDATE payment_attempts SET ... WHERE id = $attempt AND session_id = $session
//!                AND state = ANY($expected) RETURNING session_id),
//!      moved AS (UPDATE payment_sessions SET state = $to, updated_at = $now
//!                WHERE id IN (SELECT session_id FROM saved) AND state = $from
//!                AND current_attempt_id = $attempt RETURNING id)
//! SELECT (SELECT count(*) FROM saved), (SELECT count(*) FROM moved)
//! ```
//!
//! Each statement is atomic, and its row locks are taken in the order the transactions took
//! them (the session, then the attempt; the attempt, then the session), so racing writers
//! decide exactly as before: an `UPDATE` that waits for a concurrent one re-checks its `WHERE`
//! against the row that one committed. The events trigger fires on the session's `UPDATE`
//! inside the same statement, so a state change and its event still commit together. The text
//! never changes, so diesel caches each as one prepared statement (a static query id).

use crate::models::NewAttemptRow;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{self, Array, BigInt, Integer, Nullable, SmallInt, Text, Timestamptz};
use diesel::QueryResult;

/// Moves the session `session_id` from `from` to `to`, makes the attempt its current one and
/// inserts the attempt, or does nothing when the session is not in `from`; returns the
/// attempt's id when it did.
pub(crate) struct BeginAttempt<'a> {
    /// The attempt to insert.
    pub row: NewAttemptRow<'a>,
    /// The session's state code now.
    pub from: i16,
    /// The session's state code after.
    pub to: i16,
}

/// The static query id of [`BeginAttempt`].
pub(crate) struct BeginAttemptId;

impl QueryId for BeginAttempt<'_> {
    type QueryId = BeginAttemptId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for BeginAttempt<'_> {
    type SqlType = sql_types::Uuid;
}

impl QueryFragment<Pg> for BeginAttempt<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let row = &self.row;
        out.push_sql("WITH moved AS (UPDATE payment_sessions SET state = ");
        out.push_bind_param::<SmallInt, _>(&self.to)?;
        out.push_sql(", updated_at = ");
        out.push_bind_param::<Timestamptz, _>(&row.updated_at)?;
        out.push_sql(", current_attempt_id = ");
        out.push_bind_param::<sql_types::Uuid, _>(&row.id)?;
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<sql_types::Uuid, _>(&row.session_id)?;
        out.push_sql(" AND state = ");
        out.push_bind_param::<SmallInt, _>(&self.from)?;
        out.push_sql(
            " RETURNING id) INSERT INTO payment_attempts (id, session_id, card_brand, \
             card_last4, processor_reference, challenge_url, state, svc_code, payment_method, \
             return_url, checks, next_check_at, created_at, updated_at) SELECT ",
        );
        out.push_bind_param::<sql_types::Uuid, _>(&row.id)?;
        out.push_sql(", moved.id, ");
        out.push_bind_param::<Text, _>(&row.card_brand)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&row.card_last4)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&row.processor_reference)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&row.challenge_url)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&row.state)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&row.svc_code)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&row.payment_method)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&row.return_url)?;
        out.push_sql(", ");
        out.push_bind_param::<Integer, _>(&row.checks)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Timestamptz>, _>(&row.next_check_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamptz, _>(&row.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamptz, _>(&row.updated_at)?;
        out.push_sql(" FROM moved RETURNING id");
        Ok(())
    }
}

/// Saves an attempt's answer when the attempt is in one of `expected`, and then moves its
/// session from `from` to `to` when asked (`from` and `to` set) and the attempt is still the session's
/// current one; returns (attempts saved, sessions moved), each 0 or 1.
pub(crate) struct RecordAttempt<'a> {
    /// The attempt as it is to be saved.
    pub row: NewAttemptRow<'a>,
    /// The attempt states in which it may be saved.
    pub expected: Vec<&'static str>,
    /// The session's state code it moves from, when a move is asked.
    pub from: Option<i16>,
    /// The session's state code it moves to, when a move is asked.
    pub to: Option<i16>,
}

/// The static query id of [`RecordAttempt`].
pub(crate) struct RecordAttemptId;

impl QueryId for RecordAttempt<'_> {
    type QueryId = RecordAttemptId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for RecordAttempt<'_> {
    type SqlType = (BigInt, BigInt);
}

impl QueryFragment<Pg> for RecordAttempt<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let row = &self.row;
        out.push_sql("WITH saved AS (UPDATE payment_attempts SET state = ");
        out.push_bind_param::<Text, _>(&row.state)?;
        out.push_sql(", processor_reference = ");
        out.push_bind_param::<Nullable<Text>, _>(&row.processor_reference)?;
        out.push_sql(", challenge_url = ");
        out.push_bind_param::<Nullable<Text>, _>(&row.challenge_url)?;
        out.push_sql(", svc_code = ");
        out.push_bind_param::<Nullable<Text>, _>(&row.svc_code)?;
        out.push_sql(", checks = ");
        out.push_bind_param::<Integer, _>(&row.checks)?;
        out.push_sql(", next_check_at = ");
        out.push_bind_param::<Nullable<Timestamptz>, _>(&row.next_check_at)?;
        out.push_sql(", updated_at = ");
        out.push_bind_param::<Timestamptz, _>(&row.updated_at)?;
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<sql_types::Uuid, _>(&row.id)?;
        out.push_sql(" AND session_id = ");
        out.push_bind_param::<sql_types::Uuid, _>(&row.session_id)?;
        out.push_sql(" AND state = ANY(");
        out.push_bind_param::<Array<Text>, _>(&self.expected)?;
        // With no move asked, `from` and `to` are NULL: `state = NULL` holds for no row.
        out.push_sql(") RETURNING session_id), moved AS (UPDATE payment_sessions SET state = ");
        out.push_bind_param::<Nullable<SmallInt>, _>(&self.to)?;
        out.push_sql(", updated_at = ");
        out.push_bind_param::<Timestamptz, _>(&row.updated_at)?;
        out.push_sql(" WHERE id IN (SELECT session_id FROM saved) AND state = ");
        out.push_bind_param::<Nullable<SmallInt>, _>(&self.from)?;
        out.push_sql(" AND current_attempt_id = ");
        out.push_bind_param::<sql_types::Uuid, _>(&row.id)?;
        out.push_sql(
            " RETURNING id) SELECT (SELECT count(*) FROM saved), (SELECT count(*) FROM moved)",
        );
        Ok(())
    }
}
