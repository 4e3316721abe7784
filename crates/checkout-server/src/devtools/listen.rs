//! `checkout listen --forward-to URL`: follows the terminal's events feed over HTTP and
//! forwards each event to a URL on the developer's machine, signed as the service's webhooks
//! are (Standard Webhooks, with a local `whsec_` secret it prints), so that the merchant's
//! own verification code runs unchanged and the service needs no inbound connection to the
//! developer's machine.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use checkout_webhooks::signature::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP};
use checkout_webhooks::{WebhookHeaders, WebhookSecret};
use reqwest::Method;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Connection, Flags, Remote, CONNECTION_FLAGS};
use crate::settings::Settings;

/// Where `listen` starts when it has no saved cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// After the events already in the feed: only new ones are forwarded (the default).
    Now,
    /// From the feed's first event.
    Beginning,
}

/// What `checkout listen` was asked.
#[derive(Debug)]
pub struct ListenOptions {
    /// The service and the credentials.
    pub connection: Connection,
    /// Where each event is POSTed.
    pub forward_to: url::Url,
    /// Where to start without a saved cursor.
    pub start: Start,
    /// Where the cursor is kept between runs.
    pub cursor_file: PathBuf,
    /// Where the local signing secret is kept between runs.
    pub secret_file: PathBuf,
    /// How long to wait between polls of an empty feed.
    pub poll: Duration,
}

/// The usage line of `checkout listen`.
pub const USAGE: &str = "checkout listen --forward-to <url> [--base-url <url>] [--client-id <id>] [--client-secret <secret>] [--from-start] [--cursor-file <file>] [--poll-ms <ms>]";

impl ListenOptions {
    /// Reads the words after `listen`.
    pub fn parse(args: &[&str], settings: &Settings) -> anyhow::Result<ListenOptions> {
        let mut valued = CONNECTION_FLAGS.to_vec();
        valued.extend(["forward-to", "cursor-file", "poll-ms"]);
        let flags = Flags::parse(args, &valued, &["from-start"]).map_err(anyhow::Error::msg)?;
        if let Some(word) = flags.words.first() {
            bail!("unexpected argument {word:?}");
        }
        let forward_to = flags
            .value("forward-to")
            .context("--forward-to <url> is required")?;
        let forward_to =
            url::Url::parse(forward_to).with_context(|| format!("--forward-to {forward_to}"))?;
        if !matches!(forward_to.scheme(), "http" | "https") {
            bail!("--forward-to must be an http or https URL");
        }
        let connection = Connection::of(&flags, settings)?;
        let listen_dir = settings.data_dir.join("listen");
        let cursor_file = flags.value("cursor-file").map_or_else(
            || {
                let key = format!("{}-{}", connection.base_url, connection.client_id);
                listen_dir.join(format!("{}.cursor", file_safe(&key)))
            },
            PathBuf::from,
        );
        let poll = match flags.value("poll-ms") {
            Some(ms) => Duration::from_millis(
                ms.parse::<u64>()
                    .ok()
                    .filter(|ms| (10..=60_000).contains(ms))
                    .context("--poll-ms must be from 10 to 60000")?,
            ),
            None => Duration::from_secs(1),
        };
        Ok(ListenOptions {
            connection,
            forward_to,
            start: if flags.switch("from-start") {
                Start::Beginning
            } else {
                Start::Now
            },
            cursor_file,
            secret_file: settings
                .data_dir
                .join("secrets")
                .join("listen-webhook-secret"),
            poll,
        })
    }
}

/// `text` with every character but letters, digits, `-` and `_` replaced by `_`.
fn file_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One page of the feed, each event's JSON kept exactly as the service wrote it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPage {
    events: Vec<Box<RawValue>>,
    cursor: Option<String>,
    has_more: bool,
}

/// What `listen` reads of an event to sign and show it.
#[derive(Deserialize)]
struct EventHead {
    id: String,
    #[serde(rename = "type")]
    kind: String,
}

