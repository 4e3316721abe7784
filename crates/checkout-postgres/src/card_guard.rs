//! The card-testing guard's counts over PostgreSQL (migration `2026-11-28-000020_card_guard`):
//! `card_guard_answers` keeps one row per processor answer (keyed hashes, never a card
//! number), `card_guard_proofs` the proofs of work spent (the primary key makes a spend
//! single-use across instances), and `card_guard_alerts` the flagged terminals, whose
//! changes `set_card_guard_alert` announces in the same transaction.
//!
//! The counts are one statement of indexed sub-selects (each over a partial index of the
//! declines), so a screened card post costs one round trip, and a recorded answer one insert.
//! The terminal's are capped (`TerminalCaps`): a busy terminal's thousands of approvals are
//! never all counted, only as many as its declines make relevant.

use async_trait::async_trait;
use checkout_domain::guard::{
    GuardCounts, GuardSubject, GuardWindows, TerminalCaps, TerminalGuardState,
};
use checkout_domain::ports::CardGuard;
use checkout_domain::values::{SessionId, TerminalNumber};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

use crate::availability::StoreContext;
use crate::schema::{card_guard_answers, card_guard_proofs};
use crate::store::PgStore;

const COUNTS_SQL: &str = "\
SELECT
  (SELECT count(*) FROM card_guard_answers
    WHERE session_id = $1 AND declined) AS session_declines,
  (SELECT count(*) FROM card_guard_answers
    WHERE $2::text IS NOT NULL AND address_key = $2 AND declined AND answered_at > $5)
    AS address_declines,
  (SELECT count(DISTINCT session_id) FROM card_guard_answers
    WHERE $3::text IS NOT NULL AND card_key = $3 AND declined AND answered_at > $6)
    AS card_sessions,
  (SELECT count(DISTINCT terminal_number) FROM card_guard_answers
    WHERE $3::text IS NOT NULL AND card_key = $3 AND declined AND answered_at > $6)
    AS card_terminals,
  d.n AS terminal_declines,
  (SELECT count(*) FROM (SELECT 1 FROM card_guard_answers
    WHERE terminal_number = $4 AND answered_at > $7
    LIMIT d.n * 100 / $9 + 1) a) AS terminal_posts,
  EXISTS (SELECT 1 FROM card_guard_alerts WHERE terminal_number = $4) AS alerted
FROM (SELECT count(*) AS n FROM (SELECT 1 FROM card_guard_answers
    WHERE terminal_number = $4 AND answered_at > $7 AND declined
    LIMIT $8) capped) d";

const STATE_SQL: &str = "\
SELECT
  count(*) FILTER (WHERE answered_at > $2) AS posts,
  count(*) FILTER (WHERE answered_at > $2 AND declined) AS declines,
  count(*) FILTER (WHERE answered_at > $3 AND declined) AS declines_kept,
  EXISTS (SELECT 1 FROM card_guard_alerts WHERE terminal_number = $1) AS alerted
FROM card_guard_answers WHERE terminal_number = $1";

#[derive(QueryableByName)]
struct CountsRow {
    #[diesel(sql_type = BigInt)]
    session_declines: i64,
    #[diesel(sql_type = BigInt)]
    address_declines: i64,
    #[diesel(sql_type = BigInt)]
    card_sessions: i64,
    #[diesel(sql_type = BigInt)]
    card_terminals: i64,
    #[diesel(sql_type = BigInt)]
    terminal_posts: i64,
    #[diesel(sql_type = BigInt)]
    terminal_declines: i64,
    #[diesel(sql_type = Bool)]
    alerted: bool,
}

#[derive(QueryableByName)]
struct StateRow {
    #[diesel(sql_type = BigInt)]
    posts: i64,
    #[diesel(sql_type = BigInt)]
    declines: i64,
    #[diesel(sql_type = BigInt)]
    declines_kept: i64,
    #[diesel(sql_type = Bool)]
    alerted: bool,
}

