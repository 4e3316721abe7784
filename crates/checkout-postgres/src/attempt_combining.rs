//! Write combining ([`combining`](crate::combining)) of the two writes of card attempts:
//! attempts begun, and answers recorded, while others of their kind are being written are
//! written together, in one [`attempt_writes`](crate::attempt_writes) statement and one commit
//! for them all. Each learns its own outcome, decided by the same compare-and-set as a
//! statement of its own.
//!
//! Two writes about one session never share a statement ([`Combined::key`]): the second waits
//! for the next one, which starts after the first committed and so decides against its
//! result, as it would have on its own. Within a statement, writes are ordered by session, so
//! that statements take their row locks in one order.

use checkout_domain::session::PaymentAttempt;

use crate::attempt_writes::{Begin, BeginAttempts, Record, RecordAttempts, RecordOutcome};
use crate::combining::{Combined, Combiner};
use crate::store::PgStore;

/// Attempts begun, combined.
pub(crate) struct AttemptBegins;

/// Answers recorded, combined.
pub(crate) struct AttemptRecords;

impl Combined for AttemptBegins {
    type Item = Begin;
    /// True when the session moved and the attempt was inserted.
    type Answer = bool;
    const KIND: &'static str = "attempt begin";

    fn describe(b: &Begin) -> String {
        format!(
            "beginning attempt {} of session {}",
            b.attempt.id, b.attempt.session_id
        )
    }

    fn combiner(store: &PgStore) -> &Combiner<Self> {
        store.attempt_begins()
    }

    fn key(b: &Begin) -> Option<u128> {
        Some(b.attempt.session_id.as_uuid().as_u128())
    }

    async fn statement(store: &PgStore, begins: &[&Begin]) -> anyhow::Result<Vec<bool>> {
        let conn = store.conn().await?;
        let ordered: Vec<&Begin> = by_session(begins, |b| &b.attempt)
            .into_iter()
            .map(|i| begins[i])
            .collect();
        let inserted = BeginAttempts::of(&ordered).run(&conn).await?;
        Ok(begins
            .iter()
            .map(|b| inserted.contains(&b.attempt.id.as_uuid()))
            .collect())
    }
}

impl Combined for AttemptRecords {
    type Item = Record;
    type Answer = RecordOutcome;
    const KIND: &'static str = "attempt record";

    fn describe(r: &Record) -> String {
        format!(
            "recording attempt {} of session {}",
            r.attempt.id, r.attempt.session_id
        )
    }

    fn combiner(store: &PgStore) -> &Combiner<Self> {
        store.attempt_records()
    }

    fn key(r: &Record) -> Option<u128> {
        Some(r.attempt.session_id.as_uuid().as_u128())
    }

    async fn statement(store: &PgStore, records: &[&Record]) -> anyhow::Result<Vec<RecordOutcome>> {
        let conn = store.conn().await?;
        let order = by_session(records, |r| &r.attempt);
        let ordered: Vec<&Record> = order.iter().map(|&i| records[i]).collect();
        let outcomes = RecordAttempts::of(&ordered).run(&conn).await?;
        let mut answers = vec![
            RecordOutcome {
                saved: false,
                moved: false,
            };
            records.len()
        ];
        for (i, outcome) in order.into_iter().zip(outcomes) {
            answers[i] = outcome;
        }
        Ok(answers)
    }
}

/// The positions of `items`, ordered by the session of their attempt: a statement's rows in
/// that order take their row locks in one order.
fn by_session<T>(items: &[&T], attempt: impl Fn(&T) -> &PaymentAttempt) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| attempt(items[i]).session_id);
    order
}
