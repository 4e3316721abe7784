//! Sandbox provisioning: a terminal and an OAuth client that a merchant can use at once.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use checkout_domain::auth::{OAuthClient, Role};
use checkout_domain::terminal::Terminal;
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

/// The folder of the data folder that holds secrets, mode 0700. The data folder itself stays
/// traversable: as root the sandbox cluster runs as the `postgres` user under
/// `{data_dir}/postgres`.
const SECRETS_DIR: &str = "secrets";

/// Where the sandbox credentials are kept: `{data_dir}/secrets/sandbox-credentials.json`.
fn credentials_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SECRETS_DIR).join(CREDENTIALS_FILE)
}

/// The sandbox credentials saved in `data_dir` by a sandbox that generated its secret, if any
/// (what `checkout listen` and `checkout trigger` use by default).
pub fn saved_credentials(data_dir: &Path) -> Option<SandboxCredentials> {
    read_saved(&credentials_path(data_dir))
}

fn read_saved(path: &Path) -> Option<SandboxCredentials> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes `credentials` to `path`: its folder is made with mode 0700, and the file is written
/// to a new temporary file created with mode 0600 (never readable by others, not even for an
/// instant) that is then renamed over `path`.
fn save(path: &Path, credentials: &SandboxCredentials) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .context("the credentials file has no folder")?;
    create_private_dir(dir)?;
    let tmp = dir.join(format!(".{CREDENTIALS_FILE}.{}.tmp", std::process::id()));
    let written = (|| -> anyhow::Result<()> {
        let _ = std::fs::remove_file(&tmp);
        let mut file = checkout_identity::private_file_options()
            .open(&tmp)
            .with_context(|| format!("creating {}", tmp.display()))?;
        file.write_all(&serde_json::to_vec_pretty(credentials)?)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    checkout_identity::create_private_dir(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let mode = std::fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("restricting {} to its owner", dir.display()))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
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
                capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
            })
            .await?;
    }
    let file = credentials_path(&settings.data_dir);
    // Credentials saved by an older version, directly in the data folder, are moved.
    let legacy = settings.data_dir.join(CREDENTIALS_FILE);
    let saved = read_saved(&file)
        .or_else(|| read_saved(&legacy))
        .filter(|c| c.client_id == s.client_id && c.terminal_number == s.terminal_number);
    let secret = match (&s.client_secret, &saved) {
        (Some(secret), _) => secrecy::ExposeSecret::expose_secret(secret).to_owned(),
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
        let _ = std::fs::remove_file(&legacy);
    }
    Ok(credentials)
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_credentials_file_is_0600_in_a_0700_folder() {
        let data = std::env::temp_dir().join(format!("hc-sandbox-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data);
        let credentials = SandboxCredentials {
            terminal_number: "SANDBOX-001".into(),
            client_id: "sandbox-client".into(),
            client_secret: "s3cr3t".into(),
        };
        let file = credentials_path(&data);
        save(&file, &credentials).unwrap();
        assert_eq!(mode(file.parent().unwrap()), 0o700, "the secrets folder");
        assert_eq!(mode(&file), 0o600, "the credentials file");
        // Saved again (a changed secret): replaced, still 0600, no temporary file left.
        save(&file, &credentials).unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(
            std::fs::read_dir(file.parent().unwrap()).unwrap().count(),
            1
        );
        assert_eq!(read_saved(&file).unwrap().client_secret, "s3cr3t");
        // A secrets folder left open by hand is narrowed.
        std::fs::set_permissions(
            file.parent().unwrap(),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        save(&file, &credentials).unwrap();
        assert_eq!(mode(file.parent().unwrap()), 0o700);
        std::fs::remove_dir_all(&data).unwrap();
    }
}
