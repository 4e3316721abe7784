//! Write combining of session creates ([`combining`](crate::combining)): creates that arrive
//! while others are being written are written together, in one [`InsertSessions`] statement
//! and one commit (one WAL flush) for them all. Each create learns its own outcome from the
//! statement's `RETURNING`: inserted, or its reference held.

use std::collections::HashSet;

use checkout_domain::ports::InsertError;
use checkout_domain::session::PaymentSession;
use uuid::Uuid;

use crate::combining::{self, Combined, Combiner};
use crate::counters;
use crate::session_insert::InsertSessions;
use crate::store::PgStore;

/// Session creates, combined.
pub(crate) struct SessionWrites;

/// Creates `session` through the write combining of `store`.
pub(crate) async fn insert(store: &PgStore, session: &PaymentSession) -> Result<(), InsertError> {
    match combining::submit::<SessionWrites>(store, session.clone()).await {
        Ok(true) => {
            counters::session_created(session);
            Ok(())
        }
        Ok(false) => Err(InsertError::DuplicateReference),
        Err(e) => Err(InsertError::Store(e)),
    }
}

impl Combined for SessionWrites {
    type Item = PaymentSession;
    /// Inserted; false when the session's reference was held.
    type Answer = bool;
    const KIND: &'static str = "session insert";

    fn describe(session: &PaymentSession) -> String {
        format!("inserting payment session {}", session.id)
    }

    fn combiner(store: &PgStore) -> &Combiner<Self> {
        store.writes()
    }

    async fn statement(store: &PgStore, sessions: &[&PaymentSession]) -> anyhow::Result<Vec<bool>> {
        // The same order in every statement (terminal, then reference), so that two
        // statements never wait on each other's index entries in opposite orders (a deadlock).
        let mut ordered = sessions.to_vec();
        ordered.sort_by(|a, b| {
            (a.terminal.as_str(), a.reference.as_str())
                .cmp(&(b.terminal.as_str(), b.reference.as_str()))
        });
        let statement = InsertSessions::of(ordered)?;
        let count = statement.len();
        let mut conn = store.conn().await?;
        let inserted: HashSet<Uuid> = statement.run(&mut conn).await?;
        counters::insert_statement(count);
        Ok(sessions
            .iter()
            .map(|s| inserted.contains(&s.id.as_uuid()))
            .collect())
    }
}
