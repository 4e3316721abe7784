//! E-mail receipts in the running service and for the operator: the receipt worker (only
//! when an SMTP server is configured), and `checkout mail list [--terminal T] [--limit N]`,
//! which shows the outbox (with no SMTP server, the sandbox's mails stay there).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use checkout_domain::ports::ReceiptOutbox;
use checkout_domain::usecases::{ReceiptPolicy, Receipts};
use checkout_domain::values::TerminalNumber;
use checkout_mail::{SmtpConfig, SmtpMailer, SmtpTls};
use checkout_postgres::PgStore;
use secrecy::SecretString;

use crate::settings::{Environment, MailSettings, Settings};
use crate::system::SystemClock;

/// The most mails `mail list` shows by default.
const DEFAULT_LIST: u32 = 20;

/// The sender of a sandbox that names none.
const SANDBOX_FROM: &str = "Sandbox receipts <receipts@sandbox.localhost>";

/// A `checkout mail` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailCommand {
    /// List the newest receipt mails of the outbox.
    List {
        /// Only this terminal's.
        terminal: Option<String>,
        /// How many at most.
        limit: u32,
    },
}

impl MailCommand {
    /// Parses the words after `mail`.
    pub fn parse(words: &[&str]) -> Result<MailCommand, String> {
        let ["list", options @ ..] = words else {
            return Err(format!("unknown command: mail {}", words.join(" ")));
        };
        let (mut terminal, mut limit) = (None, DEFAULT_LIST);
        let mut rest = options.iter();
        while let Some(option) = rest.next() {
            match (*option, rest.next()) {
                ("--terminal", Some(t)) => {
                    TerminalNumber::parse(t).map_err(|e| format!("terminal number {e}"))?;
                    terminal = Some((*t).to_owned());
                }
                ("--limit", Some(n)) => {
                    limit = n
                        .parse()
                        .ok()
                        .filter(|n| (1..=1000).contains(n))
                        .ok_or("--limit must be from 1 to 1000")?;
                }
                _ => return Err(format!("mail list: unknown option {option}")),
            }
        }
        Ok(MailCommand::List { terminal, limit })
    }
}

/// Runs a `mail` command: one line per mail, newest first, with its receipt's subject and
/// numbers (never more of the card than its brand and last four digits).
pub async fn run(
    store: &PgStore,
    command: MailCommand,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let MailCommand::List { terminal, limit } = command;
    let terminal = terminal
        .as_deref()
        .map(TerminalNumber::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("terminal number {e}"))?;
    let mails = store.list(terminal.as_ref(), limit).await?;
    writeln!(
        out,
        "queued_at\tstate\tattempts\tterminal\tto\tcheckoutSessionId\tinternalTransactionReferenceNumber\tcard\tsubject\tlast_error"
    )?;
    for mail in mails {
        let r = &mail.receipt;
        let composed = checkout_mail::compose::compose(r);
        writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{} {}\t{}\t{}",
            mail.queued_at,
            mail.state.as_str(),
            mail.attempts,
            r.terminal,
            r.to,
            r.session_id,
            r.internal_reference,
            r.card_brand.as_str(),
            r.card_last4,
            composed.subject,
            mail.last_error.as_deref().unwrap_or("-")
        )?;
    }
    Ok(())
}

/// Whether `host` is this machine: plain SMTP may go there.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl MailSettings {
    /// The SMTP server to send receipts through; `None` when no host is configured (the
    /// receipts stay in the outbox). The password is read from `smtp_password_file` or taken
    /// from `smtp_password`, never both.
    pub fn smtp(&self, environment: Environment) -> anyhow::Result<Option<SmtpConfig>> {
        let Some(host) = self.smtp_host.as_deref().filter(|h| !h.is_empty()) else {
            return Ok(None);
        };
        let tls = SmtpTls::parse(&self.smtp_tls)
            .context("CHECKOUT__MAIL__SMTP_TLS must be starttls, tls or none")?;
        if tls == SmtpTls::None && environment == Environment::Production && !is_loopback(host) {
            bail!("CHECKOUT__MAIL__SMTP_TLS=none is allowed in production only to a relay on loopback");
        }
        let password = match (&self.smtp_password, &self.smtp_password_file) {
            (Some(_), Some(_)) => {
                bail!("set CHECKOUT__MAIL__SMTP_PASSWORD or __SMTP_PASSWORD_FILE, not both")
            }
            (Some(p), None) => Some(p.clone()),
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                Some(SecretString::from(
                    text.trim_end_matches(['\r', '\n']).to_owned(),
                ))
            }
            (None, None) => None,
        };
        if self.smtp_user.is_some() != password.is_some() {
            bail!("CHECKOUT__MAIL__SMTP_USER and a password go together");
        }
        let from = match (&self.from, environment) {
            (Some(from), _) => from.clone(),
            (None, Environment::Sandbox) => SANDBOX_FROM.to_owned(),
            (None, Environment::Production) => {
                bail!("sending receipts needs CHECKOUT__MAIL__FROM (the sender's address)")
            }
        };
        if self.timeout_ms == 0 || self.poll_ms == 0 || self.batch == 0 {
            bail!("CHECKOUT__MAIL__TIMEOUT_MS, __POLL_MS and __BATCH must be positive");
        }
        Ok(Some(SmtpConfig {
            host: host.to_owned(),
            port: self.smtp_port,
            tls,
            user: self.smtp_user.clone(),
            password,
            from,
            timeout: Duration::from_millis(self.timeout_ms),
        }))
    }
}

