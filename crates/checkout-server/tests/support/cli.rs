//! The `checkout` binary's developer commands (`listen`, `trigger`) run as a merchant's
//! developer runs them: on another "machine" (its own data folder, none of the server's
//! settings, no database), reaching the server only over HTTP with the terminal's client
//! credentials.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::server::{artifacts_dir, TestServer};

/// A `checkout <args>` command against `server` with the sandbox client's credentials (the
/// secret in `CHECKOUT_CLIENT_SECRET`, never on the command line), in a data folder of its own.
pub fn developer_command(server: &TestServer, data_dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_checkout"));
    for (key, _) in std::env::vars() {
        if key.starts_with("CHECKOUT") || key == "DATABASE_URL" {
            cmd.env_remove(key);
        }
    }
    cmd.args(args)
        .args(["--base-url", &server.base, "--client-id", &server.client_id])
        .env("CHECKOUT__DATA_DIR", data_dir)
        .env("CHECKOUT_CLIENT_SECRET", &server.client_secret)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null());
    cmd
}

/// A fresh data folder for a developer's machine.
pub fn developer_dir(label: &str) -> PathBuf {
    artifacts_dir(label).join("developer")
}

/// Runs `checkout <args>` against `server` to its end.
pub fn run_developer_command(server: &TestServer, data_dir: &Path, args: &[&str]) -> Output {
    developer_command(server, data_dir, args)
        .output()
        .expect("the checkout binary runs")
}
