//! The one statement that creates sessions: their `payment_sessions` rows, items and charges,
//! for one session or many, in one round trip and (in autocommit) one commit.
//!
//! ```sql
//! WITH u  AS (SELECT * FROM unnest($1, ..., $20, $guarded, $guard_hosts) AS u (...)),
//!      ok AS (SELECT * FROM u WHERE NOT u.guarded OR EXISTS (SELECT 1 FROM terminals t
//!             WHERE t.number = u.terminal_number AND t.active
//!             AND t.callback_hosts IS NOT DISTINCT FROM string_to_array(u.guard_hosts, ' '))),
//!      s  AS (INSERT INTO payment_sessions (...) SELECT ... FROM ok
//!             ON CONFLICT (terminal_number, held_reference) WHERE held_reference IS NOT NULL
//!             DO NOTHING RETURNING id),
//!      i  AS (INSERT INTO session_items (...) SELECT u.* FROM unnest($23, ..., $28) AS u (...)
//!             WHERE u.session_id IN (SELECT id FROM s)),
//!      c  AS (INSERT INTO session_charges (...) SELECT u.* FROM unnest($29, ..., $32) AS u (...)
//!             WHERE u.session_id IN (SELECT id FROM s))
//! SELECT id, true FROM s UNION ALL SELECT id, false FROM u WHERE id NOT IN (SELECT id FROM ok)
//! ```
//!
//! One array per column, so the text never depends on how many sessions, items or charges
//! there are, and diesel caches it as one prepared statement (a static query id), planned
//! once per connection (`generic_plans`).
//!
//! A session whose reference is held (the partial unique index
//! `payment_sessions_held_reference` on the generated column `held_reference`: the reference
//! in every state but Expired) is skipped by `ON CONFLICT ... DO NOTHING` on exactly that
//! index, with its items and charges, and its id is missing from the result: that is the
//! duplicate-reference answer. PostgreSQL decides the conflict as the unique index does (a
//! racing insert of the same reference waits for the other transaction and is skipped if that
//! one commits), so of racing inserts exactly one wins, whether they come in one statement or
//! in several. Every other violation (a foreign key, a check) fails the whole statement.
//!
//! A guarded session (`SessionRepository::insert_for_terminal`) is inserted only if its
//! terminal, as the statement sees it, is still active with the callback hosts the caller read;
//! otherwise it comes back with `false` and nothing of it is written. The check and the insert
//! are one statement, so a deactivation committed before the statement began refuses it.

use std::collections::HashMap;
use std::sync::LazyLock;

use checkout_domain::session::{PaymentSession, SessionKind};
use checkout_domain::terminal::{CaptureMethod, Terminal};
use checkout_domain::values::{CallbackUrl, DisplayText, Email};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{
    self, BigInt, Bool, Integer, Jsonb, Nullable, Numeric, SmallInt, Text, Timestamptz,
};
use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use rust_decimal::Decimal;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::generic_plans::generically;
use crate::models::{charge_rows, item_rows, metadata_column, KIND_CHECKOUT, KIND_LINK};
use crate::unnest::{list, unnest_columns, WITH_UNNEST};

unnest_columns! {
    /// A new `payment_sessions` row, borrowed from the session (`None` binds NULL).
    pub(crate) struct NewSessionRow<'a>;
    /// The sessions, one vector per column.
    struct SessionColumns {
        id: sql_types::Uuid => Uuid,
        terminal_number: Text => &'a str,
        merchant_reference: Text => &'a str,
        internal_reference: Text => &'a str,
        kind: Text => &'static str,
        callback_success_url: Nullable<Text> => Option<&'a str>,
        callback_fail_url: Nullable<Text> => Option<&'a str>,
        callback_back_url: Nullable<Text> => Option<&'a str>,
        amount: Numeric => Decimal,
        currency: Text => &'static str,
        description: Nullable<Text> => Option<&'a str>,
        email: Nullable<Text> => Option<&'a str>,
        culture: Nullable<Text> => Option<&'static str>,
        state: SmallInt => i16,
        expires_at: Timestamptz => OffsetDateTime,
        created_at: Timestamptz => OffsetDateTime,
        updated_at: Timestamptz => OffsetDateTime,
        current_attempt_id: Nullable<sql_types::Uuid> => Option<Uuid>,
        captured_amount: Nullable<Numeric> => Option<Decimal>,
        refunded_amount: Numeric => Decimal,
        metadata: Nullable<Jsonb> => Option<serde_json::Value>,
        capture_method: Nullable<Text> => Option<&'static str>,
    }
}

unnest_columns! {
    /// Whether a session is inserted only if its terminal is still as read, and the callback
    /// hosts read (space-separated; a host never holds a space).
    pub(crate) struct GuardRow;
    /// The guards, one vector per column.
    struct GuardColumns {
        guarded: Bool => bool,
        guard_hosts: Nullable<Text> => Option<String>,
    }
}

