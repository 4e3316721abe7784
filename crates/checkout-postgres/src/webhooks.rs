//! `WebhookStore` over PostgreSQL: `webhook_endpoints` (with each endpoint's health and
//! circuit), `webhook_deliveries` (queued by a trigger on `events`, in the event's
//! transaction), `webhook_delivery_attempts` and `webhook_redeliveries` (see the migrations
//! `2026-11-24-000030_webhooks` and `2026-11-28-000010_fair_webhooks`).
//!
//! The fair claim ([`CLAIM_SQL`]) is one statement run under a transaction-level advisory
//! lock ([`CLAIM_LOCK`]): claims take turns across every instance, each reading the leases
//! the ones before it committed, so that the bounds on attempts in flight per endpoint and
//! per terminal hold for the whole fleet. A claim is short (it only reads and leases rows),
//! and the attempts run after it has committed.

use std::collections::HashMap;

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::events::EventType;
use checkout_domain::ports::WebhookStore;
use checkout_domain::values::TerminalNumber;
use checkout_domain::webhooks::{
    AttemptResult, DeliveryCursor, DeliveryLog, DeliveryPage, DeliveryState, Disabled, DueDelivery,
    EndpointHealth, EventFilter, FairShare, LoggedAttempt, NextStep, Redelivered, RedeliveryLimits,
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
    #[diesel(embed)]
    health: HealthRow,
}

/// An endpoint's health columns.
#[derive(QueryableByName)]
struct HealthRow {
    #[diesel(sql_type = Integer)]
    consecutive_failures: i32,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    failing_since: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    circuit_open_until: Option<OffsetDateTime>,
    #[diesel(sql_type = Integer)]
    circuit_openings: i32,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    disabled_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Text>)]
    disabled_reason: Option<String>,
}

impl HealthRow {
    fn into_health(self) -> EndpointHealth {
        EndpointHealth {
            consecutive_failures: u32::try_from(self.consecutive_failures).unwrap_or_default(),
            failing_since: self.failing_since,
            circuit_open_until: self.circuit_open_until,
            circuit_openings: u32::try_from(self.circuit_openings).unwrap_or_default(),
            disabled: self.disabled_at.map(|at| Disabled {
                at,
                reason: self.disabled_reason.unwrap_or_default(),
            }),
        }
    }
}

/// The health columns, in [`HealthRow`]'s order.
const HEALTH_COLUMNS: &str = "consecutive_failures, failing_since, circuit_open_until, \
                              circuit_openings, disabled_at, disabled_reason";

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
            health: self.health.into_health(),
        })
    }
}

const ENDPOINT_COLUMNS: &str = "id, terminal_number, url, events, created_at, \
     consecutive_failures, failing_since, circuit_open_until, circuit_openings, disabled_at, \
     disabled_reason";

/// The advisory lock claims take turns on (transaction-level: released at commit).
pub const CLAIM_LOCK: i64 = 0x7768_6b5f_636c_6169;

