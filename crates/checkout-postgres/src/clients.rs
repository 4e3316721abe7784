//! `ClientStore` over PostgreSQL, and the operator methods for OAuth clients. Only the
//! Argon2id hash of a secret is stored (the schema refuses anything else); nothing here logs
//! it.

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::auth::OAuthClient;
use checkout_domain::ports::ClientStore;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;

use crate::models::{ClientRow, NewClientRow};
use crate::schema::oauth_clients;
use crate::store::{is_foreign_key_violation, is_unique_violation, PgStore};

fn explain(e: DieselError, client: &OAuthClient) -> anyhow::Error {
    if is_foreign_key_violation(&e) {
        anyhow::anyhow!("terminal {} does not exist", client.terminal)
    } else if is_unique_violation(&e, "oauth_clients_pkey") {
        anyhow::anyhow!("client {} already exists", client.client_id)
    } else {
        anyhow::Error::new(e).context(format!("storing client {}", client.client_id))
    }
}

#[async_trait]
impl ClientStore for PgStore {
    async fn get_client(&self, client_id: &str) -> anyhow::Result<Option<OAuthClient>> {
        let mut conn = self.conn().await?;
        oauth_clients::table
            .find(client_id)
            .select(ClientRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .context("reading an OAuth client")?
            .map(OAuthClient::try_from)
            .transpose()
    }

    async fn previous_secret_hash(&self, client_id: &str) -> anyhow::Result<Option<String>> {
        let mut conn = self.conn().await?;
        let hash: Option<Option<String>> = oauth_clients::table
            .find(client_id)
            .filter(oauth_clients::previous_secret_expires_at.gt(diesel::dsl::now))
            .select(oauth_clients::previous_secret_hash)
            .first(&mut conn)
            .await
            .optional()
            .context("reading an OAuth client's previous secret")?;
        Ok(hash.flatten())
    }
}

impl PgStore {
    /// Registers a client; an error if its `client_id` exists or its terminal does not.
    pub async fn create_client(&self, client: &OAuthClient) -> anyhow::Result<()> {
        let mut conn = self.conn().await?;
        diesel::insert_into(oauth_clients::table)
            .values(NewClientRow::of(client))
            .execute(&mut conn)
            .await
            .map(drop)
            .map_err(|e| explain(e, client))
    }

    /// Registers a client, or replaces the secret hash, terminal, roles and active flag of the
    /// client with its `client_id` (sandbox provisioning); an error if the terminal does not
    /// exist.
    pub async fn upsert_client(&self, client: &OAuthClient) -> anyhow::Result<()> {
        let mut conn = self.conn().await?;
        diesel::insert_into(oauth_clients::table)
            .values(NewClientRow::of(client))
            .on_conflict(oauth_clients::client_id)
            .do_update()
            .set((
                oauth_clients::secret_hash.eq(excluded(oauth_clients::secret_hash)),
                oauth_clients::terminal_number.eq(excluded(oauth_clients::terminal_number)),
                oauth_clients::roles.eq(excluded(oauth_clients::roles)),
                oauth_clients::active.eq(excluded(oauth_clients::active)),
            ))
            .execute(&mut conn)
            .await
            .map(drop)
            .map_err(|e| explain(e, client))
    }

    /// Gives a client the secret whose Argon2id hash is `new_hash`, in place: its current
    /// secret becomes the previous one and keeps working for `overlap` (replacing any earlier
    /// previous secret); answers when it stops, or `None` when there is no such client.
    pub async fn rotate_client_secret(
        &self,
        client_id: &str,
        new_hash: &str,
        overlap: time::Duration,
    ) -> anyhow::Result<Option<time::OffsetDateTime>> {
        let mut conn = self.conn().await?;
        let until = time::OffsetDateTime::now_utc() + overlap;
        let updated = diesel::update(oauth_clients::table.find(client_id))
            .set((
                oauth_clients::previous_secret_hash.eq(oauth_clients::secret_hash.nullable()),
                oauth_clients::previous_secret_expires_at.eq(Some(until)),
                oauth_clients::secret_hash.eq(new_hash),
            ))
            .execute(&mut conn)
            .await
            .context("rotating an OAuth client's secret")?;
        Ok((updated == 1).then_some(until))
    }

    /// Activates or deactivates a client; false when there is no such client.
    pub async fn set_client_active(&self, client_id: &str, active: bool) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(oauth_clients::table.find(client_id))
            .set(oauth_clients::active.eq(active))
            .execute(&mut conn)
            .await
            .context("updating an OAuth client")?;
        Ok(updated == 1)
    }

    /// Every client, ordered by `client_id`.
    pub async fn list_clients(&self) -> anyhow::Result<Vec<OAuthClient>> {
        let mut conn = self.conn().await?;
        oauth_clients::table
            .order(oauth_clients::client_id)
            .select(ClientRow::as_select())
            .load(&mut conn)
            .await
            .context("listing OAuth clients")?
            .into_iter()
            .map(OAuthClient::try_from)
            .collect()
    }
}
