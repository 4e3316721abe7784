//! Read combining ([`combining`](crate::combining)) of the two reads on the hot paths: sessions
//! without their lines (the status read, the card post) and terminals (the card post, and a
//! create for a terminal not seen yet). Reads that arrive while others of their kind are in
//! the database are read together, in one `SELECT … WHERE key = ANY($1)` (for sessions, and
//! one more for the card attempts of those that have had a card). Each read's statement starts after its request arrived, so it sees
//! every change committed before then (a terminal deactivated, a session paid), as a read of
//! its own would. Several requests for one key each get the row.

use std::collections::HashMap;

use anyhow::Context;
use checkout_domain::session::PaymentSession;
use checkout_domain::terminal::Terminal;
use checkout_domain::values::{SessionId, TerminalNumber};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uuid::Uuid;

use crate::card_attempts;
use crate::combining::{Combined, Combiner};
use crate::models::{session_from_rows, SessionRow, TerminalRow};
use crate::schema::{payment_sessions, terminals};
use crate::store::PgStore;

/// Session reads without items and charges, combined.
pub(crate) struct SessionReads;

/// Terminal reads, combined.
pub(crate) struct TerminalReads;

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
