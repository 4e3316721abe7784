//! `WebhookStore` over PostgreSQL: `webhook_endpoints`, `webhook_deliveries` (queued by a
//! trigger on `events`, in the event's transaction) and `webhook_delivery_attempts` (see the
//! migration `2026-11-24-000030_webhooks`).

use std::collections::HashMap;

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::events::EventType;
use checkout_domain::ports::WebhookStore;
use checkout_domain::values::TerminalNumber;
use checkout_domain::webhooks::{
    AttemptResult, DeliveryLog, DeliveryState, DueDelivery, EventFilter, LoggedAttempt, NextStep,
    SealedSecret, WebhookBacklog, WebhookEndpoint,
};
use diesel::sql_types::{
    Array, BigInt, Binary, Bool, Integer, Nullable, SmallInt, Text, Timestamptz,
};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::events::{self, EventRow, EVENT_COLUMNS};
use crate::store::PgStore;

type SqlUuid = diesel::sql_types::Uuid;

/// One row of `webhook_endpoints`, without its secrets.
#[derive(QueryableByName)]
struct EndpointRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    terminal_number: String,
    #[diesel(sql_type = Text)]
    url: String,
    #[diesel(sql_type = Nullable<Array<Text>>)]
    events: Option<Vec<String>>,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

fn filter_of(events: Option<Vec<String>>) -> anyhow::Result<EventFilter> {
    let Some(names) = events else {
        return Ok(EventFilter::All);
    };
    names
        .iter()
        .map(|n| EventType::parse(n).with_context(|| format!("stored event type {n:?}")))
        .collect::<anyhow::Result<Vec<_>>>()
        .map(EventFilter::Only)
}

impl EndpointRow {
    fn into_endpoint(self) -> anyhow::Result<WebhookEndpoint> {
        Ok(WebhookEndpoint {
            id: self.id,
            terminal: TerminalNumber::parse(&self.terminal_number)
                .map_err(|e| anyhow::anyhow!("stored terminal number: {e}"))?,
            url: self.url,
            events: filter_of(self.events)?,
            created_at: self.created_at,
        })
    }
}

const ENDPOINT_COLUMNS: &str = "id, terminal_number, url, events, created_at";

/// Claims due deliveries under a new random claim each: `$1` now, `$2` the lease's end, `$3`
/// how many. Deliveries of deleted endpoints are never claimed.
const CLAIM_SQL: &str = "\
    WITH due AS ( \
        SELECT d.id FROM webhook_deliveries d \
        JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.deleted_at IS NULL \
        WHERE d.state = 'pending' AND d.next_attempt_at <= $1 \
          AND (d.claimed_until IS NULL OR d.claimed_until < $1) \
        ORDER BY d.next_attempt_at \
        LIMIT $3 \
        FOR UPDATE OF d SKIP LOCKED \
    ), claimed AS ( \
        UPDATE webhook_deliveries d SET claim = gen_random_uuid(), claimed_until = $2 \
        FROM due WHERE d.id = due.id \
        RETURNING d.id, d.claim, d.attempts, d.endpoint_id, d.event_id \
    ) \
    SELECT c.id AS delivery_id, c.claim AS delivery_claim, c.attempts AS delivery_attempts, w.id AS endpoint_id, \
           w.url AS endpoint_url, w.secret AS endpoint_secret, \
           CASE WHEN w.previous_secret_until > $1 THEN w.previous_secret END AS previous_secret, \
           {EVENT_COLUMNS}, s.* \
    FROM claimed c \
    JOIN webhook_endpoints w ON w.id = c.endpoint_id \
    JOIN events e ON e.id = c.event_id \
    JOIN payment_sessions s ON s.id = e.session_id";

/// One row of [`CLAIM_SQL`].
#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = SqlUuid)]
    delivery_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    delivery_claim: Uuid,
    #[diesel(sql_type = Integer)]
    delivery_attempts: i32,
    #[diesel(sql_type = SqlUuid)]
    endpoint_id: Uuid,
    #[diesel(sql_type = Text)]
    endpoint_url: String,
    #[diesel(sql_type = Binary)]
    endpoint_secret: Vec<u8>,
    #[diesel(sql_type = Nullable<Binary>)]
    previous_secret: Option<Vec<u8>>,
    #[diesel(embed)]
    event: EventRow,
}

