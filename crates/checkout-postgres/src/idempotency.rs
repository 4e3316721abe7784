//! `IdempotencyStore` over PostgreSQL: one row per (terminal, key) in `idempotency_keys`.
//! A claim is one `INSERT ... ON CONFLICT DO UPDATE ... WHERE` statement, so racing claims of
//! one key are decided by the primary key: exactly one inserts (or takes over a forgotten or
//! lapsed record); the others read the record that won.

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::ports::{
    Claim, ClaimTimes, ClaimToken, HeldKey, IdempotencyStore, SavedResponse,
};
use checkout_domain::values::{IdempotencyKey, RequestFingerprint, TerminalNumber};
use diesel::prelude::*;
use diesel::sql_types::{Bytea, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::idempotency_keys;
use crate::store::PgStore;

/// Claims a key: inserts a new record, or takes over one that is forgotten (created at or
/// before `$6`) or whose claim lapsed without a response (leased until at or before `$4`).
/// Returns the new claim's token; no row when a live record holds the key.
/// `$1` terminal, `$2` key, `$3` fingerprint, `$4` now, `$5` lease end, `$6` forget before.
const CLAIM_SQL: &str = "\
    INSERT INTO idempotency_keys AS k \
        (terminal_number, idempotency_key, fingerprint, claim_token, created_at, locked_until) \
    VALUES ($1, $2, $3, gen_random_uuid(), $4, $5) \
    ON CONFLICT (terminal_number, idempotency_key) DO UPDATE SET \
        fingerprint = EXCLUDED.fingerprint, claim_token = EXCLUDED.claim_token, \
        created_at = EXCLUDED.created_at, locked_until = EXCLUDED.locked_until, \
        response_status = NULL, response_type = NULL, response_body = NULL, \
        completed_at = NULL \
    WHERE k.created_at <= $6 OR (k.response_status IS NULL AND k.locked_until <= $4) \
    RETURNING k.claim_token";

/// How many times a claim reads again when the record it lost to vanished before it could
/// read it (released, or forgotten, in between).
const CLAIM_ROUNDS: usize = 3;

/// The token a winning claim returns.
#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    claim_token: Uuid,
}

/// The record a losing claim reads.
#[derive(Queryable, Selectable)]
#[diesel(table_name = idempotency_keys)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct KeyRow {
    fingerprint: Vec<u8>,
    created_at: OffsetDateTime,
    locked_until: OffsetDateTime,
    response_status: Option<i16>,
    response_type: Option<String>,
    response_body: Option<Vec<u8>>,
}

impl KeyRow {
    /// The record as a claim sees it; `None` when a claim could take it (it lapsed or was
    /// forgotten after the claim's statement ran).
    fn held(self, times: &ClaimTimes) -> anyhow::Result<Option<HeldKey>> {
        let response = match (self.response_status, self.response_type, self.response_body) {
            (Some(status), Some(content_type), Some(body)) => Some(SavedResponse {
                status: u16::try_from(status).context("a negative saved status")?,
                content_type,
                body,
            }),
            _ => None,
        };
        let forgotten = self.created_at <= times.forget_before;
        let lapsed = response.is_none() && self.locked_until <= times.now;
        if forgotten || lapsed {
            return Ok(None);
        }
        let fingerprint: [u8; 32] = self
            .fingerprint
            .as_slice()
            .try_into()
            .context("a stored fingerprint is not 32 bytes")?;
        Ok(Some(HeldKey {
            fingerprint: RequestFingerprint::from_bytes(fingerprint),
            response,
        }))
    }
}

#[async_trait]
impl IdempotencyStore for PgStore {
    async fn claim(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        fingerprint: &RequestFingerprint,
        times: ClaimTimes,
    ) -> anyhow::Result<Claim> {
        let mut conn = self.conn().await?;
        for _ in 0..CLAIM_ROUNDS {
            let claimed: Option<Claimed> = diesel::sql_query(CLAIM_SQL)
                .bind::<Text, _>(terminal.as_str())
                .bind::<Text, _>(key.as_str())
                .bind::<Bytea, _>(fingerprint.as_bytes().as_slice())
                .bind::<Timestamptz, _>(times.now)
                .bind::<Timestamptz, _>(times.lease_until)
                .bind::<Timestamptz, _>(times.forget_before)
                .get_result(&mut conn)
                .await
                .optional()
                .context("claiming an idempotency key")?;
            if let Some(claimed) = claimed {
                return Ok(Claim::Claimed(ClaimToken::from_uuid(claimed.claim_token)));
            }
            // Another record holds the key; a new statement sees it even if its transaction
            // committed after the claim's statement began.
            let row: Option<KeyRow> = idempotency_keys::table
                .find((terminal.as_str(), key.as_str()))
                .select(KeyRow::as_select())
                .first(&mut conn)
                .await
                .optional()
                .context("reading an idempotency key")?;
            if let Some(held) = row.map(|row| row.held(&times)).transpose()?.flatten() {
                return Ok(Claim::Held(held));
            }
        }
        anyhow::bail!("an idempotency key kept changing hands while it was claimed")
    }

    async fn complete(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        token: ClaimToken,
        response: &SavedResponse,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let status = i16::try_from(response.status).context("a status beyond i16")?;
        let mut conn = self.conn().await?;
        let saved = diesel::update(
            idempotency_keys::table
                .find((terminal.as_str(), key.as_str()))
                .filter(idempotency_keys::claim_token.eq(token.as_uuid()))
                .filter(idempotency_keys::response_status.is_null()),
        )
        .set((
            idempotency_keys::response_status.eq(Some(status)),
            idempotency_keys::response_type.eq(Some(response.content_type.as_str())),
            idempotency_keys::response_body.eq(Some(response.body.as_slice())),
            idempotency_keys::completed_at.eq(Some(at)),
        ))
        .execute(&mut conn)
        .await
        .context("saving the response of an idempotency key")?;
        Ok(saved == 1)
    }

    async fn release(
        &self,
        terminal: &TerminalNumber,
        key: &IdempotencyKey,
        token: ClaimToken,
    ) -> anyhow::Result<()> {
        let mut conn = self.conn().await?;
        diesel::delete(
            idempotency_keys::table
                .find((terminal.as_str(), key.as_str()))
                .filter(idempotency_keys::claim_token.eq(token.as_uuid()))
                .filter(idempotency_keys::response_status.is_null()),
        )
        .execute(&mut conn)
        .await
        .context("releasing an idempotency key")?;
        Ok(())
    }

    async fn forget_before(&self, before: OffsetDateTime) -> anyhow::Result<u64> {
        let mut conn = self.conn().await?;
        let deleted =
            diesel::delete(idempotency_keys::table.filter(idempotency_keys::created_at.le(before)))
                .execute(&mut conn)
                .await
                .context("forgetting old idempotency keys")?;
        Ok(u64::try_from(deleted).unwrap_or_default())
    }
}
