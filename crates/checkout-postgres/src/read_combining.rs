//! Read combining ([`combining`](crate::combining)) of the reads on the hot paths: whole
//! sessions (the hosted pages), sessions without their lines (the status read, the card post)
//! and terminals (a create for a terminal not seen yet, a payer back from a challenge, a
//! declined card's limit; the pages and the card post read theirs with the session). Reads
//! that arrive while others of their kind are in the database are read together, with
//! `SELECT … WHERE key = ANY($1)` (for whole sessions, one each for the sessions, their items,
//! their charges and their card attempts, pipelined in one round trip; for sessions without
//! lines, one more for the card attempts of those that have had a card). Each read's
//! statement starts after its request arrived, so it sees every change committed before then
//! (a terminal deactivated, a session paid), as a read of its own would. Several requests for
//! one key each get the row.
//!
//! The whole session reads, and the reads without lines that ask for it (the card post), read
//! each session's terminal in the same statement (a `LEFT JOIN`): the pages and the card post
//! check both (`SessionRepository::get_for_page` and `get_for_card_post`), in one round trip instead of two in a
//! row.

use std::collections::HashMap;

use crate::availability::StoreContext;
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

/// A session and its terminal (`None` when it was never provisioned).
pub(crate) type WithTerminal = (PaymentSession, Option<Terminal>);

impl Combined for WholeSessionReads {
    type Item = SessionId;
    /// The session and its terminal, or `None` when there is no session with that id.
    type Answer = Option<WithTerminal>;
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
    ) -> anyhow::Result<Vec<Option<WithTerminal>>> {
        let uuids: Vec<Uuid> = ids.iter().map(|id| id.as_uuid()).collect();
        let conn = store.conn().await?;
        let conn: &AsyncPgConnection = &conn;
        let sessions = sessions_with_terminals(conn, &uuids);
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
        let mut terminals: HashMap<SessionId, Option<Terminal>> = HashMap::new();
        for (row, terminal) in rows {
            let id = row.id;
            let session = session_from_rows(
                row,
                items.remove(&id).unwrap_or_default(),
                charges.remove(&id).unwrap_or_default(),
            )?;
            terminals.insert(session.id(), terminal.map(Terminal::try_from).transpose()?);
            sessions.insert(session.id(), session);
        }
        card_attempts::attach(attempts, sessions.values_mut())?;
        Ok(answers(ids, sessions, terminals))
    }
}

/// The sessions `ids` with their terminals, in one statement.
async fn sessions_with_terminals(
    mut conn: &AsyncPgConnection,
    ids: &[Uuid],
) -> QueryResult<Vec<(SessionRow, Option<TerminalRow>)>> {
    payment_sessions::table
        .left_join(terminals::table)
        .filter(payment_sessions::id.eq_any(ids))
        .select((SessionRow::as_select(), Option::<TerminalRow>::as_select()))
        .load(&mut conn)
        .await
}

/// The answer to each of `ids`, in their order.
fn answers(
    ids: &[&SessionId],
    sessions: HashMap<SessionId, PaymentSession>,
    terminals: HashMap<SessionId, Option<Terminal>>,
) -> Vec<Option<WithTerminal>> {
    ids.iter()
        .map(|id| {
            let session = sessions.get(id)?.clone();
            let terminal = terminals.get(id).cloned().flatten();
            Some((session, terminal))
        })
        .collect()
}

/// `rows` grouped by their session, each group in the order given.
fn by_session<T>(rows: Vec<(Uuid, T)>) -> HashMap<Uuid, Vec<T>> {
    let mut grouped: HashMap<Uuid, Vec<T>> = HashMap::new();
    for (session, row) in rows {
        grouped.entry(session).or_default().push(row);
    }
    grouped
}

/// A session read without lines: the session, and whether its terminal is wanted too.
pub(crate) type SessionRead = (SessionId, bool);

impl Combined for SessionReads {
    type Item = SessionRead;
    /// The session, with its terminal when any read of the statement wanted one; `None` when
    /// there is no session with that id.
    type Answer = Option<WithTerminal>;
    const KIND: &'static str = "session read";

    fn describe((id, _): &SessionRead) -> String {
        format!("reading payment session {id}")
    }

    fn combiner(store: &PgStore) -> &Combiner<Self> {
        store.reads()
    }

    async fn statement(
        store: &PgStore,
        reads: &[&SessionRead],
    ) -> anyhow::Result<Vec<Option<WithTerminal>>> {
        let uuids: Vec<Uuid> = reads.iter().map(|(id, _)| id.as_uuid()).collect();
        let conn = store.conn().await?;
        // The join only when a read wants the terminal (the card post): it costs the status
        // reads, which do not, about a tenth of their throughput (docs/performance.md).
        let rows = if reads.iter().any(|(_, terminal)| *terminal) {
            // Planned once per connection: planning the join at each of the card posts' few
            // reads per statement cost more than setting and resetting the plan mode.
            generically(&conn, sessions_with_terminals(&conn, &uuids)).await
        } else {
            sessions_alone(&conn, &uuids).await
        }
        .context("reading payment sessions")?;
        let mut sessions = Vec::with_capacity(rows.len());
        let mut terminals = HashMap::new();
        for (row, terminal) in rows {
            let session = session_from_rows(row, Vec::new(), Vec::new())?;
            terminals.insert(session.id(), terminal.map(Terminal::try_from).transpose()?);
            sessions.push(session);
        }
        card_attempts::fill(&conn, sessions.iter_mut()).await?;
        let sessions = sessions.into_iter().map(|s| (s.id(), s)).collect();
        let ids: Vec<&SessionId> = reads.iter().map(|(id, _)| id).collect();
        Ok(answers(&ids, sessions, terminals))
    }
}

/// The sessions `ids`, without their terminals.
async fn sessions_alone(
    mut conn: &AsyncPgConnection,
    ids: &[Uuid],
) -> QueryResult<Vec<(SessionRow, Option<TerminalRow>)>> {
    let rows: Vec<SessionRow> = payment_sessions::table
        .filter(payment_sessions::id.eq_any(ids))
        .select(SessionRow::as_select())
        .load(&mut conn)
        .await?;
    Ok(rows.into_iter().map(|row| (row, None)).collect())
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
