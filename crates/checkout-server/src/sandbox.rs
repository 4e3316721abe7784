//! Sandbox provisioning: a terminal and an OAuth client that a merchant can use at once.

use std::path::Path;

use anyhow::Context;
use checkout_domain::auth::{OAuthClient, Role, Terminal};
use checkout_domain::values::TerminalNumber;
use checkout_postgres::PgStore;
use serde::{Deserialize, Serialize};

use crate::settings::Settings;

/// The sandbox terminal's credentials, printed at start.
#[derive(Clone, Serialize, Deserialize)]
pub struct SandboxCredentials {
    /// Terminal number.
    pub terminal_number: String,
    /// OAuth client id.
    pub client_id: String,
    /// OAuth client secret.
    pub client_secret: String,
}

impl std::fmt::Debug for SandboxCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxCredentials")
            .field("terminal_number", &self.terminal_number)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .finish()
    }
}

const CREDENTIALS_FILE: &str = "sandbox-credentials.json";

fn read_saved(path: &Path) -> Option<SandboxCredentials> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

fn save(path: &Path, credentials: &SandboxCredentials) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_vec_pretty(credentials)?)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Makes sure the sandbox terminal and its client exist with known credentials: the secret
/// from the settings when given, else the one saved in the data folder, else a new one
/// (saved there, so the same credentials are printed on every start).
pub async fn provision(settings: &Settings, store: &PgStore) -> anyhow::Result<SandboxCredentials> {
    let s = &settings.sandbox;
    let number = TerminalNumber::parse(&s.terminal_number)
        .map_err(|e| anyhow::anyhow!("sandbox terminal number {e}"))?;
    let existing = store.list_terminals().await?;
    if !existing.iter().any(|t| t.number == number) {
        store
            .create_terminal(&Terminal {
                number: number.clone(),
                display_name: s.merchant_name.clone(),
                active: true,
                callback_hosts: None,
                max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
            })
            .await?;
    }
    let file = settings.data_dir.join(CREDENTIALS_FILE);
    let saved = read_saved(&file)
        .filter(|c| c.client_id == s.client_id && c.terminal_number == s.terminal_number);
    let secret = match (&s.client_secret, &saved) {
        (Some(secret), _) => secret.clone(),
        (None, Some(saved)) => saved.client_secret.clone(),
        (None, None) => checkout_identity::generate_secret().expose().to_owned(),
    };
    let hash = checkout_identity::hash_secret(&secret).context("hashing the sandbox secret")?;
    store
        .upsert_client(&OAuthClient {
            client_id: s.client_id.clone(),
            secret_hash: hash,
            terminal: number,
            roles: vec![Role::SvcTerminal],
            active: true,
        })
        .await?;
    let credentials = SandboxCredentials {
        terminal_number: s.terminal_number.clone(),
        client_id: s.client_id.clone(),
        client_secret: secret,
    };
    if s.client_secret.is_none() {
        save(&file, &credentials)?;
    }
    Ok(credentials)
}
