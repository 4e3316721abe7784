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
//!                AND s.state = u.from_state AND s.current_attempt_id = u.id RETURNING u.n),
//!      mailed AS (INSERT INTO receipt_mails (...) SELECT ... FROM u JOIN payment_sessions s
//!                ON s.id = u.session_id WHERE u.n IN (SELECT n FROM moved)
//!                AND u.to_state IN (1, 3) AND s.email IS NOT NULL
//!                ON CONFLICT (session_id) DO NOTHING)
//! SELECT u.n, u.n IN (SELECT n FROM saved), u.n IN (SELECT n FROM moved) FROM u
//! ```
//!
//! A statement MUST NOT carry two attempts of one session (the combiner's key keeps them in
//! statements of their own, `attempt_combining`): `UPDATE … FROM` changes a row once per
//! statement, so a second write of the same row in one statement would be skipped instead of
//! deciding against the first one's result, as it does in a statement of its own.
//!
//! The receipt mail of a session moved to Successful or ApprovedTransaction is queued by the
//! same statement (the transactional outbox of `receipts`): it commits with the payment's
//! success or not at all, once per session.
//!
//! Each statement is atomic, and every row it writes is compared and set as a statement of its
//! own would: an `UPDATE` that waits for a concurrent one re-checks its `WHERE` against the
//! row that one committed, so of racing writers exactly one moves a session from a state. The
//! events trigger fires on each session's `UPDATE` inside the same statement, so a state change
//! and its event still commit together. The text never depends on how many attempts there are,
//! so diesel caches each as one prepared statement (a static query id), planned once per
//! connection (`generic_plans`).

use std::collections::HashSet;
use std::sync::LazyLock;

use checkout_domain::session::{PaymentAttempt, SessionState};
use checkout_domain::SvcCode;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{self, BigInt, Bool, Integer, Nullable, SmallInt, Text, Timestamptz};
use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::generic_plans::generically;
use crate::unnest::{assignments, list, unnest_columns, WITH_UNNEST};

unnest_columns! {
    /// An attempt's `payment_attempts` columns, borrowed from the attempt: the row
    /// [`BeginAttempts`] inserts (`None` binds NULL; `seq` is never written).
    pub(crate) struct NewAttemptRow<'a>;
    /// The inserted attempts, one vector per column.
    struct AttemptColumns {
        id: sql_types::Uuid => Uuid,
        session_id: sql_types::Uuid => Uuid,
        card_brand: Text => &'static str,
        card_last4: Text => &'a str,
        processor_reference: Nullable<Text> => Option<&'a str>,
        challenge_url: Nullable<Text> => Option<&'a str>,
        state: Text => &'static str,
        svc_code: Nullable<Text> => Option<&'static str>,
        payment_method: Text => &'a str,
        return_url: Text => &'a str,
        checks: Integer => i32,
        next_check_at: Nullable<Timestamptz> => Option<OffsetDateTime>,
        created_at: Timestamptz => OffsetDateTime,
        updated_at: Timestamptz => OffsetDateTime,
        capture_method: Text => &'static str,
    }
}

unnest_columns! {
    /// The session move a begun attempt makes.
    pub(crate) struct MoveRow;
    /// The moves, one vector per column.
    struct MoveColumns {
        from_state: SmallInt => i16,
        to_state: SmallInt => i16,
    }
}

unnest_columns! {
    /// The `payment_attempts` columns an answer saves (`id` and `session_id` find the row).
    pub(crate) struct AnswerRow<'a>;
    /// The saved answers, one vector per column.
    struct AnswerColumns {
        id: sql_types::Uuid => Uuid,
        session_id: sql_types::Uuid => Uuid,
        state: Text => &'static str,
        processor_reference: Nullable<Text> => Option<&'a str>,
        challenge_url: Nullable<Text> => Option<&'a str>,
        svc_code: Nullable<Text> => Option<&'static str>,
        checks: Integer => i32,
        next_check_at: Nullable<Timestamptz> => Option<OffsetDateTime>,
        updated_at: Timestamptz => OffsetDateTime,
    }
}

unnest_columns! {
    /// What an answer is checked against, and the session move it may make. With no move
    /// asked, `from_state` and `to_state` are NULL: `s.state = NULL` holds for no row.
    pub(crate) struct AnswerCheckRow;
    /// The checks, one vector per column.
    struct AnswerCheckColumns {
        expected: Text => String,
        from_state: Nullable<SmallInt> => Option<i16>,
        to_state: Nullable<SmallInt> => Option<i16>,
    }
}

/// The key columns of an answer: they find its row and are never set.
const ANSWER_KEYS: &[&str] = &["id", "session_id"];