/// Claims due deliveries fairly, each under a new random claim: `$1` now, `$2` the lease's
/// end, `$3` how many at most, `$4` attempts in flight per healthy endpoint, `$5` per
/// terminal. In order:
///
/// - `live`: the leases in flight (claimed, not run out), per endpoint;
/// - `ready`: the endpoints with a delivery due and unclaimed that may take one now (live,
///   enabled, circuit not open), with the room each has left: `$4`, or 1 while its last attempt
///   failed, less its leases;
/// - `terminal_room`: what each terminal has left of `$5`;
/// - `candidates`: each ready endpoint's oldest due deliveries, as many as its room, numbered
///   (`turn`) oldest first;
/// - `ranked`: within each terminal, one delivery per endpoint per turn, the endpoint served
///   longest ago first (`terminal_turn`), cut at the terminal's room;
/// - `picked`: every terminal's first before any terminal's second, then the endpoint served
///   longest ago first, at most `$3`;
/// - `locked`, `claimed`: leased, skipping rows another transaction holds;
/// - `served`: the endpoints' `last_claimed_at`, for the next claim's turns.
const CLAIM_SQL: &str = "\
    WITH live AS ( \
        SELECT d.endpoint_id, count(*) AS n FROM webhook_deliveries d \
        WHERE d.state = 'pending' AND d.claimed_until >= $1 \
        GROUP BY d.endpoint_id \
    ), due_endpoints AS ( \
        SELECT DISTINCT d.endpoint_id FROM webhook_deliveries d \
        WHERE d.state = 'pending' AND d.next_attempt_at <= $1 \
          AND (d.claimed_until IS NULL OR d.claimed_until < $1) \
    ), ready AS ( \
        SELECT w.id, w.terminal_number, w.last_claimed_at, \
               (CASE WHEN w.consecutive_failures > 0 THEN 1 ELSE $4 END) \
                   - COALESCE(l.n, 0) AS room \
        FROM due_endpoints de \
        JOIN webhook_endpoints w ON w.id = de.endpoint_id \
        LEFT JOIN live l ON l.endpoint_id = w.id \
        WHERE w.deleted_at IS NULL AND w.disabled_at IS NULL \
          AND (w.circuit_open_until IS NULL OR w.circuit_open_until <= $1) \
    ), terminal_room AS ( \
        SELECT w.terminal_number, $5 - sum(l.n) AS room \
        FROM live l JOIN webhook_endpoints w ON w.id = l.endpoint_id \
        GROUP BY w.terminal_number \
    ), candidates AS ( \
        SELECT c.id, r.id AS endpoint_id, r.terminal_number, r.last_claimed_at, c.turn \
        FROM ready r \
        CROSS JOIN LATERAL ( \
            SELECT d.id, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS turn \
            FROM webhook_deliveries d \
            WHERE d.endpoint_id = r.id AND d.state = 'pending' AND d.next_attempt_at <= $1 \
              AND (d.claimed_until IS NULL OR d.claimed_until < $1) \
            ORDER BY d.next_attempt_at, d.id \
            LIMIT GREATEST(r.room, 0) \
        ) c \
        WHERE r.room > 0 \
    ), ranked AS ( \
        SELECT c.id, c.turn, c.endpoint_id, c.last_claimed_at, \
               row_number() OVER (PARTITION BY c.terminal_number \
                   ORDER BY c.turn, c.last_claimed_at NULLS FIRST, c.endpoint_id) AS terminal_turn, \
               COALESCE(t.room, $5) AS terminal_room \
        FROM candidates c LEFT JOIN terminal_room t ON t.terminal_number = c.terminal_number \
    ), picked AS ( \
        SELECT id FROM ranked WHERE terminal_turn <= terminal_room \
        ORDER BY terminal_turn, last_claimed_at NULLS FIRST, turn, endpoint_id \
        LIMIT $3 \
    ), locked AS ( \
        SELECT d.id FROM webhook_deliveries d JOIN picked p ON p.id = d.id \
        WHERE d.state = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until < $1) \
        FOR UPDATE OF d SKIP LOCKED \
    ), claimed AS ( \
        UPDATE webhook_deliveries d SET claim = gen_random_uuid(), claimed_until = $2 \
        FROM locked WHERE d.id = locked.id \
        RETURNING d.id, d.claim, d.attempts, d.endpoint_id, d.event_id \
    ), served AS ( \
        UPDATE webhook_endpoints w SET last_claimed_at = $1 \
        WHERE w.id IN (SELECT endpoint_id FROM claimed) \
    ) \
    SELECT c.id AS delivery_id, c.claim AS delivery_claim, c.attempts AS delivery_attempts, w.id AS endpoint_id, \
           w.url AS endpoint_url, w.secret AS endpoint_secret, \
           CASE WHEN w.previous_secret_until > $1 THEN w.previous_secret END AS previous_secret, \
           w.consecutive_failures, w.failing_since, w.circuit_open_until, w.circuit_openings, \
           w.disabled_at, w.disabled_reason, \
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
    health: HealthRow,
    #[diesel(embed)]
    event: EventRow,
}