#[derive(QueryableByName)]
struct AlertRow {
    #[diesel(sql_type = Text)]
    terminal_number: String,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    session_id: Option<uuid::Uuid>,
}

#[derive(QueryableByName)]
struct Changed {
    #[diesel(sql_type = Bool)]
    changed: bool,
}

fn n(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

#[async_trait]
impl CardGuard for PgStore {
    async fn record_outcome(
        &self,
        subject: &GuardSubject,
        declined: bool,
        at: OffsetDateTime,
    ) -> anyhow::Result<()> {
        let mut conn = self.conn().await?;
        diesel::insert_into(card_guard_answers::table)
            .values((
                card_guard_answers::terminal_number.eq(subject.terminal.as_str()),
                card_guard_answers::session_id.eq(subject.session.as_uuid()),
                card_guard_answers::address_key.eq(subject.address.as_ref().map(|a| a.as_str())),
                card_guard_answers::card_key.eq(subject.card.as_ref().map(|c| c.as_str())),
                card_guard_answers::declined.eq(declined),
                card_guard_answers::answered_at.eq(at),
            ))
            .execute(&mut conn)
            .await
            .context("recording a card post's answer for the guard")?;
        Ok(())
    }

    async fn record_late_decline(
        &self,
        session: SessionId,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let changed = diesel::sql_query(
            "UPDATE card_guard_answers SET declined = true, answered_at = $2 WHERE id = \
             (SELECT id FROM card_guard_answers WHERE session_id = $1 AND NOT declined \
              ORDER BY answered_at DESC, id DESC LIMIT 1)",
        )
        .bind::<SqlUuid, _>(session.as_uuid())
        .bind::<Timestamptz, _>(at)
        .execute(&mut conn)
        .await
        .with_context(|| format!("recording a late decline of session {session}"))?;
        Ok(changed == 1)
    }

    async fn alerted_terminals(&self) -> anyhow::Result<Vec<(TerminalNumber, SessionId)>> {
        let mut conn = self.conn().await?;
        // The session of the terminal's latest `terminal.card_testing_suspected`: the post
        // that raised the alert (its event is written in the flag's transaction); else, the
        // event gone, the session of the terminal's latest answer.
        let rows: Vec<AlertRow> = diesel::sql_query(
            "SELECT a.terminal_number, coalesce( \
               (SELECT e.session_id FROM events e \
                 WHERE e.terminal_number = a.terminal_number \
                   AND e.type = 'terminal.card_testing_suspected' \
                 ORDER BY e.txid DESC, e.seq DESC LIMIT 1), \
               (SELECT g.session_id FROM card_guard_answers g \
                 WHERE g.terminal_number = a.terminal_number \
                 ORDER BY g.answered_at DESC LIMIT 1)) AS session_id \
             FROM card_guard_alerts a ORDER BY a.terminal_number",
        )
        .load(&mut conn)
        .await
        .context("reading the terminals under a card-testing alert")?;
        rows.into_iter()
            .filter_map(|row| Some((row.terminal_number, row.session_id?)))
            .map(|(terminal, session)| {
                Ok((
                    TerminalNumber::parse(&terminal).map_err(|e| {
                        anyhow::anyhow!("stored terminal number {terminal:?} is invalid: {e}")
                    })?,
                    SessionId::from_uuid(session),
                ))
            })
            .collect()
    }

    async fn forget_answers_before(&self, before: OffsetDateTime) -> anyhow::Result<u64> {
        let mut conn = self.conn().await?;
        let forgotten = diesel::delete(
            card_guard_answers::table.filter(card_guard_answers::answered_at.lt(before)),
        )
        .execute(&mut conn)
        .await
        .context("deleting the guard's old answers")?;
        Ok(forgotten as u64)
    }

    async fn counts(
        &self,
        subject: &GuardSubject,
        windows: &GuardWindows,
        caps: &TerminalCaps,
        now: OffsetDateTime,
    ) -> anyhow::Result<GuardCounts> {
        let mut conn = self.conn().await?;
        let row: CountsRow = diesel::sql_query(COUNTS_SQL)
            .bind::<SqlUuid, _>(subject.session.as_uuid())
            .bind::<Nullable<Text>, _>(subject.address.as_ref().map(|a| a.as_str()))
            .bind::<Nullable<Text>, _>(subject.card.as_ref().map(|c| c.as_str()))
            .bind::<Text, _>(subject.terminal.as_str())
            .bind::<Timestamptz, _>(now - windows.address)
            .bind::<Timestamptz, _>(now - windows.card)
            .bind::<Timestamptz, _>(now - windows.terminal)
            .bind::<BigInt, _>(i64::from(caps.declines))
            .bind::<BigInt, _>(i64::from(caps.rate_percent.max(1)))
            .get_result(&mut conn)
            .await
            .context("reading the card-testing guard's counts")?;
        Ok(GuardCounts {
            session_declines: n(row.session_declines),
            address_declines: n(row.address_declines),
            card_sessions: n(row.card_sessions),
            card_terminals: n(row.card_terminals),
            terminal_posts: n(row.terminal_posts),
            terminal_declines: n(row.terminal_declines),
            terminal_alerted: row.alerted,
        })
    }

    async fn spend_proof(
        &self,
        id: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        diesel::delete(card_guard_proofs::table.filter(card_guard_proofs::expires_at.lt(now)))
            .execute(&mut conn)
            .await
            .context("deleting expired proofs of work")?;
        let inserted = diesel::insert_into(card_guard_proofs::table)
            .values((
                card_guard_proofs::id.eq(id),
                card_guard_proofs::expires_at.eq(expires_at),
            ))
            .on_conflict_do_nothing()
            .execute(&mut conn)
            .await
            .context("spending a proof of work")?;
        Ok(inserted == 1)
    }

    async fn set_alert(
        &self,
        terminal: &TerminalNumber,
        alerted: bool,
        session: SessionId,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let row: Changed =
            diesel::sql_query("SELECT set_card_guard_alert($1, $2, $3, $4) AS changed")
                .bind::<Text, _>(terminal.as_str())
                .bind::<Bool, _>(alerted)
                .bind::<SqlUuid, _>(session.as_uuid())
                .bind::<Timestamptz, _>(at)
                .get_result(&mut conn)
                .await
                .with_context(|| {
                    format!("setting the card-testing alert of terminal {terminal}")
                })?;
        Ok(row.changed)
    }

    async fn terminal_state(
        &self,
        terminal: &TerminalNumber,
        windows: &GuardWindows,
        now: OffsetDateTime,
    ) -> anyhow::Result<TerminalGuardState> {
        let longest = windows.address.max(windows.card).max(windows.terminal);
        let mut conn = self.conn().await?;
        let row: StateRow = diesel::sql_query(STATE_SQL)
            .bind::<Text, _>(terminal.as_str())
            .bind::<Timestamptz, _>(now - windows.terminal)
            .bind::<Timestamptz, _>(now - longest)
            .get_result(&mut conn)
            .await
            .with_context(|| format!("reading the guard state of terminal {terminal}"))?;
        Ok(TerminalGuardState {
            alerted: row.alerted,
            posts: n(row.posts),
            declines: n(row.declines),
            declines_kept: n(row.declines_kept),
        })
    }

    async fn clear_terminal(&self, terminal: &TerminalNumber) -> anyhow::Result<u64> {
        let mut conn = self.conn().await?;
        let forgotten = diesel::delete(
            card_guard_answers::table
                .filter(card_guard_answers::terminal_number.eq(terminal.as_str())),
        )
        .execute(&mut conn)
        .await
        .with_context(|| format!("clearing the guard's answers of terminal {terminal}"))?;
        diesel::delete(
            crate::schema::card_guard_alerts::table
                .filter(crate::schema::card_guard_alerts::terminal_number.eq(terminal.as_str())),
        )
        .execute(&mut conn)
        .await
        .with_context(|| format!("lowering the card-testing alert of terminal {terminal}"))?;
        Ok(forgotten as u64)
    }
}