/// One row of the deliveries log.
#[derive(QueryableByName)]
struct DeliveryRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    event_id: Uuid,
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Timestamptz)]
    next_attempt_at: OffsetDateTime,
    #[diesel(sql_type = Bool)]
    redelivery: bool,
}

/// One row of `webhook_delivery_attempts`.
#[derive(QueryableByName)]
struct AttemptRow {
    #[diesel(sql_type = SqlUuid)]
    delivery_id: Uuid,
    #[diesel(sql_type = Timestamptz)]
    attempted_at: OffsetDateTime,
    #[diesel(sql_type = Integer)]
    duration_ms: i32,
    #[diesel(sql_type = Nullable<SmallInt>)]
    status: Option<i16>,
    #[diesel(sql_type = Nullable<Text>)]
    error: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    response_excerpt: Option<String>,
}

/// A count and a time.
#[derive(QueryableByName)]
struct BacklogRow {
    #[diesel(sql_type = BigInt)]
    due: i64,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    oldest: Option<OffsetDateTime>,
}

/// One id.
#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

#[async_trait]
impl WebhookStore for PgStore {
    async fn insert_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        secret: &SealedSecret,
    ) -> anyhow::Result<()> {
        let events = match &endpoint.events {
            EventFilter::All => None,
            EventFilter::Only(kinds) => Some(kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>()),
        };
        let mut conn = self.conn().await?;
        diesel::sql_query(
            "INSERT INTO webhook_endpoints (id, terminal_number, url, events, secret, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind::<SqlUuid, _>(endpoint.id)
        .bind::<Text, _>(endpoint.terminal.as_str())
        .bind::<Text, _>(&endpoint.url)
        .bind::<Nullable<Array<Text>>, _>(events)
        .bind::<Binary, _>(&secret.0)
        .bind::<Timestamptz, _>(endpoint.created_at)
        .execute(&mut conn)
        .await
        .with_context(|| format!("saving webhook endpoint {}", endpoint.id))?;
        Ok(())
    }

    async fn endpoints(&self, terminal: &TerminalNumber) -> anyhow::Result<Vec<WebhookEndpoint>> {
        let mut conn = self.conn().await?;
        let rows: Vec<EndpointRow> = diesel::sql_query(format!(
            "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints \
             WHERE terminal_number = $1 AND deleted_at IS NULL ORDER BY created_at, id"
        ))
        .bind::<Text, _>(terminal.as_str())
        .load(&mut conn)
        .await
        .with_context(|| format!("listing the webhook endpoints of terminal {terminal}"))?;
        rows.into_iter().map(EndpointRow::into_endpoint).collect()
    }

    async fn endpoint(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
    ) -> anyhow::Result<Option<WebhookEndpoint>> {
        let mut conn = self.conn().await?;
        let rows: Vec<EndpointRow> = diesel::sql_query(format!(
            "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints \
             WHERE terminal_number = $1 AND id = $2 AND deleted_at IS NULL"
        ))
        .bind::<Text, _>(terminal.as_str())
        .bind::<SqlUuid, _>(id)
        .load(&mut conn)
        .await
        .with_context(|| format!("reading webhook endpoint {id}"))?;
        rows.into_iter()
            .next()
            .map(EndpointRow::into_endpoint)
            .transpose()
    }

    async fn delete_endpoint(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        // One statement: the endpoint and its pending deliveries go together.
        let gone: Vec<IdRow> = diesel::sql_query(
            "WITH gone AS ( \
                 UPDATE webhook_endpoints SET deleted_at = $3 \
                 WHERE terminal_number = $1 AND id = $2 AND deleted_at IS NULL RETURNING id \
             ), cancelled AS ( \
                 UPDATE webhook_deliveries SET state = 'cancelled', finished_at = $3, \
                        claim = NULL, claimed_until = NULL \
                 WHERE endpoint_id IN (SELECT id FROM gone) AND state = 'pending' \
             ) SELECT id FROM gone",
        )
        .bind::<Text, _>(terminal.as_str())
        .bind::<SqlUuid, _>(id)
        .bind::<Timestamptz, _>(now)
        .load(&mut conn)
        .await
        .with_context(|| format!("deleting webhook endpoint {id}"))?;
        Ok(!gone.is_empty())
    }

    async fn rotate_secret(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
        secret: &SealedSecret,
        previous_until: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let rotated = diesel::sql_query(
            "UPDATE webhook_endpoints \
             SET previous_secret = secret, previous_secret_until = $4, secret = $3 \
             WHERE terminal_number = $1 AND id = $2 AND deleted_at IS NULL",
        )
        .bind::<Text, _>(terminal.as_str())
        .bind::<SqlUuid, _>(id)
        .bind::<Binary, _>(&secret.0)
        .bind::<Timestamptz, _>(previous_until)
        .execute(&mut conn)
        .await
        .with_context(|| format!("rotating the secret of webhook endpoint {id}"))?;
        Ok(rotated == 1)
    }

    async fn claim_due(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<DueDelivery>> {
        let mut conn = self.conn().await?;
        let rows: Vec<ClaimedRow> =
            diesel::sql_query(CLAIM_SQL.replace("{EVENT_COLUMNS}", EVENT_COLUMNS))
                .bind::<Timestamptz, _>(now)
                .bind::<Timestamptz, _>(lease_until)
                .bind::<BigInt, _>(i64::from(limit))
                .load(&mut conn)
                .await
                .context("claiming due webhook deliveries")?;
        let mut due = rows
            .into_iter()
            .map(|row| {
                let mut secrets = vec![SealedSecret(row.endpoint_secret)];
                secrets.extend(row.previous_secret.map(SealedSecret));
                Ok(DueDelivery {
                    id: row.delivery_id,
                    claim: row.delivery_claim,
                    attempts_before: u32::try_from(row.delivery_attempts).unwrap_or_default(),
                    endpoint_id: row.endpoint_id,
                    url: row.endpoint_url,
                    secrets,
                    event: row.event.into_event()?,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        events::fill_events(&conn, due.iter_mut().map(|d| &mut d.event)).await?;
        Ok(due)
    }

    async fn record_attempt(
        &self,
        delivery: &DueDelivery,
        result: &AttemptResult,
        next: NextStep,
    ) -> anyhow::Result<bool> {
        let (state, next_at, finished) = match next {
            NextStep::Delivered => (DeliveryState::Delivered, None, Some(result.attempted_at)),
            NextStep::RetryAt(at) => (DeliveryState::Pending, Some(at), None),
            NextStep::GiveUp => (DeliveryState::Failed, None, Some(result.attempted_at)),
        };
        let duration_ms = i32::try_from(result.duration.as_millis()).unwrap_or(i32::MAX);
        let status = result.status.map(|s| i16::try_from(s).unwrap_or(i16::MAX));
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            diesel::sql_query(
                "INSERT INTO webhook_delivery_attempts \
                 (delivery_id, attempted_at, duration_ms, status, error, response_excerpt) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind::<SqlUuid, _>(delivery.id)
            .bind::<Timestamptz, _>(result.attempted_at)
            .bind::<Integer, _>(duration_ms)
            .bind::<Nullable<SmallInt>, _>(status)
            .bind::<Nullable<Text>, _>(result.error.as_deref())
            .bind::<Nullable<Text>, _>(result.response_excerpt.as_deref())
            .execute(conn)
            .await?;
            diesel::sql_query(
                "UPDATE webhook_deliveries \
                 SET attempts = attempts + 1, state = $3, \
                     next_attempt_at = COALESCE($4, next_attempt_at), finished_at = $5, \
                     claim = NULL, claimed_until = NULL \
                 WHERE id = $1 AND claim = $2 AND state = 'pending'",
            )
            .bind::<SqlUuid, _>(delivery.id)
            .bind::<SqlUuid, _>(delivery.claim)
            .bind::<Text, _>(state.as_str())
            .bind::<Nullable<Timestamptz>, _>(next_at)
            .bind::<Nullable<Timestamptz>, _>(finished)
            .execute(conn)
            .await
        })
        .await
        .map(|changed| changed == 1)
        .with_context(|| format!("recording an attempt of webhook delivery {}", delivery.id))
    }

    async fn deliveries(
        &self,
        terminal: &TerminalNumber,
        endpoint: Uuid,
        limit: u32,
    ) -> anyhow::Result<Option<Vec<DeliveryLog>>> {
        if self.endpoint(terminal, endpoint).await?.is_none() {
            return Ok(None);
        }
        let mut conn = self.conn().await?;
        let rows: Vec<DeliveryRow> = diesel::sql_query(
            "SELECT d.id, d.event_id, e.type AS event_type, d.state, d.created_at, \
                    d.next_attempt_at, d.redelivery \
             FROM webhook_deliveries d JOIN events e ON e.id = d.event_id \
             WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC, d.id LIMIT $2",
        )
        .bind::<SqlUuid, _>(endpoint)
        .bind::<BigInt, _>(i64::from(limit))
        .load(&mut conn)
        .await
        .with_context(|| format!("reading the deliveries of webhook endpoint {endpoint}"))?;
        let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
        let attempts: Vec<AttemptRow> = diesel::sql_query(
            "SELECT delivery_id, attempted_at, duration_ms, status, error, response_excerpt \
             FROM webhook_delivery_attempts WHERE delivery_id = ANY($1) ORDER BY id",
        )
        .bind::<Array<SqlUuid>, _>(&ids)
        .load(&mut conn)
        .await
        .with_context(|| format!("reading the attempts of webhook endpoint {endpoint}"))?;
        let mut by_delivery: HashMap<Uuid, Vec<LoggedAttempt>> = HashMap::new();
        for a in attempts {
            by_delivery
                .entry(a.delivery_id)
                .or_default()
                .push(LoggedAttempt {
                    attempted_at: a.attempted_at,
                    duration_ms: u32::try_from(a.duration_ms).unwrap_or_default(),
                    status: a.status.and_then(|s| u16::try_from(s).ok()),
                    error: a.error,
                    response_excerpt: a.response_excerpt,
                });
        }
        rows.into_iter()
            .map(|r| {
                let state = DeliveryState::parse(&r.state)
                    .with_context(|| format!("stored delivery state {:?}", r.state))?;
                Ok(DeliveryLog {
                    id: r.id,
                    event_id: r.event_id,
                    event_type: EventType::parse(&r.event_type)
                        .with_context(|| format!("stored event type {:?}", r.event_type))?,
                    state,
                    created_at: r.created_at,
                    next_attempt_at: (state == DeliveryState::Pending).then_some(r.next_attempt_at),
                    redelivery: r.redelivery,
                    attempts: by_delivery.remove(&r.id).unwrap_or_default(),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()
            .map(Some)
    }

    async fn redeliver(
        &self,
        terminal: &TerminalNumber,
        event: Uuid,
        now: OffsetDateTime,
    ) -> anyhow::Result<Option<Vec<Uuid>>> {
        let mut conn = self.conn().await?;
        let found: Vec<IdRow> =
            diesel::sql_query("SELECT id FROM events WHERE id = $1 AND terminal_number = $2")
                .bind::<SqlUuid, _>(event)
                .bind::<Text, _>(terminal.as_str())
                .load(&mut conn)
                .await
                .with_context(|| format!("reading event {event}"))?;
        if found.is_empty() {
            return Ok(None);
        }
        let queued: Vec<IdRow> = diesel::sql_query(
            "INSERT INTO webhook_deliveries (endpoint_id, event_id, redelivery, next_attempt_at) \
             SELECT w.id, e.id, true, $3 FROM events e JOIN webhook_endpoints w \
               ON w.terminal_number = e.terminal_number AND w.deleted_at IS NULL \
              AND (w.events IS NULL OR e.type = ANY (w.events)) \
             WHERE e.id = $1 AND e.terminal_number = $2 \
             RETURNING id",
        )
        .bind::<SqlUuid, _>(event)
        .bind::<Text, _>(terminal.as_str())
        .bind::<Timestamptz, _>(now)
        .load(&mut conn)
        .await
        .with_context(|| format!("queueing event {event} again"))?;
        Ok(Some(queued.into_iter().map(|r| r.id).collect()))
    }

    async fn backlog(&self, now: OffsetDateTime) -> anyhow::Result<WebhookBacklog> {
        let mut conn = self.conn().await?;
        let row: BacklogRow = diesel::sql_query(
            "SELECT count(*) AS due, min(d.next_attempt_at) AS oldest \
             FROM webhook_deliveries d \
             JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.deleted_at IS NULL \
             WHERE d.state = 'pending' AND d.next_attempt_at <= $1",
        )
        .bind::<Timestamptz, _>(now)
        .get_result(&mut conn)
        .await
        .context("measuring the webhook backlog")?;
        Ok(WebhookBacklog {
            due: u64::try_from(row.due).unwrap_or_default(),
            oldest_due_at: row.oldest,
        })
    }
}
