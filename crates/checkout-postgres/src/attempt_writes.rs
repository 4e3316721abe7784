//! The two writes of card attempts, for one attempt or many, each one statement in autocommit:
//! one round trip and one commit for every attempt it carries (`attempt_combining`).
//!
//! Beginning attempts moves each session and inserts its attempt only if the session moved:
//!
//! ```sql
//! WITH u     AS (SELECT * FROM unnest($1, ..., $17) AS u (id, session_id, ..., from_state, to_state)),
//!      moved AS (UPDATE payment_sessions s SET state = u.to_state, updated_at = u.updated_at,
//!                current_attempt_id = u.id FROM u
//!                WHERE s.id = u.session_id AND s.state = u.from_state RETURNING u.id)
//! INSERT INTO payment_attempts (...) SELECT ... FROM u WHERE u.id IN (SELECT id FROM moved)
//! RETURNING id
//! ```
//!
//! Recording answers saves each attempt only if it is in one of its expected states, and moves
//! its session only if the attempt was saved and is still the session's current one:
//!
//! ```sql
//! WITH u     AS (SELECT * FROM unnest($1, ..., $12) WITH ORDINALITY AS u (id, ..., n)),
//!      saved AS (UPDATE payment_attempts a SET ... FROM u WHERE a.id = u.id
//!                AND a.session_id = u.session_id
//!                AND a.state = ANY(string_to_array(u.expected, ',')) RETURNING u.n),
//!      moved AS (UPDATE payment_sessions s SET state = u.to_state, updated_at = u.updated_at
//!                FROM u WHERE u.n IN (SELECT n FROM saved) AND s.id = u.session_id
//!                AND s.state = u.from_state AND s.current_attempt_id = u.id RETURNING u.n)
//! SELECT u.n, u.n IN (SELECT n FROM saved), u.n IN (SELECT n FROM moved) FROM u
//! ```
//!
//! A statement MUST NOT carry two attempts of one session (the combiner's key keeps them in
//! statements of their own, `attempt_combining`): `UPDATE … FROM` changes a row once per
//! statement, so a second write of the same row in one statement would be skipped instead of
//! deciding against the first one's result, as it does in a statement of its own.
//!
//! Each statement is atomic, and every row it writes is compared and set as a statement of its
//! own would: an `UPDATE` that waits for a concurrent one re-checks its `WHERE` against the
//! row that one committed, so of racing writers exactly one moves a session from a state. The
//! events trigger fires on each session's `UPDATE` inside the same statement, so a state change
//! and its event still commit together. The text never depends on how many attempts there are,
//! so diesel caches each as one prepared statement (a static query id), planned once per
//! connection (`generic_plans`).

use std::collections::HashSet;

use checkout_domain::session::PaymentAttempt;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{
    self, Array, BigInt, Bool, Integer, Nullable, SmallInt, Text, Timestamptz,
};
use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::generic_plans::generically;
use crate::models::NewAttemptRow;

/// The text of both statements before their arrays.
const UNNEST_ARRAYS: &str = "WITH u AS (SELECT * FROM unnest(";
/// The text of [`BeginAttempts`] after its arrays.
const BEGIN_WRITES: &str = ") AS u (id, session_id, card_brand, card_last4, \
    processor_reference, challenge_url, state, svc_code, payment_method, return_url, checks, \
    next_check_at, created_at, updated_at, capture_method, from_state, to_state)), \
    moved AS (UPDATE payment_sessions s SET state = u.to_state, updated_at = u.updated_at, \
    current_attempt_id = u.id FROM u WHERE s.id = u.session_id AND s.state = u.from_state \
    RETURNING u.id) \
    INSERT INTO payment_attempts (id, session_id, card_brand, card_last4, processor_reference, \
    challenge_url, state, svc_code, payment_method, return_url, checks, next_check_at, \
    created_at, updated_at, capture_method) \
    SELECT id, session_id, card_brand, card_last4, processor_reference, challenge_url, state, \
    svc_code, payment_method, return_url, checks, next_check_at, created_at, updated_at, \
    capture_method \
    FROM u WHERE u.id IN (SELECT id FROM moved) RETURNING id";

