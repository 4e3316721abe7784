//! `EventLog` over PostgreSQL: the `events` table, which a trigger on `payment_sessions`
//! writes in the same transaction as every state change merchants are told about (see the
//! migration `2026-11-24-000002_events`).

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::events::{EventCursor, EventSubject, EventType, PaymentEvent};
use checkout_domain::ports::EventLog;
use checkout_domain::session::{DisputeStatus, PaymentSession};
use checkout_domain::values::{RefundId, TerminalNumber};
use diesel::sql_types::{BigInt, Nullable, Numeric, SmallInt, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use rust_decimal::Decimal;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::models::{session_from_rows, SessionRow};
use crate::store::PgStore;
use crate::{card_attempts, notices};

/// The events of `$1` after the cursor (`$2` transaction, `$3` sequence; NULL: from the
/// start), at most `$4`, with their sessions. Only events of transactions older than every
/// transaction still running are shown (`pg_snapshot_xmin`), in (transaction, sequence) order:
/// an event that commits later always sorts after everything shown before, so a cursor never
/// skips one.
const EVENTS_AFTER_SQL: &str = "\
    SELECT {EVENT_COLUMNS}, s.* \
    FROM events e JOIN payment_sessions s ON s.id = e.session_id \
    WHERE e.terminal_number = $1 \
      AND e.txid < pg_snapshot_xmin(pg_current_snapshot()) \
      AND ($2::text IS NULL OR (e.txid, e.seq) > ($2::text::xid8, $3)) \
    ORDER BY e.txid, e.seq \
    LIMIT $4";

/// The columns of an [`EventRow`] from `events e` (with `s.*` from its `payment_sessions s`).
pub(crate) const EVENT_COLUMNS: &str = "\
    e.id AS event_id, e.type AS event_type, e.state AS event_state, \
    e.occurred_at AS event_occurred_at, e.txid::text AS event_txid, e.seq AS event_seq, \
    e.captured_amount AS event_captured_amount, e.refunded_amount AS event_refunded_amount, \
    e.refund_id AS event_refund_id, e.dispute_reference AS event_dispute_reference, \
    e.dispute_status AS event_dispute_status";

/// One event with its session: a row of [`EVENTS_AFTER_SQL`], and embedded in other queries
/// that select [`EVENT_COLUMNS`] and `s.*`.
#[derive(QueryableByName)]
pub(crate) struct EventRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    event_id: Uuid,
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = SmallInt)]
    event_state: i16,
    #[diesel(sql_type = Timestamptz)]
    event_occurred_at: OffsetDateTime,
    #[diesel(sql_type = Text)]
    event_txid: String,
    #[diesel(sql_type = BigInt)]
    event_seq: i64,
    #[diesel(sql_type = Nullable<Numeric>)]
    event_captured_amount: Option<Decimal>,
    #[diesel(sql_type = Numeric)]
    event_refunded_amount: Decimal,
    #[diesel(sql_type = Nullable<diesel::sql_types::Uuid>)]
    event_refund_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    event_dispute_reference: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    event_dispute_status: Option<String>,
    #[diesel(embed)]
    session: SessionRow,
}

impl EventRow {
    pub(crate) fn into_event(self) -> anyhow::Result<PaymentEvent> {
        let kind = EventType::parse(&self.event_type)
            .with_context(|| format!("stored event type {:?} is unknown", self.event_type))?;
        let transaction = self
            .event_txid
            .parse()
            .with_context(|| format!("stored transaction id {:?}", self.event_txid))?;
        // The session as of the event: its state, last change and amounts are the event's.
        let mut row = self.session;
        row.state = self.event_state;
        row.updated_at = self.event_occurred_at;
        row.captured_amount = self.event_captured_amount;
        row.refunded_amount = self.event_refunded_amount;
        let session = session_from_rows(row, Vec::new(), Vec::new())?;
        let about = match (
            self.event_refund_id,
            self.event_dispute_reference,
            self.event_dispute_status,
        ) {
            (Some(refund), _, _) => Some(EventSubject::Refund(RefundId::from_uuid(refund))),
            (None, Some(reference), Some(status)) => Some(EventSubject::Dispute {
                reference,
                status: DisputeStatus::parse(&status)
                    .with_context(|| format!("stored dispute status {status:?} is unknown"))?,
            }),
            _ => None,
        };
        Ok(PaymentEvent {
            id: self.event_id,
            kind,
            occurred_at: self.event_occurred_at,
            cursor: EventCursor {
                transaction,
                sequence: u64::try_from(self.event_seq).unwrap_or_default(),
            },
            session,
            about,
        })
    }
}