unnest_columns! {
    /// A new `session_items` row.
    pub(crate) struct NewItemRow;
    /// The items, one vector per column.
    struct ItemColumns {
        session_id: sql_types::Uuid => Uuid,
        position: Integer => i32,
        item_code: Nullable<Text> => Option<String>,
        quantity: BigInt => i64,
        description: Nullable<Text> => Option<String>,
        amount: Numeric => Decimal,
    }
}

unnest_columns! {
    /// A new `session_charges` row.
    pub(crate) struct NewChargeRow;
    /// The charges, one vector per column.
    struct ChargeColumns {
        session_id: sql_types::Uuid => Uuid,
        position: Integer => i32,
        name: Nullable<Text> => Option<String>,
        amount: Numeric => Decimal,
    }
}

/// The texts of the statement after the session arrays, after the item arrays and after the
/// charge arrays, one comment per CTE:
/// - `u`: the sessions with their guards;
/// - `ok`: those unguarded, or whose terminal is still active with the hosts read;
/// - `s`: their rows, less those whose reference is held;
/// - `i`, `c`: the items and charges of the sessions inserted;
/// - the answer: each id inserted (true) or refused by its guard (false).
static AFTER_ARRAYS: LazyLock<[String; 3]> = LazyLock::new(|| {
    let session = list(SessionColumns::NAMES);
    let guard = list(GuardColumns::NAMES);
    let item = list(ItemColumns::NAMES);
    let charge = list(ChargeColumns::NAMES);
    [
        format!(
            ") AS u ({session}, {guard})), \
            ok AS (SELECT * FROM u WHERE NOT u.guarded OR EXISTS (SELECT 1 FROM terminals t \
            WHERE t.number = u.terminal_number AND t.active \
            AND t.callback_hosts IS NOT DISTINCT FROM string_to_array(u.guard_hosts, ' '))), \
            s AS (INSERT INTO payment_sessions ({session}) SELECT {session} FROM ok \
            ON CONFLICT (terminal_number, held_reference) \
            WHERE held_reference IS NOT NULL DO NOTHING RETURNING id), \
            i AS (INSERT INTO session_items ({item}) SELECT {item} FROM unnest("
        ),
        format!(
            ") AS u ({item}) WHERE u.session_id IN (SELECT id FROM s)), \
            c AS (INSERT INTO session_charges ({charge}) SELECT {charge} FROM unnest("
        ),
        format!(
            ") AS u ({charge}) WHERE u.session_id IN (SELECT id FROM s)) \
            SELECT id, true FROM s UNION ALL \
            SELECT id, false FROM u WHERE id NOT IN (SELECT id FROM ok)"
        ),
    ]
});

impl<'a> NewSessionRow<'a> {
    /// The row of `s`.
    pub(crate) fn of(s: &'a PaymentSession) -> Self {
        let callbacks = match &s.kind() {
            SessionKind::IntegratedCheckout(c) => Some(c.as_ref()),
            SessionKind::PaymentLink => None,
        };
        NewSessionRow {
            id: s.id().as_uuid(),
            terminal_number: s.terminal().as_str(),
            merchant_reference: s.reference().as_str(),
            internal_reference: s.internal_reference().as_str(),
            kind: if callbacks.is_some() {
                KIND_CHECKOUT
            } else {
                KIND_LINK
            },
            callback_success_url: callbacks.map(|c| c.success.as_str()),
            callback_fail_url: callbacks.map(|c| c.fail.as_str()),
            callback_back_url: callbacks
                .and_then(|c| c.back.as_ref())
                .map(CallbackUrl::as_str),
            amount: s.amount().value(),
            currency: s.amount().currency().code(),
            description: s.description().as_ref().map(DisplayText::as_str),
            email: s.email().as_ref().map(Email::as_str),
            culture: s.culture().map(|c| c.as_str()),
            state: s.state().code(),
            expires_at: s.expires_at(),
            created_at: s.created_at(),
            updated_at: s.updated_at(),
            current_attempt_id: s.current_attempt().map(|a| a.as_uuid()),
            captured_amount: s.money().captured().map(|c| c.value()),
            refunded_amount: s.money().refunded().value(),
            metadata: metadata_column(s.metadata()),
            capture_method: s.capture_method().map(CaptureMethod::as_str),
        }
    }
}

/// Many sessions, their items and their charges: see the module's statement.
#[derive(Default)]
pub(crate) struct InsertSessions<'a> {
    sessions: SessionColumns<'a>,
    guards: GuardColumns,
    items: ItemColumns,
    charges: ChargeColumns,
    count: usize,
}