/// The text of [`BeginAttempts`] after its arrays.
static BEGIN_WRITES: LazyLock<String> = LazyLock::new(|| {
    let attempt = list(AttemptColumns::NAMES);
    let moves = list(MoveColumns::NAMES);
    format!(
        ") AS u ({attempt}, {moves})), \
        moved AS (UPDATE payment_sessions s SET state = u.to_state, updated_at = u.updated_at, \
        current_attempt_id = u.id FROM u WHERE s.id = u.session_id AND s.state = u.from_state \
        RETURNING u.id) \
        INSERT INTO payment_attempts ({attempt}) SELECT {attempt} \
        FROM u WHERE u.id IN (SELECT id FROM moved) RETURNING id"
    )
});

/// The text of [`RecordAttempts`] after its arrays.
static RECORD_WRITES: LazyLock<String> = LazyLock::new(|| {
    let answer = list(AnswerColumns::NAMES);
    let checks = list(AnswerCheckColumns::NAMES);
    let set = assignments(AnswerColumns::NAMES, ANSWER_KEYS);
    format!(
        ") WITH ORDINALITY AS u ({answer}, {checks}, n)), \
        saved AS (UPDATE payment_attempts a SET {set} \
        FROM u WHERE a.id = u.id AND a.session_id = u.session_id \
        AND a.state = ANY(string_to_array(u.expected, ',')) RETURNING u.n), \
        moved AS (UPDATE payment_sessions s SET state = u.to_state, updated_at = u.updated_at \
        FROM u WHERE u.n IN (SELECT n FROM saved) AND s.id = u.session_id \
        AND s.state = u.from_state AND s.current_attempt_id = u.id RETURNING u.n), \
        mailed AS (INSERT INTO receipt_mails \
        (session_id, attempt_id, terminal_number, next_attempt_at, created_at) \
        SELECT u.session_id, u.id, s.terminal_number, u.updated_at, u.updated_at \
        FROM u JOIN payment_sessions s ON s.id = u.session_id \
        WHERE u.n IN (SELECT n FROM moved) AND u.to_state IN ({paid}) \
        AND s.email IS NOT NULL ON CONFLICT (session_id) DO NOTHING) \
        SELECT u.n, u.n IN (SELECT n FROM saved), u.n IN (SELECT n FROM moved) FROM u \
        ORDER BY u.n",
        paid = list_codes(&RECEIPT_STATES),
    )
});

/// The states whose move queues the session's receipt mail, when it has the payer's address:
/// the card was paid with.
const RECEIPT_STATES: [SessionState; 2] =
    [SessionState::Successful, SessionState::ApprovedTransaction];

/// State codes as an SQL list (`1, 3`).
fn list_codes(states: &[SessionState]) -> String {
    states
        .iter()
        .map(|s| s.code().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl<'a> NewAttemptRow<'a> {
    /// The row of `a`.
    pub(crate) fn of(a: &'a PaymentAttempt) -> Self {
        NewAttemptRow {
            id: a.id.as_uuid(),
            session_id: a.session_id.as_uuid(),
            card_brand: a.card_brand.as_str(),
            card_last4: &a.card_last4,
            processor_reference: a.processor_reference.as_deref(),
            challenge_url: a.challenge_url.as_deref(),
            state: a.state.as_str(),
            svc_code: a.svc_code.map(SvcCode::code),
            payment_method: &a.payment_method,
            return_url: &a.return_url,
            checks: i32::try_from(a.checks).unwrap_or(i32::MAX),
            next_check_at: a.next_check_at,
            created_at: a.created_at,
            updated_at: a.updated_at,
            capture_method: a.capture_method.as_str(),
        }
    }

    /// The columns of this row that an answer saves.
    fn answer(self) -> AnswerRow<'a> {
        AnswerRow {
            id: self.id,
            session_id: self.session_id,
            state: self.state,
            processor_reference: self.processor_reference,
            challenge_url: self.challenge_url,
            svc_code: self.svc_code,
            checks: self.checks,
            next_check_at: self.next_check_at,
            updated_at: self.updated_at,
        }
    }
}

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

/// Begins many attempts: see the module's first statement.
#[derive(Default)]
pub(crate) struct BeginAttempts<'a> {
    attempts: AttemptColumns<'a>,
    moves: MoveColumns,
}

