//! Read combining ([`combining`](crate::combining)) of the reads on the hot paths: whole
//! sessions (the hosted pages), sessions without their lines (the status read, the card post)
//! and terminals (the pages, the card post, and a create for a terminal not seen yet). Reads
//! that arrive while others of their kind are in the database are read together, with
//! `SELECT … WHERE key = ANY($1)` (for whole sessions, one each for the sessions, their items,
//! their charges and their card attempts, pipelined in one round trip; for sessions without
//! lines, one more for the card attempts of those that have had a card). Each read's
//! statement starts after its request arrived, so it sees every change committed before then
//! (a terminal deactivated, a session paid), as a read of its own would. Several requests for
//! one key each get the row.

use std::collections::HashMap;

use anyhow::Context;
use checkout_domain::session::PaymentSession;
use checkout_domain::terminal::Terminal;
use checkout_domain::values::{SessionId, TerminalNumber};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::card_attempts;
use crate::combining::{Combined, Combiner};
use crate::generic_plans::generically;
use crate::models::{session_from_rows, ChargeRow, ItemRow, SessionRow, TerminalRow};
use crate::schema::{payment_sessions, session_charges, session_items, terminals};
use crate::store::PgStore;

/// Whole session reads (items, charges and card attempts), combined.
pub(crate) struct WholeSessionReads;

/// Session reads without items and charges, combined.
pub(crate) struct SessionReads;

/// Terminal reads, combined.
pub(crate) struct TerminalReads;

impl Combined for WholeSessionReads {
    type Item = SessionId;
    /// The session, or `None` when there is none with that id.
    type Answer = Option<PaymentSession>;
    const KIND: &'static str = "whole session read";

    fn describe(id: &SessionId) -> String {
        format!("reading payment session {id}")
    }

    fn combiner(store: &PgStore) -> &Combiner<Self> {
        store.whole_reads()
    }

    async fn statement(
        store: &PgStore,
        ids: &[&SessionId],
    ) -> anyhow::Result<Vec<Option<PaymentSession>>> {
        let uuids: Vec<Uuid> = ids.iter().map(|id| id.as_uuid()).collect();
        let conn = store.conn().await?;
        let conn: &AsyncPgConnection = &conn;
        let sessions = async {
            let mut c = conn;
            payment_sessions::table
                .filter(payment_sessions::id.eq_any(&uuids))
                .select(SessionRow::as_select())
                .load(&mut c)
                .await
        };
        let items = async {
            let mut c = conn;
            session_items::table
                .filter(session_items::session_id.eq_any(&uuids))
                .order((session_items::session_id, session_items::position))
                .select((session_items::session_id, ItemRow::as_select()))
                .load::<(Uuid, ItemRow)>(&mut c)
                .await
        };
        let charges = async {
            let mut c = conn;
            session_charges::table
                .filter(session_charges::session_id.eq_any(&uuids))
                .order((session_charges::session_id, session_charges::position))
                .select((session_charges::session_id, ChargeRow::as_select()))
                .load::<(Uuid, ChargeRow)>(&mut c)
                .await
        };
        let attempts = card_attempts::attempt_rows(conn, &uuids);
        // Planned once per connection: at the pages' few reads per statement, planning the
        // four each time cost more than setting and resetting the plan mode around them. A
        // status read's statement carries more reads, and there it did not (`generic_plans`).
        let all = async { tokio::try_join!(sessions, items, charges, attempts) };
        let (rows, items, charges, attempts) = generically(conn, all)
            .await
            .context("reading payment sessions")?;
        let mut items = by_session(items);
        let mut charges = by_session(charges);
        let mut sessions: HashMap<SessionId, PaymentSession> = HashMap::new();
        for row in rows {
            let id = row.id;
            let session = session_from_rows(
                row,
                items.remove(&id).unwrap_or_default(),
                charges.remove(&id).unwrap_or_default(),
            )?;
            sessions.insert(session.id, session);
        }
        card_attempts::attach(attempts, sessions.values_mut())?;
        Ok(ids.iter().map(|id| sessions.get(id).cloned()).collect())
    }
}

/// `rows` grouped by their session, each group in the order given.
fn by_session<T>(rows: Vec<(Uuid, T)>) -> HashMap<Uuid, Vec<T>> {
    let mut grouped: HashMap<Uuid, Vec<T>> = HashMap::new();
    for (session, row) in rows {
        grouped.entry(session).or_default().push(row);
    }
    grouped
}

impl Combined for SessionReads {
    type Item = SessionId;
    /// The session, or `None` when there is none with that id.
    type Answer = Option<PaymentSession>;
    const KIND: &'static str = "session read";

    fn describe(id: &SessionId) -> String {
        format!("reading payment session {id}")
    }

    fn combiner(store: &PgStore) -> &Combiner<Self> {
        store.reads()
    }

    async fn statement(
        store: &PgStore,
        ids: &[&SessionId],
    ) -> anyhow::Result<Vec<Option<PaymentSession>>> {
        let uuids: Vec<Uuid> = ids.iter().map(|id| id.as_uuid()).collect();
        let mut conn = store.conn().await?;
        let rows: Vec<SessionRow> = payment_sessions::table
            .filter(payment_sessions::id.eq_any(&uuids))
            .select(SessionRow::as_select())
            .load(&mut conn)
            .await
            .context("reading payment sessions")?;
        let mut sessions = rows
            .into_iter()
            .map(|row| session_from_rows(row, Vec::new(), Vec::new()))
            .collect::<anyhow::Result<Vec<_>>>()?;
        card_attempts::fill(&conn, sessions.iter_mut()).await?;
        let by_id: HashMap<SessionId, PaymentSession> =
            sessions.into_iter().map(|s| (s.id, s)).collect();
        Ok(ids.iter().map(|id| by_id.get(id).cloned()).collect())
    }
}

impl Combined for TerminalReads {
    type Item = TerminalNumber;
    /// The terminal, active or not, or `None` when it was never provisioned.
    type Answer = Option<Terminal>;
    const KIND: &'static str = "terminal read";

    fn describe(number: &TerminalNumber) -> String {
        format!("reading terminal {number}")
    }

    fn combiner(store: &PgStore) -> &Combiner<Self> {
        store.terminal_reads()
    }

    async fn statement(
        store: &PgStore,
        numbers: &[&TerminalNumber],
    ) -> anyhow::Result<Vec<Option<Terminal>>> {
        let keys: Vec<&str> = numbers.iter().map(|n| n.as_str()).collect();
        let mut conn = store.conn().await?;
        let rows: Vec<TerminalRow> = terminals::table
            .filter(terminals::number.eq_any(&keys))
            .select(TerminalRow::as_select())
            .load(&mut conn)
            .await
            .context("reading terminals")?;
        let by_number: HashMap<TerminalNumber, Terminal> = rows
            .into_iter()
            .map(|row| Terminal::try_from(row).map(|t| (t.number.clone(), t)))
            .collect::<anyhow::Result<_>>()?;
        Ok(numbers.iter().map(|n| by_number.get(*n).cloned()).collect())
    }
}