/// The text of [`RecordAttempts`] after its arrays. With no move asked, an attempt's
/// `from_state` and `to_state` are NULL: `s.state = NULL` holds for no row.
const RECORD_WRITES: &str = ") WITH ORDINALITY AS u (id, session_id, state, \
    processor_reference, challenge_url, svc_code, checks, next_check_at, updated_at, expected, \
    from_state, to_state, n)), \
    saved AS (UPDATE payment_attempts a SET state = u.state, \
    processor_reference = u.processor_reference, challenge_url = u.challenge_url, \
    svc_code = u.svc_code, checks = u.checks, next_check_at = u.next_check_at, \
    updated_at = u.updated_at FROM u WHERE a.id = u.id AND a.session_id = u.session_id \
    AND a.state = ANY(string_to_array(u.expected, ',')) RETURNING u.n), \
    moved AS (UPDATE payment_sessions s SET state = u.to_state, updated_at = u.updated_at \
    FROM u WHERE u.n IN (SELECT n FROM saved) AND s.id = u.session_id \
    AND s.state = u.from_state AND s.current_attempt_id = u.id RETURNING u.n) \
    SELECT u.n, u.n IN (SELECT n FROM saved), u.n IN (SELECT n FROM moved) FROM u ORDER BY u.n";

/// An attempt to begin: its session moves from `from` to `to` and takes it as its current one.
pub(crate) struct Begin {
    /// The attempt to insert.
    pub attempt: PaymentAttempt,
    /// The session's state code now.
    pub from: i16,
    /// The session's state code after.
    pub to: i16,
}

/// An attempt's answer to record, and the session move it may cause.
pub(crate) struct Record {
    /// The attempt as it is to be saved.
    pub attempt: PaymentAttempt,
    /// The attempt states in which it may be saved.
    pub expected: Vec<&'static str>,
    /// The session's state codes it moves from and to, when a move is asked.
    pub session_move: Option<(i16, i16)>,
}

/// What recording one answer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordOutcome {
    /// The attempt was saved.
    pub saved: bool,
    /// Its session moved.
    pub moved: bool,
}

/// Begins many attempts, one vector per column: see the module's first statement.
#[derive(Default)]
pub(crate) struct BeginAttempts<'a> {
    id: Vec<Uuid>,
    session_id: Vec<Uuid>,
    card_brand: Vec<&'static str>,
    card_last4: Vec<&'a str>,
    processor_reference: Vec<Option<&'a str>>,
    challenge_url: Vec<Option<&'a str>>,
    state: Vec<&'static str>,
    svc_code: Vec<Option<&'static str>>,
    payment_method: Vec<&'a str>,
    return_url: Vec<&'a str>,
    checks: Vec<i32>,
    next_check_at: Vec<Option<OffsetDateTime>>,
    created_at: Vec<OffsetDateTime>,
    updated_at: Vec<OffsetDateTime>,
    capture_method: Vec<&'static str>,
    from: Vec<i16>,
    to: Vec<i16>,
}

impl<'a> BeginAttempts<'a> {
    /// The statement for `begins`, at most one per session.
    pub(crate) fn of(begins: &[&'a Begin]) -> Self {
        let mut q = BeginAttempts::default();
        for b in begins {
            let r = NewAttemptRow::of(&b.attempt);
            q.id.push(r.id);
            q.session_id.push(r.session_id);
            q.card_brand.push(r.card_brand);
            q.card_last4.push(r.card_last4);
            q.processor_reference.push(r.processor_reference);
            q.challenge_url.push(r.challenge_url);
            q.state.push(r.state);
            q.svc_code.push(r.svc_code);
            q.payment_method.push(r.payment_method);
            q.return_url.push(r.return_url);
            q.checks.push(r.checks);
            q.next_check_at.push(r.next_check_at);
            q.created_at.push(r.created_at);
            q.updated_at.push(r.updated_at);
            q.capture_method.push(r.capture_method);
            q.from.push(b.from);
            q.to.push(b.to);
        }
        q
    }

    /// Runs the statement (in autocommit) and returns the ids of the attempts it inserted:
    /// those whose session was in its `from` state.
    pub(crate) async fn run(self, conn: &AsyncPgConnection) -> QueryResult<HashSet<Uuid>> {
        let ids: Vec<Uuid> = generically(conn, async {
            let mut c = conn;
            self.load(&mut c).await
        })
        .await?;
        Ok(ids.into_iter().collect())
    }
}

/// The static query id of [`BeginAttempts`].
pub(crate) struct BeginAttemptsId;

impl QueryId for BeginAttempts<'_> {
    type QueryId = BeginAttemptsId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for BeginAttempts<'_> {
    type SqlType = sql_types::Uuid;
}