impl<'a> BeginAttempts<'a> {
    /// The statement for `begins`, at most one per session.
    pub(crate) fn of(begins: &[&'a Begin]) -> Self {
        let mut q = BeginAttempts::default();
        for b in begins {
            q.attempts.push(NewAttemptRow::of(&b.attempt));
            q.moves.push(MoveRow {
                from_state: b.from,
                to_state: b.to,
            });
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
        out.push_sql(WITH_UNNEST);
        self.attempts.bind(&mut out)?;
        out.push_sql(", ");
        self.moves.bind(&mut out)?;
        out.push_sql(&BEGIN_WRITES);
        Ok(())
    }
}

/// Records many answers: see the module's second statement.
#[derive(Default)]
pub(crate) struct RecordAttempts<'a> {
    answers: AnswerColumns<'a>,
    checks: AnswerCheckColumns,
    count: usize,
}

impl<'a> RecordAttempts<'a> {
    /// The statement for `records`, at most one per session.
    pub(crate) fn of(records: &[&'a Record]) -> Self {
        let mut q = RecordAttempts::default();
        for rec in records {
            q.answers.push(NewAttemptRow::of(&rec.attempt).answer());
            q.checks.push(AnswerCheckRow {
                // A state's name never holds a comma.
                expected: rec.expected.join(","),
                from_state: rec.session_move.map(|(from, _)| from),
                to_state: rec.session_move.map(|(_, to)| to),
            });
            q.count += 1;
        }
        q
    }

    /// Runs the statement (in autocommit) and returns what it did for each answer, in order.
    pub(crate) async fn run(self, conn: &AsyncPgConnection) -> QueryResult<Vec<RecordOutcome>> {
        let count = self.count;
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
        out.push_sql(WITH_UNNEST);
        self.answers.bind(&mut out)?;
        out.push_sql(", ");
        self.checks.bind(&mut out)?;
        out.push_sql(&RECORD_WRITES);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use checkout_domain::session::{AttemptState, SessionState};
    use checkout_domain::testing::builders::{at, attempt};

    use super::*;
    use crate::card_attempts::attempt_rows;
    use crate::session_insert::tests::{database, insert};
    use crate::unnest::tests::plans_of;

    #[tokio::test]
    async fn every_declared_column_is_written_and_read_back() {
        let (_db, conn) = database().await;
        let sessions = insert(&conn, 2).await;
        let mut attempts: Vec<PaymentAttempt> =
            sessions.iter().map(|s| attempt(s, at(5))).collect();
        let (pending, processing) = (
            SessionState::Pending.code(),
            SessionState::Processing.code(),
        );
        let begins: Vec<Begin> = attempts
            .iter()
            .map(|a| Begin {
                attempt: a.clone(),
                from: pending,
                to: processing,
            })
            .collect();
        let inserted = BeginAttempts::of(&begins.iter().collect::<Vec<_>>())
            .run(&conn)
            .await
            .unwrap();
        assert_eq!(inserted.len(), 2);

        // The first answer is saved and moves its session; the second expects a state its
        // attempt is not in, and changes nothing.
        attempts[0].state = AttemptState::Succeeded;
        attempts[0].processor_reference = Some("pi_1".into());
        attempts[0].checks = 2;
        attempts[0].next_check_at = None;
        attempts[0].updated_at = at(9);
        attempts[1].state = AttemptState::Declined;
        let records = [
            Record {
                attempt: attempts[0].clone(),
                expected: vec!["sent"],
                session_move: Some((processing, SessionState::Successful.code())),
            },
            Record {
                attempt: attempts[1].clone(),
                expected: vec!["unknown"],
                session_move: Some((processing, SessionState::Failed.code())),
            },
        ];
        let outcomes = RecordAttempts::of(&records.iter().collect::<Vec<_>>())
            .run(&conn)
            .await
            .unwrap();
        assert_eq!(
            outcomes,
            [
                RecordOutcome {
                    saved: true,
                    moved: true
                },
                RecordOutcome {
                    saved: false,
                    moved: false
                }
            ]
        );
        let ids: Vec<Uuid> = sessions.iter().map(|s| s.id().as_uuid()).collect();
        let read: Vec<PaymentAttempt> = attempt_rows(&conn, &ids)
            .await
            .unwrap()
            .into_iter()
            .map(|r| PaymentAttempt::try_from(r).unwrap())
            .collect();
        let saved = read.iter().find(|a| a.id == attempts[0].id).unwrap();
        assert_eq!(saved, &attempts[0]);
        let untouched = read.iter().find(|a| a.id == attempts[1].id).unwrap();
        assert_eq!(untouched.state, AttemptState::Sent);

        // Each statement prepared once on the connection and planned generically.
        assert_eq!(
            plans_of(&conn, "INSERT INTO payment_attempts").await,
            [(1, 0)]
        );
        assert_eq!(plans_of(&conn, "saved AS (UPDATE").await, [(1, 0)]);
    }
}