/// One row of the deliveries log.
#[derive(QueryableByName)]
struct DeliveryRow {
    #[diesel(sql_type = BigInt)]
    seq: i64,
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

/// The requests that fill each redelivery limit: the `per_event`-th and `per_terminal`-th
/// newest in the window (absent while there are fewer).
#[derive(QueryableByName)]
struct RedeliveryCounts {
    #[diesel(sql_type = Nullable<Timestamptz>)]
    event_full: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    terminal_full: Option<OffsetDateTime>,
}

/// Takes the transaction-level advisory lock of `terminal`'s `what` (endpoints,
/// redeliveries): racing requests of one terminal take turns, other terminals' do not wait.
async fn lock_terminal(
    conn: &mut diesel_async::AsyncPgConnection,
    what: &str,
    terminal: &TerminalNumber,
) -> diesel::QueryResult<usize> {
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
        .bind::<Text, _>(format!("webhook {what} {}", terminal.as_str()))
        .execute(conn)
        .await
}

#[async_trait]
impl WebhookStore for PgStore {
    async fn insert_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        secret: &SealedSecret,
        max_per_terminal: u32,
    ) -> anyhow::Result<bool> {
        let events = match &endpoint.events {
            EventFilter::All => None,
            EventFilter::Only(kinds) => Some(kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>()),
        };
        let mut conn = self.conn().await?;
        // The count and the insert under the terminal's lock: racing creates take turns.
        let inserted = conn
            .transaction(async |conn| {
                lock_terminal(conn, "endpoints", &endpoint.terminal).await?;
                diesel::sql_query(
                    "INSERT INTO webhook_endpoints \
                     (id, terminal_number, url, events, secret, created_at) \
                     SELECT $1, $2, $3, $4, $5, $6 \
                     WHERE (SELECT count(*) FROM webhook_endpoints \
                            WHERE terminal_number = $2 AND deleted_at IS NULL) < $7",
                )
                .bind::<SqlUuid, _>(endpoint.id)
                .bind::<Text, _>(endpoint.terminal.as_str())
                .bind::<Text, _>(&endpoint.url)
                .bind::<Nullable<Array<Text>>, _>(events)
                .bind::<Binary, _>(&secret.0)
                .bind::<Timestamptz, _>(endpoint.created_at)
                .bind::<BigInt, _>(i64::from(max_per_terminal))
                .execute(conn)
                .await
            })
            .await
            .with_context(|| format!("saving webhook endpoint {}", endpoint.id))?;
        Ok(inserted == 1)
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
        share: FairShare,
    ) -> anyhow::Result<Vec<DueDelivery>> {
        let mut conn = self.conn().await?;
        let sql = CLAIM_SQL.replace("{EVENT_COLUMNS}", EVENT_COLUMNS);
        // Under the claims' lock, the statement's snapshot holds every lease the claims before
        // it committed: the bounds in flight hold across instances.
        let rows: Vec<ClaimedRow> = conn
            .transaction(async |conn| {
                diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
                    .bind::<BigInt, _>(CLAIM_LOCK)
                    .execute(conn)
                    .await?;
                diesel::sql_query(sql)
                    .bind::<Timestamptz, _>(now)
                    .bind::<Timestamptz, _>(lease_until)
                    .bind::<BigInt, _>(i64::from(limit))
                    .bind::<BigInt, _>(i64::from(share.per_endpoint.max(1)))
                    .bind::<BigInt, _>(i64::from(share.per_terminal.max(1)))
                    .load(conn)
                    .await
            })
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
                    health: row.health.into_health(),
                    event: row.event.into_event()?,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        events::fill_events(&conn, due.iter_mut().map(|d| &mut d.event)).await?;
        Ok(due)
    }

    async fn release_claim(&self, delivery: &DueDelivery) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        diesel::sql_query(
            "UPDATE webhook_deliveries SET claim = NULL, claimed_until = NULL \
             WHERE id = $1 AND claim = $2 AND state = 'pending'",
        )
        .bind::<SqlUuid, _>(delivery.id)
        .bind::<SqlUuid, _>(delivery.claim)
        .execute(&mut conn)
        .await
        .map(|changed| changed == 1)
        .with_context(|| format!("releasing the claim on webhook delivery {}", delivery.id))
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

    async fn endpoint_health(&self, endpoint: Uuid) -> anyhow::Result<Option<EndpointHealth>> {
        let mut conn = self.conn().await?;
        let rows: Vec<HealthRow> = diesel::sql_query(format!(
            "SELECT {HEALTH_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL"
        ))
        .bind::<SqlUuid, _>(endpoint)
        .load(&mut conn)
        .await
        .with_context(|| format!("reading the health of webhook endpoint {endpoint}"))?;
        Ok(rows.into_iter().next().map(HealthRow::into_health))
    }

