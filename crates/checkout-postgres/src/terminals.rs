//! `TerminalDirectory` over PostgreSQL, and the operator methods for terminals.

use crate::availability::StoreContext;
use async_trait::async_trait;
use checkout_domain::ports::TerminalDirectory;
use checkout_domain::terminal::{CaptureMethod, Terminal};
use checkout_domain::values::{CallbackHosts, MaxCardAttempts, TerminalNumber};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::combining;
use crate::models::{NewTerminalRow, TerminalRow};
use crate::read_combining::TerminalReads;
use crate::schema::terminals;
use crate::store::{is_unique_violation, PgStore};

#[async_trait]
impl TerminalDirectory for PgStore {
    async fn get_terminal(&self, number: &TerminalNumber) -> anyhow::Result<Option<Terminal>> {
        // Read with the terminal reads in flight, in one statement, or at once when none is
        // queued (`read_combining`); kept for the creates while active.
        let terminal = combining::submit::<TerminalReads>(self, number.clone()).await?;
        match &terminal {
            Some(t) => self.terminals_seen().remember(t),
            None => self.terminals_seen().forget(number),
        }
        Ok(terminal)
    }

    async fn recent_terminal(&self, number: &TerminalNumber) -> anyhow::Result<Option<Terminal>> {
        Ok(self.terminals_seen().get(number))
    }
}

impl PgStore {
    /// Provisions a terminal; an error if one with this number exists.
    pub async fn create_terminal(&self, terminal: &Terminal) -> anyhow::Result<()> {
        let mut conn = self.conn().await?;
        let inserted = diesel::insert_into(terminals::table)
            .values(NewTerminalRow {
                number: terminal.number.as_str(),
                display_name: &terminal.display_name,
                active: terminal.active,
                callback_hosts: terminal.callback_hosts.as_ref().map(CallbackHosts::hosts),
                max_card_attempts: i16::from(terminal.max_card_attempts.get()),
                capture_method: terminal.capture_method.as_str(),
            })
            .execute(&mut conn)
            .await;
        match inserted {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e, "terminals_pkey") => {
                anyhow::bail!("terminal {} already exists", terminal.number)
            }
            Err(e) => Err(e).with_context(|| format!("creating terminal {}", terminal.number)),
        }
    }

    /// Activates or deactivates a terminal; false when there is no such terminal.
    pub async fn set_terminal_active(
        &self,
        number: &TerminalNumber,
        active: bool,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(terminals::table.find(number.as_str()))
            .set(terminals::active.eq(active))
            .execute(&mut conn)
            .await
            .with_context(|| format!("updating terminal {number}"))?;
        Ok(updated == 1)
    }

    /// Sets a terminal's callback host allowlist (`None`: any host); false when there is no
    /// such terminal.
    pub async fn set_callback_hosts(
        &self,
        number: &TerminalNumber,
        hosts: Option<&CallbackHosts>,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(terminals::table.find(number.as_str()))
            .set(terminals::callback_hosts.eq(hosts.map(CallbackHosts::hosts)))
            .execute(&mut conn)
            .await
            .with_context(|| format!("updating the callback hosts of terminal {number}"))?;
        Ok(updated == 1)
    }

    /// Sets the merchant name the terminal's payers are shown; false when there is no such
    /// terminal. Pages opened afterwards show it.
    pub async fn set_display_name(
        &self,
        number: &TerminalNumber,
        name: &str,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(terminals::table.find(number.as_str()))
            .set(terminals::display_name.eq(name))
            .execute(&mut conn)
            .await
            .with_context(|| format!("setting the merchant name of terminal {number}"))?;
        Ok(updated == 1)
    }

    /// Sets whether the terminal's payments are captured with their authorisation or held;
    /// false when there is no such terminal. Attempts already begun keep the method they were
    /// sent with.
    pub async fn set_capture_method(
        &self,
        number: &TerminalNumber,
        method: CaptureMethod,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(terminals::table.find(number.as_str()))
            .set(terminals::capture_method.eq(method.as_str()))
            .execute(&mut conn)
            .await
            .with_context(|| format!("setting the capture method of terminal {number}"))?;
        Ok(updated == 1)
    }

    /// Sets how many cards may be declined on one session of the terminal
    /// (`maxCardAttempts`); false when there is no such terminal.
    pub async fn set_max_card_attempts(
        &self,
        number: &TerminalNumber,
        limit: MaxCardAttempts,
    ) -> anyhow::Result<bool> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(terminals::table.find(number.as_str()))
            .set(terminals::max_card_attempts.eq(i16::from(limit.get())))
            .execute(&mut conn)
            .await
            .with_context(|| format!("updating maxCardAttempts of terminal {number}"))?;
        Ok(updated == 1)
    }

    /// Every terminal, ordered by number.
    pub async fn list_terminals(&self) -> anyhow::Result<Vec<Terminal>> {
        let mut conn = self.conn().await?;
        terminals::table
            .order(terminals::number)
            .select(TerminalRow::as_select())
            .load(&mut conn)
            .await
            .context("listing terminals")?
            .into_iter()
            .map(Terminal::try_from)
            .collect()
    }
}