/// The receipt worker of this instance when an SMTP server is configured: it sends the due
/// receipts (a batch at a time, one after the other) every `poll_ms`, and at once again
/// while a batch came full. `None`: no server, nothing is sent.
pub fn receipt_worker(
    settings: &Settings,
    store: PgStore,
) -> anyhow::Result<Option<impl std::future::Future<Output = ()>>> {
    let Some(config) = settings.mail.smtp(settings.environment)? else {
        tracing::info!(
            "no SMTP server configured: receipts stay in the outbox (checkout mail list)"
        );
        return Ok(None);
    };
    let mailer = SmtpMailer::new(&config).map_err(|e| anyhow::anyhow!("CHECKOUT__MAIL__*: {e}"))?;
    let mail = &settings.mail;
    let schedule = crate::settings::retry_schedule(
        &mail.schedule_seconds,
        mail.time_scale,
        "CHECKOUT__MAIL__SCHEDULE_SECONDS",
    )?;
    // Every sending of a batch may take the whole time-out, one after the other.
    let lease_ms = mail
        .timeout_ms
        .saturating_mul(u64::from(mail.batch))
        .saturating_add(5_000);
    let policy = ReceiptPolicy {
        schedule,
        batch: mail.batch,
        lease: time::Duration::milliseconds(i64::try_from(lease_ms).unwrap_or(i64::MAX)),
    };
    let receipts = Receipts::new(
        Arc::new(store),
        Arc::new(mailer),
        Arc::new(SystemClock),
        policy,
    );
    let (idle, batch) = (Duration::from_millis(mail.poll_ms), mail.batch);
    tracing::info!(host = %config.host, port = config.port.unwrap_or(config.tls.default_port()), "receipts are sent by SMTP");
    Ok(Some(async move {
        loop {
            let full = match receipts.send_due().await {
                Ok(run) => {
                    if run.failed > 0 {
                        tracing::warn!(failed = run.failed, "receipt mails failed for good");
                    }
                    if run.retrying > 0 {
                        tracing::info!(retrying = run.retrying, "receipt mails to retry");
                    }
                    run.sent + run.retrying + run.failed + run.stale >= batch
                }
                Err(e) => {
                    tracing::warn!(error = format!("{e:#}"), "sending receipts failed");
                    false
                }
            };
            if !full {
                tokio::time::sleep(idle).await;
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn parses_the_list_and_refuses_the_rest() {
        assert_eq!(
            MailCommand::parse(&["list"]),
            Ok(MailCommand::List {
                terminal: None,
                limit: DEFAULT_LIST
            })
        );
        assert_eq!(
            MailCommand::parse(&["list", "--terminal", "T-9", "--limit", "5"]),
            Ok(MailCommand::List {
                terminal: Some("T-9".into()),
                limit: 5
            })
        );
        for bad in [
            &["send"][..],
            &["list", "--terminal"],
            &["list", "--limit", "0"],
            &["list", "--terminal", "bad number!"],
            &["list", "--verbose", "x"],
        ] {
            assert!(MailCommand::parse(bad).is_err(), "{bad:?}");
        }
    }

    fn mail(vars: &[(&str, &str)]) -> anyhow::Result<Option<SmtpConfig>> {
        let settings =
            Settings::from_sources(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))?;
        settings.mail.smtp(settings.environment)
    }

    #[test]
    fn smtp_settings_default_to_none_and_refuse_what_cannot_work() {
        assert!(mail(&[]).unwrap().is_none());
        let config = mail(&[
            ("CHECKOUT__MAIL__SMTP_HOST", "smtp.example"),
            ("CHECKOUT__MAIL__SMTP_USER", "shop"),
            ("CHECKOUT__MAIL__SMTP_PASSWORD", "hunter2-secret"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(config.tls, SmtpTls::StartTls);
        assert_eq!(config.tls.default_port(), 587);
        assert!(!format!("{config:?}").contains("hunter2-secret"));
        assert!(mail(&[
            ("CHECKOUT__MAIL__SMTP_HOST", "smtp.example"),
            ("CHECKOUT__MAIL__SMTP_USER", "shop"),
        ])
        .is_err());
        assert!(mail(&[
            ("CHECKOUT__MAIL__SMTP_HOST", "smtp.example"),
            ("CHECKOUT__MAIL__SMTP_TLS", "ssl"),
        ])
        .is_err());
        let production = [
            ("CHECKOUT__ENVIRONMENT", "production"),
            ("DATABASE_URL", "postgres://db/checkout"),
            ("CHECKOUT__IDENTITY__KEY_FILE", "/keys/k.pk8"),
            ("CHECKOUT__SERVER__PUBLIC_BASE_URL", "https://pay.example"),
            ("CHECKOUT__MAIL__SMTP_HOST", "smtp.example"),
            ("CHECKOUT__MAIL__SMTP_TLS", "none"),
            ("CHECKOUT__MAIL__FROM", "receipts@pay.example"),
        ];
        let err = mail(&production).unwrap_err();
        assert!(format!("{err:#}").contains("loopback"), "{err:#}");
    }
}