    async fn set_endpoint_health(
        &self,
        endpoint: Uuid,
        expected: &EndpointHealth,
        new: &EndpointHealth,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let count = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
        let mut conn = self.conn().await?;
        // One statement: a disabling cancels the endpoint's pending deliveries with it.
        let changed: Vec<IdRow> = diesel::sql_query(
            "WITH changed AS ( \
                 UPDATE webhook_endpoints SET consecutive_failures = $2, failing_since = $3, \
                        circuit_open_until = $4, circuit_openings = $5, disabled_at = $6, \
                        disabled_reason = $7 \
                 WHERE id = $1 AND deleted_at IS NULL \
                   AND consecutive_failures = $8 \
                   AND failing_since IS NOT DISTINCT FROM $9 \
                   AND circuit_open_until IS NOT DISTINCT FROM $10 \
                   AND circuit_openings = $11 \
                   AND disabled_at IS NOT DISTINCT FROM $12 \
                 RETURNING id, disabled_at \
             ), cancelled AS ( \
                 UPDATE webhook_deliveries SET state = 'cancelled', finished_at = $13, \
                        claim = NULL, claimed_until = NULL \
                 WHERE endpoint_id IN (SELECT id FROM changed WHERE disabled_at IS NOT NULL) \
                   AND state = 'pending' \
             ) SELECT id FROM changed",
        )
        .bind::<SqlUuid, _>(endpoint)
        .bind::<Integer, _>(count(new.consecutive_failures))
        .bind::<Nullable<Timestamptz>, _>(new.failing_since)
        .bind::<Nullable<Timestamptz>, _>(new.circuit_open_until)
        .bind::<Integer, _>(count(new.circuit_openings))
        .bind::<Nullable<Timestamptz>, _>(new.disabled.as_ref().map(|d| d.at))
        .bind::<Nullable<Text>, _>(new.disabled.as_ref().map(|d| d.reason.as_str()))
        .bind::<Integer, _>(count(expected.consecutive_failures))
        .bind::<Nullable<Timestamptz>, _>(expected.failing_since)
        .bind::<Nullable<Timestamptz>, _>(expected.circuit_open_until)
        .bind::<Integer, _>(count(expected.circuit_openings))
        .bind::<Nullable<Timestamptz>, _>(expected.disabled.as_ref().map(|d| d.at))
        .bind::<Timestamptz, _>(now)
        .load(&mut conn)
        .await
        .with_context(|| format!("recording the health of webhook endpoint {endpoint}"))?;
        Ok(!changed.is_empty())
    }

    async fn enable_endpoint(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
    ) -> anyhow::Result<Option<WebhookEndpoint>> {
        let mut conn = self.conn().await?;
        let rows: Vec<EndpointRow> = diesel::sql_query(format!(
            "UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL, \
                    circuit_open_until = NULL, circuit_openings = 0, disabled_at = NULL, \
                    disabled_reason = NULL \
             WHERE terminal_number = $1 AND id = $2 AND deleted_at IS NULL \
             RETURNING {ENDPOINT_COLUMNS}"
        ))
        .bind::<Text, _>(terminal.as_str())
        .bind::<SqlUuid, _>(id)
        .load(&mut conn)
        .await
        .with_context(|| format!("enabling webhook endpoint {id}"))?;
        rows.into_iter()
            .next()
            .map(EndpointRow::into_endpoint)
            .transpose()
    }