impl<'a> InsertSessions<'a> {
    /// The statement for `sessions`, in this order (the order in which PostgreSQL inserts
    /// them, and so the order in which it takes their index entries). A session with a
    /// terminal is inserted only if that terminal is still active with the same callback
    /// hosts, as the statement sees it.
    pub(crate) fn of(
        sessions: impl IntoIterator<Item = (&'a PaymentSession, Option<&'a Terminal>)>,
    ) -> anyhow::Result<Self> {
        let mut q = InsertSessions::default();
        for (s, read) in sessions {
            q.push(s, read)?;
        }
        Ok(q)
    }

    /// How many sessions the statement writes.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    fn push(&mut self, s: &'a PaymentSession, read: Option<&Terminal>) -> anyhow::Result<()> {
        let id = s.id().as_uuid();
        for item in item_rows(s)? {
            self.items.push(NewItemRow {
                session_id: id,
                position: item.position,
                item_code: item.item_code,
                quantity: item.quantity,
                description: item.description,
                amount: item.amount,
            });
        }
        for charge in charge_rows(s)? {
            self.charges.push(NewChargeRow {
                session_id: id,
                position: charge.position,
                name: charge.name,
                amount: charge.amount,
            });
        }
        self.guards.push(GuardRow {
            guarded: read.is_some(),
            guard_hosts: read
                .and_then(|t| t.callback_hosts.as_ref())
                .map(|hosts| hosts.hosts().join(" ")),
        });
        self.sessions.push(NewSessionRow::of(s));
        self.count += 1;
        Ok(())
    }

    /// Runs the statement (in autocommit unless `conn` is in a transaction) and returns, by
    /// id, true for the sessions it inserted and false for those whose terminal was no longer
    /// as read; the others' references were held.
    pub(crate) async fn run(self, conn: &AsyncPgConnection) -> QueryResult<HashMap<Uuid, bool>> {
        let rows: Vec<(Uuid, bool)> = generically(conn, async {
            let mut c = conn;
            self.load(&mut c).await
        })
        .await?;
        Ok(rows.into_iter().collect())
    }
}

/// The static query id of [`InsertSessions`] (its SQL never changes).
pub(crate) struct InsertSessionsId;

impl QueryId for InsertSessions<'_> {
    type QueryId = InsertSessionsId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for InsertSessions<'_> {
    type SqlType = (sql_types::Uuid, Bool);
}

impl QueryFragment<Pg> for InsertSessions<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let [after_sessions, after_items, after_charges] = &*AFTER_ARRAYS;
        out.push_sql(WITH_UNNEST);
        self.sessions.bind(&mut out)?;
        out.push_sql(", ");
        self.guards.bind(&mut out)?;
        out.push_sql(after_sessions);
        self.items.bind(&mut out)?;
        out.push_sql(after_items);
        self.charges.bind(&mut out)?;
        out.push_sql(after_charges);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]

    use checkout_domain::terminal::CaptureMethod;
    use checkout_domain::testing::builders::{random_bytes, session, terminal};
    use checkout_domain::values::MaxCardAttempts;
    use checkout_test_db::TestDatabase;
    use diesel_async::AsyncConnection;

    use super::*;
    use crate::unnest::tests::plans_of;

    /// A fresh database with the terminal `T-1`, and a connection to it.
    pub(crate) async fn database() -> (TestDatabase, AsyncPgConnection) {
        let db = TestDatabase::create().await.unwrap();
        db.store()
            .create_terminal(&Terminal {
                number: terminal("T-1"),
                display_name: "Merchant".into(),
                active: true,
                callback_hosts: None,
                max_card_attempts: MaxCardAttempts::SPEC,
                capture_method: CaptureMethod::Automatic,
            })
            .await
            .unwrap();
        let conn = AsyncPgConnection::establish(db.url()).await.unwrap();
        (db, conn)
    }

    /// Inserts `n` fresh sessions of `T-1` with one statement.
    pub(crate) async fn insert(conn: &AsyncPgConnection, n: usize) -> Vec<PaymentSession> {
        let sessions: Vec<PaymentSession> = (0..n)
            .map(|_| {
                session(
                    "T-1",
                    &Uuid::from_bytes(random_bytes()).simple().to_string(),
                )
            })
            .collect();
        let inserted = InsertSessions::of(sessions.iter().map(|s| (s, None)))
            .unwrap()
            .run(conn)
            .await
            .unwrap();
        assert_eq!(inserted.len(), n);
        assert!(inserted.values().all(|&ok| ok));
        sessions
    }

    #[tokio::test]
    async fn one_prepared_statement_planned_generically_whatever_the_count() {
        let (_db, conn) = database().await;
        for n in [1, 3, 2, 5] {
            insert(&conn, n).await;
        }
        // Prepared once, and planned generically at every execution.
        assert_eq!(
            plans_of(&conn, "INSERT INTO payment_sessions").await,
            [(4, 0)]
        );
    }
}