impl QueryFragment<Pg> for BeginAttempts<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(UNNEST_ARRAYS);
        out.push_bind_param::<Array<sql_types::Uuid>, _>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<sql_types::Uuid>, _>(&self.session_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.card_brand)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.card_last4)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.processor_reference)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.challenge_url)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.state)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.svc_code)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.payment_method)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.return_url)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Integer>, _>(&self.checks)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Timestamptz>>, _>(&self.next_check_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.updated_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.capture_method)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<SmallInt>, _>(&self.from)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<SmallInt>, _>(&self.to)?;
        out.push_sql(BEGIN_WRITES);
        Ok(())
    }
}

/// Records many answers, one vector per column: see the module's second statement.
#[derive(Default)]
pub(crate) struct RecordAttempts<'a> {
    id: Vec<Uuid>,
    session_id: Vec<Uuid>,
    state: Vec<&'static str>,
    processor_reference: Vec<Option<&'a str>>,
    challenge_url: Vec<Option<&'a str>>,
    svc_code: Vec<Option<&'static str>>,
    checks: Vec<i32>,
    next_check_at: Vec<Option<OffsetDateTime>>,
    updated_at: Vec<OffsetDateTime>,
    /// The expected states, comma-separated (a state's name never holds a comma).
    expected: Vec<String>,
    from: Vec<Option<i16>>,
    to: Vec<Option<i16>>,
}

impl<'a> RecordAttempts<'a> {
    /// The statement for `records`, at most one per session.
    pub(crate) fn of(records: &[&'a Record]) -> Self {
        let mut q = RecordAttempts::default();
        for rec in records {
            let r = NewAttemptRow::of(&rec.attempt);
            q.id.push(r.id);
            q.session_id.push(r.session_id);
            q.state.push(r.state);
            q.processor_reference.push(r.processor_reference);
            q.challenge_url.push(r.challenge_url);
            q.svc_code.push(r.svc_code);
            q.checks.push(r.checks);
            q.next_check_at.push(r.next_check_at);
            q.updated_at.push(r.updated_at);
            q.expected.push(rec.expected.join(","));
            q.from.push(rec.session_move.map(|(from, _)| from));
            q.to.push(rec.session_move.map(|(_, to)| to));
        }
        q
    }

    /// Runs the statement (in autocommit) and returns what it did for each answer, in order.
    pub(crate) async fn run(self, conn: &AsyncPgConnection) -> QueryResult<Vec<RecordOutcome>> {
        let count = self.id.len();
        let rows: Vec<(i64, bool, bool)> = generically(conn, async {
            let mut c = conn;
            self.load(&mut c).await
        })
        .await?;
        if rows.len() != count {
            return Err(diesel::result::Error::DeserializationError(
                format!("recording {count} answers returned {} rows", rows.len()).into(),
            ));
        }
        Ok(rows
            .into_iter()
            .map(|(_, saved, moved)| RecordOutcome { saved, moved })
            .collect())
    }
}

/// The static query id of [`RecordAttempts`].
pub(crate) struct RecordAttemptsId;

impl QueryId for RecordAttempts<'_> {
    type QueryId = RecordAttemptsId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for RecordAttempts<'_> {
    type SqlType = (BigInt, Bool, Bool);
}

impl QueryFragment<Pg> for RecordAttempts<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(UNNEST_ARRAYS);
        out.push_bind_param::<Array<sql_types::Uuid>, _>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<sql_types::Uuid>, _>(&self.session_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.state)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.processor_reference)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.challenge_url)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.svc_code)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Integer>, _>(&self.checks)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Timestamptz>>, _>(&self.next_check_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.updated_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.expected)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<SmallInt>>, _>(&self.from)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<SmallInt>>, _>(&self.to)?;
        out.push_sql(RECORD_WRITES);
        Ok(())
    }
}
