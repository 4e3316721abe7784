//! Write combining ([`combining`](crate::combining)) of the two writes of card attempts:
//! attempts begun, and answers recorded, while others of their kind are being written are
//! written together, in one [`attempt_writes`](crate::attempt_writes) statement and one commit
//! for them all. Each learns its own outcome, decided by the same compare-and-set as a
//! statement of its own.
//!
//! Two writes about one session never share a statement: the second goes into the next one,
//! which starts after the first committed and so decides against its result, as it would
//! have on its own.

use std::collections::HashMap;

use checkout_domain::values::SessionId;

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

    async fn statement(store: &PgStore, begins: &[&Begin]) -> anyhow::Result<Vec<bool>> {
        let conn = store.conn().await?;
        let mut answers = vec![false; begins.len()];
        for round in rounds(begins.iter().map(|b| b.attempt.session_id)) {
            let items: Vec<&Begin> = round.iter().map(|&i| begins[i]).collect();
            let inserted = BeginAttempts::of(&items).run(&conn).await?;
            for i in round {
                answers[i] = inserted.contains(&begins[i].attempt.id.as_uuid());
            }
        }
        Ok(answers)
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

    async fn statement(store: &PgStore, records: &[&Record]) -> anyhow::Result<Vec<RecordOutcome>> {
        let conn = store.conn().await?;
        let none = RecordOutcome {
            saved: false,
            moved: false,
        };
        let mut answers = vec![none; records.len()];
        for round in rounds(records.iter().map(|r| r.attempt.session_id)) {
            let items: Vec<&Record> = round.iter().map(|&i| records[i]).collect();
            let outcomes = RecordAttempts::of(&items).run(&conn).await?;
            for (i, outcome) in round.into_iter().zip(outcomes) {
                answers[i] = outcome;
            }
        }
        Ok(answers)
    }
}

/// The positions of `sessions`, in statements that each hold at most one of every session,
/// in the order given: the first write of each session in the first, its second in the
/// second, and so on. Each statement's positions are ordered by session, so that statements
/// take their row locks in one order.
fn rounds(sessions: impl Iterator<Item = SessionId>) -> Vec<Vec<usize>> {
    let mut seen: HashMap<SessionId, usize> = HashMap::new();
    let mut rounds: Vec<Vec<(SessionId, usize)>> = Vec::new();
    for (i, session) in sessions.enumerate() {
        let n = seen.entry(session).or_default();
        if rounds.len() <= *n {
            rounds.push(Vec::new());
        }
        rounds[*n].push((session, i));
        *n += 1;
    }
    rounds
        .into_iter()
        .map(|mut round| {
            round.sort();
            round.into_iter().map(|(_, i)| i).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_written_twice_gets_a_statement_after_its_first() {
        let [a, b, c] = [3, 1, 2].map(|n| SessionId::from_random_bytes([n; 16]));
        let rounds = rounds([a, b, a, c, a].into_iter());
        assert_eq!(rounds.len(), 3);
        // b (1), c (2), a (3): by session.
        assert_eq!(rounds[0], [1, 3, 0]);
        assert_eq!(rounds[1], [2]);
        assert_eq!(rounds[2], [4]);
    }

    #[test]
    fn distinct_sessions_share_one_statement_ordered_by_session() {
        let ids: Vec<SessionId> = [9, 4, 7, 1, 5]
            .map(|n| SessionId::from_random_bytes([n; 16]))
            .to_vec();
        let rounds = rounds(ids.iter().copied());
        assert_eq!(rounds.len(), 1);
        let ordered: Vec<SessionId> = rounds[0].iter().map(|&i| ids[i]).collect();
        let mut sorted = ordered.clone();
        sorted.sort();
        assert_eq!(ordered, sorted);
        assert_eq!(ordered.len(), 5);
    }
}
