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

use checkout_domain::session::PaymentSession;
use checkout_domain::terminal::Terminal;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{
    self, Array, BigInt, Bool, Integer, Nullable, Numeric, SmallInt, Text, Timestamptz,
};
use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use rust_decimal::Decimal;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::generic_plans::generically;
use crate::models::{charge_rows, item_rows, NewSessionRow};

/// The text of the statement before the session arrays, between them, and after them.
const INSERT_SESSIONS: &str = "WITH u AS (SELECT * FROM unnest(";
const INSERT_ITEMS: &str = ") AS u (id, terminal_number, merchant_reference, \
    internal_reference, kind, callback_success_url, callback_fail_url, callback_back_url, \
    amount, currency, description, email, culture, state, expires_at, created_at, updated_at, \
    current_attempt_id, captured_amount, refunded_amount, guarded, guard_hosts)), \
    ok AS (SELECT * FROM u WHERE NOT u.guarded OR EXISTS (SELECT 1 FROM terminals t \
    WHERE t.number = u.terminal_number AND t.active \
    AND t.callback_hosts IS NOT DISTINCT FROM string_to_array(u.guard_hosts, ' '))), \
    s AS (INSERT INTO payment_sessions (id, terminal_number, merchant_reference, \
    internal_reference, kind, callback_success_url, callback_fail_url, callback_back_url, \
    amount, currency, description, email, culture, state, expires_at, created_at, updated_at, \
    current_attempt_id, captured_amount, refunded_amount) \
    SELECT id, terminal_number, merchant_reference, internal_reference, kind, \
    callback_success_url, callback_fail_url, callback_back_url, amount, currency, description, \
    email, culture, state, expires_at, created_at, updated_at, current_attempt_id, \
    captured_amount, refunded_amount FROM ok \
    ON CONFLICT (terminal_number, held_reference) \
    WHERE held_reference IS NOT NULL DO NOTHING RETURNING id), \
    i AS (INSERT INTO session_items \
    (session_id, position, item_code, quantity, description, amount) SELECT u.* FROM unnest(";
const INSERT_CHARGES: &str = ") AS u (session_id, position, item_code, quantity, description, \
    amount) WHERE u.session_id IN (SELECT id FROM s)), \
    c AS (INSERT INTO session_charges (session_id, position, name, amount) \
    SELECT u.* FROM unnest(";
const RETURN_IDS: &str = ") AS u (session_id, position, name, amount) \
    WHERE u.session_id IN (SELECT id FROM s)) \
    SELECT id, true FROM s UNION ALL SELECT id, false FROM u WHERE id NOT IN (SELECT id FROM ok)";

/// The columns of many sessions, their items and their charges, one vector per column.
#[derive(Default)]
pub(crate) struct InsertSessions<'a> {
    id: Vec<Uuid>,
    terminal_number: Vec<&'a str>,
    merchant_reference: Vec<&'a str>,
    internal_reference: Vec<&'a str>,
    kind: Vec<&'static str>,
    callback_success_url: Vec<Option<&'a str>>,
    callback_fail_url: Vec<Option<&'a str>>,
    callback_back_url: Vec<Option<&'a str>>,
    amount: Vec<Decimal>,
    currency: Vec<&'static str>,
    description: Vec<Option<&'a str>>,
    email: Vec<Option<&'a str>>,
    culture: Vec<Option<&'static str>>,
    state: Vec<i16>,
    expires_at: Vec<OffsetDateTime>,
    created_at: Vec<OffsetDateTime>,
    updated_at: Vec<OffsetDateTime>,
    current_attempt_id: Vec<Option<Uuid>>,
    captured_amount: Vec<Option<Decimal>>,
    refunded_amount: Vec<Decimal>,
    guarded: Vec<bool>,
    guard_hosts: Vec<Option<String>>,
    item_session: Vec<Uuid>,
    item_position: Vec<i32>,
    item_code: Vec<Option<String>>,
    item_quantity: Vec<i64>,
    item_description: Vec<Option<String>>,
    item_amount: Vec<Decimal>,
    charge_session: Vec<Uuid>,
    charge_position: Vec<i32>,
    charge_name: Vec<Option<String>>,
    charge_amount: Vec<Decimal>,
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
        self.id.len()
    }

    fn push(&mut self, s: &'a PaymentSession, read: Option<&Terminal>) -> anyhow::Result<()> {
        self.guarded.push(read.is_some());
        // Hosts never hold a space: the statement splits them again on it.
        self.guard_hosts.push(
            read.and_then(|t| t.callback_hosts.as_ref())
                .map(|hosts| hosts.hosts().join(" ")),
        );
        let items = item_rows(s)?;
        let charges = charge_rows(s)?;
        let r = NewSessionRow::of(s);
        self.id.push(r.id);
        self.terminal_number.push(r.terminal_number);
        self.merchant_reference.push(r.merchant_reference);
        self.internal_reference.push(r.internal_reference);
        self.kind.push(r.kind);
        self.callback_success_url.push(r.callback_success_url);
        self.callback_fail_url.push(r.callback_fail_url);
        self.callback_back_url.push(r.callback_back_url);
        self.amount.push(r.amount);
        self.currency.push(r.currency);
        self.description.push(r.description);
        self.email.push(r.email);
        self.culture.push(r.culture);
        self.state.push(r.state);
        self.expires_at.push(r.expires_at);
        self.created_at.push(r.created_at);
        self.updated_at.push(r.updated_at);
        self.current_attempt_id.push(r.current_attempt_id);
        self.captured_amount.push(r.captured_amount);
        self.refunded_amount.push(r.refunded_amount);
        for item in items {
            self.item_session.push(r.id);
            self.item_position.push(item.position);
            self.item_code.push(item.item_code);
            self.item_quantity.push(item.quantity);
            self.item_description.push(item.description);
            self.item_amount.push(item.amount);
        }
        for charge in charges {
            self.charge_session.push(r.id);
            self.charge_position.push(charge.position);
            self.charge_name.push(charge.name);
            self.charge_amount.push(charge.amount);
        }
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
        out.push_sql(INSERT_SESSIONS);
        out.push_bind_param::<Array<sql_types::Uuid>, _>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.terminal_number)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.merchant_reference)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.internal_reference)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.kind)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.callback_success_url)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.callback_fail_url)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.callback_back_url)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Numeric>, _>(&self.amount)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.currency)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.description)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.email)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.culture)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<SmallInt>, _>(&self.state)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.expires_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.updated_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<sql_types::Uuid>>, _>(&self.current_attempt_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Numeric>>, _>(&self.captured_amount)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Numeric>, _>(&self.refunded_amount)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Bool>, _>(&self.guarded)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.guard_hosts)?;
        out.push_sql(INSERT_ITEMS);
        out.push_bind_param::<Array<sql_types::Uuid>, _>(&self.item_session)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Integer>, _>(&self.item_position)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.item_code)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.item_quantity)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.item_description)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Numeric>, _>(&self.item_amount)?;
        out.push_sql(INSERT_CHARGES);
        out.push_bind_param::<Array<sql_types::Uuid>, _>(&self.charge_session)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Integer>, _>(&self.charge_position)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.charge_name)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Numeric>, _>(&self.charge_amount)?;
        out.push_sql(RETURN_IDS);
        Ok(())
    }
}