    async fn deliveries(
        &self,
        terminal: &TerminalNumber,
        endpoint: Uuid,
        after: Option<DeliveryCursor>,
        limit: u32,
    ) -> anyhow::Result<Option<DeliveryPage>> {
        if self.endpoint(terminal, endpoint).await?.is_none() {
            return Ok(None);
        }
        let after = after.map(|c| i64::try_from(c.0).unwrap_or(i64::MAX));
        let mut conn = self.conn().await?;
        // One more than the page: whether older deliveries follow.
        let mut rows: Vec<DeliveryRow> = diesel::sql_query(
            "SELECT d.seq, d.id, d.event_id, e.type AS event_type, d.state, d.created_at, \
                    d.next_attempt_at, d.redelivery \
             FROM webhook_deliveries d JOIN events e ON e.id = d.event_id \
             WHERE d.endpoint_id = $1 AND ($2::bigint IS NULL OR d.seq < $2) \
             ORDER BY d.seq DESC LIMIT $3",
        )
        .bind::<SqlUuid, _>(endpoint)
        .bind::<Nullable<BigInt>, _>(after)
        .bind::<BigInt, _>(i64::from(limit) + 1)
        .load(&mut conn)
        .await
        .with_context(|| format!("reading the deliveries of webhook endpoint {endpoint}"))?;
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let cursor = rows
            .last()
            .map(|r| DeliveryCursor(u64::try_from(r.seq).unwrap_or_default()));
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
        let deliveries = rows
            .into_iter()
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
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Some(DeliveryPage {
            deliveries,
            cursor,
            has_more,
        }))
    }

    async fn redeliver(
        &self,
        terminal: &TerminalNumber,
        event: Uuid,
        now: OffsetDateTime,
        limits: &RedeliveryLimits,
    ) -> anyhow::Result<Redelivered> {
        let since = now - limits.window;
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let found: Vec<IdRow> =
                diesel::sql_query("SELECT id FROM events WHERE id = $1 AND terminal_number = $2")
                    .bind::<SqlUuid, _>(event)
                    .bind::<Text, _>(terminal.as_str())
                    .load(conn)
                    .await?;
            if found.is_empty() {
                return Ok(Redelivered::UnknownEvent);
            }
            // The terminal's requests take turns: the counts below are the ones the insert
            // adds to.
            lock_terminal(conn, "redeliveries", terminal).await?;
            let counts: RedeliveryCounts = diesel::sql_query(
                "SELECT \
                   (SELECT requested_at FROM webhook_redeliveries \
                    WHERE event_id = $2 AND requested_at > $3 \
                    ORDER BY requested_at DESC OFFSET $4 - 1 LIMIT 1) AS event_full, \
                   (SELECT requested_at FROM webhook_redeliveries \
                    WHERE terminal_number = $1 AND requested_at > $3 \
                    ORDER BY requested_at DESC OFFSET $5 - 1 LIMIT 1) AS terminal_full",
            )
            .bind::<Text, _>(terminal.as_str())
            .bind::<SqlUuid, _>(event)
            .bind::<Timestamptz, _>(since)
            .bind::<BigInt, _>(i64::from(limits.per_event.max(1)))
            .bind::<BigInt, _>(i64::from(limits.per_terminal.max(1)))
            .get_result(conn)
            .await?;
            if counts.event_full.is_some() || counts.terminal_full.is_some() {
                return Ok(Redelivered::OverLimit {
                    event_oldest: counts.event_full,
                    terminal_oldest: counts.terminal_full,
                });
            }
            diesel::sql_query(
                "WITH pruned AS ( \
                     DELETE FROM webhook_redeliveries \
                     WHERE terminal_number = $1 AND requested_at <= $3 \
                 ) INSERT INTO webhook_redeliveries (terminal_number, event_id, requested_at) \
                 VALUES ($1, $2, $4)",
            )
            .bind::<Text, _>(terminal.as_str())
            .bind::<SqlUuid, _>(event)
            .bind::<Timestamptz, _>(since)
            .bind::<Timestamptz, _>(now)
            .execute(conn)
            .await?;
            let queued: Vec<IdRow> = diesel::sql_query(
                "INSERT INTO webhook_deliveries (endpoint_id, event_id, redelivery, next_attempt_at) \
                 SELECT w.id, e.id, true, $3 FROM events e JOIN webhook_endpoints w \
                   ON w.terminal_number = e.terminal_number AND w.deleted_at IS NULL \
                  AND w.disabled_at IS NULL \
                  AND (w.events IS NULL OR e.type = ANY (w.events)) \
                 WHERE e.id = $1 AND e.terminal_number = $2 \
                 RETURNING id",
            )
            .bind::<SqlUuid, _>(event)
            .bind::<Text, _>(terminal.as_str())
            .bind::<Timestamptz, _>(now)
            .load(conn)
            .await?;
            Ok::<_, diesel::result::Error>(Redelivered::Queued(
                queued.into_iter().map(|r| r.id).collect(),
            ))
        })
        .await
        .with_context(|| format!("queueing event {event} again"))
    }

    async fn backlog(&self, now: OffsetDateTime) -> anyhow::Result<WebhookBacklog> {
        let mut conn = self.conn().await?;
        let row: BacklogRow = diesel::sql_query(
            "SELECT count(*) AS due, min(d.next_attempt_at) AS oldest \
             FROM webhook_deliveries d \
             JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.deleted_at IS NULL \
                  AND w.disabled_at IS NULL \
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