/// The local secret in `path`, made (mode 0600, in a 0700 folder) on first use.
fn local_secret(path: &Path) -> anyhow::Result<WebhookSecret> {
    if let Ok(text) = std::fs::read_to_string(path) {
        return WebhookSecret::parse(text.trim())
            .with_context(|| format!("the secret saved in {}", path.display()));
    }
    let dir = path.parent().context("the secret file has no folder")?;
    checkout_identity::create_private_dir(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let secret = WebhookSecret::generate().context("no randomness for the secret")?;
    let mut file = checkout_identity::private_file_options()
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(secret.expose_secret().as_bytes())?;
    file.sync_all()?;
    Ok(secret)
}

fn save_cursor(path: &Path, cursor: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, cursor).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Fetches the page after `cursor`.
async fn fetch_page(remote: &mut Remote, cursor: Option<&str>) -> anyhow::Result<RawPage> {
    let path = match cursor {
        Some(c) => format!("/pay/api/events?limit=100&after={c}"),
        None => "/pay/api/events?limit=100".to_owned(),
    };
    let value = remote.call(Method::GET, &path, None).await?;
    serde_json::from_value(value).context("reading the events page")
}

/// The cursor after the last event of the feed now.
async fn end_of_feed(
    remote: &mut Remote,
    mut cursor: Option<String>,
) -> anyhow::Result<Option<String>> {
    loop {
        let page = fetch_page(remote, cursor.as_deref()).await?;
        if page.cursor.is_some() {
            cursor = page.cursor;
        }
        if !page.has_more || page.events.is_empty() {
            return Ok(cursor);
        }
    }
}

/// Runs `checkout listen` until interrupted (Ctrl-C or SIGTERM), writing its banner and one
/// line per forward to `out`.
pub async fn run(options: ListenOptions, out: &mut impl Write) -> anyhow::Result<()> {
    let secret = local_secret(&options.secret_file)?;
    let mut remote = Remote::new(options.connection.clone())?;
    let saved = std::fs::read_to_string(&options.cursor_file)
        .ok()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty());
    let resumed = saved.is_some();
    let mut cursor = match (saved, options.start) {
        (Some(saved), _) => Some(saved),
        (None, Start::Beginning) => None,
        (None, Start::Now) => end_of_feed(&mut remote, None).await?,
    };
    if let (Some(start), false) = (&cursor, resumed) {
        // Kept at once, so that a restart before any event resumes here, missing nothing.
        save_cursor(&options.cursor_file, start)?;
    }
    writeln!(
        out,
        "Forwarding the events of client {} at {} to {}",
        options.connection.client_id,
        remote.base_url(),
        options.forward_to
    )?;
    writeln!(
        out,
        "Your webhook signing secret is {} (kept in {})",
        secret.expose_secret(),
        options.secret_file.display()
    )?;
    writeln!(
        out,
        "Ready: {} (Ctrl-C to quit)",
        match (&cursor, resumed) {
            (Some(c), true) => format!("resuming after cursor {c}"),
            (Some(c), false) => format!("new events after cursor {c}"),
            (None, _) => "from the first event".to_owned(),
        }
    )?;
    out.flush()?;
    let stop = shutdown();
    tokio::pin!(stop);
    loop {
        let page = tokio::select! {
            () = &mut stop => return Ok(()),
            page = fetch_page(&mut remote, cursor.as_deref()) => page?,
        };
        for event in &page.events {
            let line = forward(&remote, &options.forward_to, &secret, event).await;
            writeln!(out, "{line}")?;
            out.flush()?;
        }
        if let Some(next) = &page.cursor {
            if cursor.as_deref() != Some(next.as_str()) {
                save_cursor(&options.cursor_file, next)?;
                cursor = Some(next.clone());
            }
        }
        if !page.has_more {
            tokio::select! {
                () = &mut stop => return Ok(()),
                () = tokio::time::sleep(options.poll) => {}
            }
        }
    }
}

/// Signs and POSTs one event; answers the line to print.
async fn forward(
    remote: &Remote,
    to: &url::Url,
    secret: &WebhookSecret,
    event: &RawValue,
) -> String {
    let now = time::OffsetDateTime::now_utc();
    let stamp = now
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let body = event.get().as_bytes();
    let head: EventHead = match serde_json::from_slice(body) {
        Ok(head) => head,
        Err(e) => return format!("{stamp}  (unreadable event: {e})"),
    };
    let headers = match WebhookHeaders::sign(
        &head.id,
        now.unix_timestamp(),
        body,
        std::slice::from_ref(secret),
    ) {
        Ok(headers) => headers,
        Err(e) => return format!("{stamp}  {}  {}  not signed: {e}", head.kind, head.id),
    };
    let sent = remote
        .http()
        .post(to.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(HEADER_ID, &headers.id)
        .header(HEADER_TIMESTAMP, &headers.timestamp)
        .header(HEADER_SIGNATURE, &headers.signature)
        .body(body.to_vec())
        .send()
        .await;
    let outcome = match sent {
        Ok(response) => format!("[{}]", response.status().as_u16()),
        Err(e) if e.is_timeout() => "[timed out]".to_owned(),
        Err(e) if e.is_connect() => "[connection refused]".to_owned(),
        Err(_) => "[failed]".to_owned(),
    };
    format!(
        "{stamp}  {}  {}  --> POST {to} {outcome}",
        head.kind, head.id
    )
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
