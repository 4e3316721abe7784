#![doc = include_str!("../README.md")]

pub mod compose;

use std::time::Duration;

use async_trait::async_trait;
use checkout_domain::ports::ReceiptMailer;
use checkout_domain::receipts::{MailFailure, Receipt};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::{self, AsyncSmtpTransport};
use lettre::{AsyncTransport, Message, Tokio1Executor};
use secrecy::{ExposeSecret, SecretString};

/// How the connection to the SMTP server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpTls {
    /// STARTTLS, required (port 587 by default).
    StartTls,
    /// TLS from the first byte (port 465 by default).
    Tls,
    /// None: only for a relay on loopback or the tests' receiver (port 25 by default).
    None,
}

impl SmtpTls {
    /// Parses `starttls`, `tls` or `none`.
    pub fn parse(s: &str) -> Option<SmtpTls> {
        match s {
            "starttls" => Some(SmtpTls::StartTls),
            "tls" => Some(SmtpTls::Tls),
            "none" => Some(SmtpTls::None),
            _ => None,
        }
    }

    /// The port of this mode when none is configured: 587, 465 or 25.
    pub fn default_port(self) -> u16 {
        match self {
            SmtpTls::StartTls => smtp::SUBMISSION_PORT,
            SmtpTls::Tls => smtp::SUBMISSIONS_PORT,
            SmtpTls::None => smtp::SMTP_PORT,
        }
    }
}

/// The SMTP server receipts are sent through.
#[derive(Debug, Clone)]
pub struct SmtpConfig {
    /// Its host name (checked against its certificate with TLS).
    pub host: String,
    /// Its port; `None`: the TLS mode's.
    pub port: Option<u16>,
    /// How the connection is protected.
    pub tls: SmtpTls,
    /// The user to log in as, if the server asks for a login.
    pub user: Option<String>,
    /// That user's password (masked in `Debug`).
    pub password: Option<SecretString>,
    /// The sender (`From`), such as `Receipts <receipts@pay.example>`.
    pub from: String,
    /// How long one sending may take (connection and every reply).
    pub timeout: Duration,
}

/// [`ReceiptMailer`] over SMTP: one connection per receipt (receipts are few and far
/// between; no pool to keep alive).
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// The domain of the sender's address, for the `Message-ID`.
    domain: String,
}

impl std::fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// The mailer for `config`; refuses a sender that is not an address, or a host lettre
    /// cannot make TLS parameters for.
    pub fn new(config: &SmtpConfig) -> Result<SmtpMailer, String> {
        let from: Mailbox = config
            .from
            .parse()
            .map_err(|e| format!("the sender {:?} is not an address: {e}", config.from))?;
        let domain = from.email.domain().to_owned();
        let builder = match config.tls {
            SmtpTls::StartTls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&config.host)
                .map_err(|e| format!("SMTP host {:?}: {e}", config.host))?,
            SmtpTls::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&config.host)
                .map_err(|e| format!("SMTP host {:?}: {e}", config.host))?,
            SmtpTls::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&config.host),
        };
        let mut builder = builder
            .port(config.port.unwrap_or(config.tls.default_port()))
            .timeout(Some(config.timeout));
        if let Some(user) = &config.user {
            let password = config
                .password
                .as_ref()
                .map(|p| p.expose_secret().to_owned())
                .unwrap_or_default();
            builder = builder.credentials(Credentials::new(user.clone(), password));
        }
        Ok(SmtpMailer {
            transport: builder.build(),
            from,
            domain,
        })
    }

    /// The message of `receipt`: both parts, its subject, and a `Message-ID` of its own (the
    /// same on every retry, so that a receiver can tell a repeat).
    fn message(&self, receipt: &Receipt) -> Result<Message, MailFailure> {
        let to: Mailbox = receipt
            .to
            .parse()
            .map_err(|e| MailFailure::Permanent(format!("the payer's address: {e}")))?;
        let composed = compose::compose(receipt);
        Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(composed.subject)
            .message_id(Some(format!(
                "<receipt-{}@{}>",
                receipt.session_id, self.domain
            )))
            .date_now()
            .multipart(MultiPart::alternative_plain_html(
                composed.text,
                composed.html,
            ))
            .map_err(|e| MailFailure::Permanent(format!("the message: {e}")))
    }
}

#[async_trait]
impl ReceiptMailer for SmtpMailer {
    async fn send(&self, receipt: &Receipt) -> Result<(), MailFailure> {
        let message = self.message(receipt)?;
        match self.transport.send(message).await {
            Ok(_) => Ok(()),
            // A 5xx reply: the server refuses it for good.
            Err(e) if e.is_permanent() => Err(MailFailure::Permanent(e.to_string())),
            // No connection, a time-out, TLS, a 4xx reply: it may go through later.
            Err(e) => Err(MailFailure::Transient(e.to_string())),
        }
    }
}
