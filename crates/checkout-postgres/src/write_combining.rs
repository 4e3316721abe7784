//! Write combining of session creates ([`combining`](crate::combining)): creates that arrive
//! while others are being written are written together, in one [`InsertSessions`] statement
//! and one commit (one WAL flush) for them all. Each create learns its own outcome from the
//! statement's result: inserted, its reference held, or (a guarded create) its terminal no
//! longer as read.

use std::collections::HashMap;

use checkout_domain::ports::InsertError;
use checkout_domain::session::PaymentSession;
use checkout_domain::terminal::Terminal;
use uuid::Uuid;

use crate::combining::{self, Combined, Combiner};
use crate::counters;
use crate::session_insert::InsertSessions;
use crate::store::PgStore;

/// Session creates, combined.
pub(crate) struct SessionWrites;

/// A session to create, with the terminal as its caller read it when the insert is guarded.
pub(crate) struct NewSession {
    session: PaymentSession,
    read: Option<Terminal>,
}

/// What became of a session to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// Inserted.
    Inserted,
    /// Its reference was held: nothing written.
    ReferenceHeld,
    /// Its terminal was no longer as read: nothing written.
    TerminalChanged,
}

/// Creates `session` through the write combining of `store`; with `read`, only while its
/// terminal is still active with the same callback hosts.
pub(crate) async fn insert(
    store: &PgStore,
    session: &PaymentSession,
    read: Option<&Terminal>,
) -> Result<(), InsertError> {
    let new = NewSession {
        session: session.clone(),
        read: read.cloned(),
    };
    match combining::submit::<SessionWrites>(store, new).await {
        Ok(Written::Inserted) => {
            counters::session_created(session);
            Ok(())
        }
        Ok(Written::ReferenceHeld) => Err(InsertError::DuplicateReference),
        Ok(Written::TerminalChanged) => {
            // What was seen of the terminal is stale: the next create reads it afresh.
            store.terminals_seen().forget(session.terminal());
            Err(InsertError::TerminalChanged)
        }
        Err(e) => Err(InsertError::Store(e)),
    }
}

impl Combined for SessionWrites {
    type Item = NewSession;
    type Answer = Written;
    const KIND: &'static str = "session insert";

    fn describe(new: &NewSession) -> String {
        format!("inserting payment session {}", new.session.id())
    }

    fn combiner(store: &PgStore) -> &Combiner<Self> {
        store.writes()
    }

    async fn statement(store: &PgStore, news: &[&NewSession]) -> anyhow::Result<Vec<Written>> {
        // The same order in every statement (terminal, then reference), so that two
        // statements never wait on each other's index entries in opposite orders (a deadlock).
        let mut ordered = news.to_vec();
        ordered.sort_by(|a, b| {
            (
                a.session.terminal().as_str(),
                a.session.reference().as_str(),
            )
                .cmp(&(
                    b.session.terminal().as_str(),
                    b.session.reference().as_str(),
                ))
        });
        let statement = InsertSessions::of(ordered.iter().map(|n| (&n.session, n.read.as_ref())))?;
        let count = statement.len();
        let conn = store.conn().await?;
        let written: HashMap<Uuid, bool> = statement.run(&conn).await?;
        counters::insert_statement(count);
        Ok(news
            .iter()
            .map(|n| match written.get(&n.session.id().as_uuid()) {
                Some(true) => Written::Inserted,
                Some(false) => Written::TerminalChanged,
                None => Written::ReferenceHeld,
            })
            .collect())
    }
}