/// Fills the card attempts and disputes of the sessions of `events` (the status record each
/// event carries lists both), with one statement each.
pub(crate) async fn fill_events<'a>(
    conn: &diesel_async::AsyncPgConnection,
    events: impl IntoIterator<Item = &'a mut PaymentEvent>,
) -> anyhow::Result<()> {
    let mut sessions: Vec<&mut PaymentSession> =
        events.into_iter().map(|e| &mut e.session).collect();
    card_attempts::fill(conn, sessions.iter_mut().map(|s| &mut **s)).await?;
    notices::fill_disputes(conn, sessions).await
}

#[async_trait]
impl EventLog for PgStore {
    async fn events_after(
        &self,
        terminal: &TerminalNumber,
        after: Option<EventCursor>,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentEvent>> {
        let mut conn = self.conn().await?;
        let rows: Vec<EventRow> =
            diesel::sql_query(EVENTS_AFTER_SQL.replace("{EVENT_COLUMNS}", EVENT_COLUMNS))
                .bind::<Text, _>(terminal.as_str())
                .bind::<Nullable<Text>, _>(after.map(|c| c.transaction.to_string()))
                .bind::<BigInt, _>(
                    after.map_or(0, |c| i64::try_from(c.sequence).unwrap_or(i64::MAX)),
                )
                .bind::<BigInt, _>(i64::from(limit))
                .load(&mut conn)
                .await
                .with_context(|| format!("reading the events of terminal {terminal}"))?;
        let mut events = rows
            .into_iter()
            .map(EventRow::into_event)
            .collect::<anyhow::Result<Vec<_>>>()?;
        fill_events(&conn, &mut events).await?;
        Ok(events)
    }

    async fn cursor_issued(
        &self,
        terminal: &TerminalNumber,
        cursor: EventCursor,
    ) -> anyhow::Result<bool> {
        #[derive(QueryableByName)]
        struct Found {
            #[diesel(sql_type = diesel::sql_types::Bool)]
            found: bool,
        }
        let Ok(sequence) = i64::try_from(cursor.sequence) else {
            return Ok(false);
        };
        let mut conn = self.conn().await?;
        let row: Found = diesel::sql_query(
            "SELECT EXISTS (SELECT 1 FROM events WHERE terminal_number = $1 \
               AND txid = $2::text::xid8 AND seq = $3) AS found",
        )
        .bind::<Text, _>(terminal.as_str())
        .bind::<Text, _>(cursor.transaction.to_string())
        .bind::<BigInt, _>(sequence)
        .get_result(&mut conn)
        .await
        .with_context(|| format!("checking an events cursor of terminal {terminal}"))?;
        Ok(row.found)
    }
}

#[cfg(test)]
mod tests {
    use checkout_domain::events::EventType;
    use checkout_domain::session::SessionState;

    /// The trigger's mapping (`session_change_event_type` in the migration) is
    /// `EventType::of_state` for a change into a state, and `EventType::of_change` for the
    /// merchant's capture.
    #[test]
    fn the_trigger_maps_states_as_the_domain_does() {
        let migration = include_str!("../../../migrations/2026-11-24-000020_lifecycle/up.sql");
        for state in SessionState::ALL {
            let line = format!("WHEN {} THEN", state.code());
            match EventType::of_state(state) {
                Some(kind) => assert!(
                    migration.contains(&format!("{line} '{}'", kind.as_str())),
                    "{state}"
                ),
                None => assert!(!migration.contains(&line), "{state}"),
            }
        }
        let capture =
            EventType::of_change(SessionState::ApprovedTransaction, SessionState::Successful);
        assert_eq!(capture, Some(EventType::PaymentCaptured));
        assert!(migration.contains(&format!(
            "WHEN old_state = {} AND new_state = {} THEN 'payment.captured'",
            SessionState::ApprovedTransaction.code(),
            SessionState::Successful.code()
        )));
        assert!(migration.contains("THEN 'payment.refunded'"));
    }

    /// The processor's release of a held authorisation is announced as the domain names it,
    /// in the function the last migration to define it left.
    #[test]
    fn the_trigger_names_an_expired_authorisation_as_the_domain_does() {
        let migration =
            include_str!("../../../migrations/2026-11-28-000003_processor_events/up.sql");
        let expired =
            EventType::of_change(SessionState::ApprovedTransaction, SessionState::Expired);
        assert_eq!(expired, Some(EventType::PaymentAuthorizationExpired));
        assert!(migration.contains(&format!(
            "WHEN old_state = {} AND new_state = {} THEN '{}'",
            SessionState::ApprovedTransaction.code(),
            SessionState::Expired.code(),
            EventType::PaymentAuthorizationExpired.as_str()
        )));
    }
}
