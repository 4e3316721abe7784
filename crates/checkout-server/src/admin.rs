//! Operator commands: terminals, OAuth clients, webhook endpoints, the card-testing guard and
//! the receipt outbox (`mail`).

use std::io::Write;

use anyhow::bail;
use checkout_domain::auth::{OAuthClient, Role};
use checkout_domain::terminal::{CaptureMethod, Terminal};
use checkout_domain::values::{CallbackHosts, MaxCardAttempts, TerminalNumber};
use checkout_domain::CheckoutError;
use checkout_postgres::PgStore;
use uuid::Uuid;

use crate::settings::{IdentityProviderKind, Settings};
use crate::{database, wiring};

/// One operator command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Apply migrations.
    Migrate,
    /// Provision a terminal.
    CreateTerminal {
        /// Its number.
        number: String,
        /// Merchant name shown to payers.
        name: String,
    },
    /// Activate or deactivate a terminal.
    SetTerminalActive {
        /// Its number.
        number: String,
        /// New flag.
        active: bool,
    },
    /// Set (or, with `None`, clear) the hosts a terminal's callback URLs may point to.
    SetCallbackHosts {
        /// Its number.
        number: String,
        /// The allowlist; `None`: any host.
        hosts: Option<CallbackHosts>,
    },
    /// Set how many cards may be declined on one session of a terminal before it is Failed.
    SetMaxCardAttempts {
        /// Its number.
        number: String,
        /// `maxCardAttempts` (1: the spec's behaviour).
        limit: MaxCardAttempts,
    },
    /// Set whether a terminal's payments are captured with their authorisation or held for
    /// the merchant to capture or void.
    SetCaptureMethod {
        /// Its number.
        number: String,
        /// Automatic (the spec's behaviour) or manual.
        method: CaptureMethod,
    },
    /// List terminals.
    ListTerminals,
    /// Create an OAuth client for a terminal; prints the secret once.
    CreateClient {
        /// The terminal.
        terminal: String,
    },
    /// Bind an external identity provider's client id to a terminal (with the OpenID Connect
    /// adapter): its tokens then act for the terminal. No secret is kept for it here.
    LinkClient {
        /// The terminal.
        terminal: String,
        /// The provider's client id (the `client_id` or `azp` claim of its tokens).
        client_id: String,
    },
    /// Activate or deactivate a client.
    SetClientActive {
        /// The client.
        client_id: String,
        /// New flag.
        active: bool,
    },
    /// List clients.
    ListClients,
    /// Register a webhook endpoint for a terminal; prints its secret once.
    AddWebhook {
        /// The terminal.
        terminal: String,
        /// Where events are posted.
        url: String,
        /// The event types; empty: every type.
        events: Vec<String>,
    },
    /// List a terminal's webhook endpoints.
    ListWebhooks {
        /// The terminal.
        terminal: String,
    },
    /// Delete one of a terminal's webhook endpoints.
    DeleteWebhook {
        /// The terminal.
        terminal: String,
        /// The endpoint.
        id: String,
    },
    /// Give one of a terminal's webhook endpoints a new secret; prints it once.
    RotateWebhookSecret {
        /// The terminal.
        terminal: String,
        /// The endpoint.
        id: String,
    },
    /// Enable one of a terminal's webhook endpoints again, its circuit closed.
    EnableWebhook {
        /// The terminal.
        terminal: String,
        /// The endpoint.
        id: String,
    },
    /// Show a terminal's card-testing guard state.
    ShowGuard {
        /// The terminal.
        terminal: String,
    },
    /// Clear a terminal's card-testing guard state: forget its recorded answers and lower its
    /// alert.
    ClearGuard {
        /// The terminal.
        terminal: String,
    },
    /// Refunds left for review (`reversals review|recheck`, see [`crate::reversal_review`]).
    Reversals(crate::reversal_review::ReversalCommand),
    /// Set the merchant name a terminal's payers are shown.
    RenameTerminal {
        /// Its number.
        number: String,
        /// The new name.
        name: String,
    },
    /// Show one page of a webhook endpoint's deliveries log, newest first, with each
    /// attempt's outcome.
    ListDeliveries {
        /// The terminal.
        terminal: String,
        /// The endpoint.
        id: String,
        /// The cursor of the previous page (`None`: from the newest).
        after: Option<String>,
    },
    /// Send one of a terminal's events again to its endpoints (as `POST
    /// /pay/api/events/{id}/redeliver` does, within its limits).
    RedeliverEvent {
        /// The terminal.
        terminal: String,
        /// The event id.
        event: String,
    },
    /// Give a client a new secret in place; the previous one keeps working for `overlap_hours`.
    RotateClientSecret {
        /// The client.
        client_id: String,
        /// How long the previous secret keeps working, hours (0: not at all).
        overlap_hours: u32,
    },
    /// Show the session with an `internalTransactionReferenceNumber` (the reference support
    /// is quoted), of whichever terminal.
    FindPayment {
        /// The internal reference, as quoted.
        reference: String,
    },
    /// A receipt-mail command (`crate::mail`).
    Mail(crate::mail::MailCommand),
}

/// How long a rotated client secret keeps working by default, hours.
pub const DEFAULT_SECRET_OVERLAP_HOURS: u32 = 24;
/// The longest overlap of a rotated client secret, hours (30 days).
pub const MAX_SECRET_OVERLAP_HOURS: u32 = 720;

/// Deliveries per page of `checkout webhook deliveries`.
const DELIVERIES_PER_PAGE: u32 = 20;

/// The longest merchant name accepted, in characters.
pub const MAX_MERCHANT_NAME: usize = 100;

impl Command {
    /// Parses the words after the program name.
    pub fn parse(words: &[&str]) -> Result<Command, String> {
        let c = match words {
            ["migrate"] => Command::Migrate,
            ["terminal", "create", number, name @ ..] if !name.is_empty() => {
                TerminalNumber::parse(number).map_err(|e| format!("terminal number {e}"))?;
                Command::CreateTerminal {
                    number: (*number).to_owned(),
                    name: name.join(" "),
                }
            }
            ["terminal", verb @ ("activate" | "deactivate"), number] => {
                Command::SetTerminalActive {
                    number: (*number).to_owned(),
                    active: *verb == "activate",
                }
            }
            ["terminal", "callback-hosts", number, "--any"] => Command::SetCallbackHosts {
                number: (*number).to_owned(),
                hosts: None,
            },
            ["terminal", "callback-hosts", number, hosts @ ..] if !hosts.is_empty() => {
                let hosts = CallbackHosts::parse(hosts.iter().flat_map(|h| h.split(',')))
                    .map_err(|e| format!("callback host {e}"))?;
                Command::SetCallbackHosts {
                    number: (*number).to_owned(),
                    hosts: Some(hosts),
                }
            }
            ["terminal", "max-card-attempts", number, n] => Command::SetMaxCardAttempts {
                number: (*number).to_owned(),
                limit: n
                    .parse()
                    .ok()
                    .and_then(|n| MaxCardAttempts::new(n).ok())
                    .ok_or_else(|| {
                        format!(
                            "max-card-attempts must be from 1 to {}",
                            MaxCardAttempts::MAX
                        )
                    })?,
            },
            ["terminal", "capture-method", number, method] => Command::SetCaptureMethod {
                number: (*number).to_owned(),
                method: CaptureMethod::parse(method)
                    .ok_or("capture-method must be automatic or manual")?,
            },
            ["terminal", "list"] => Command::ListTerminals,
            ["client", "create", terminal] => Command::CreateClient {
                terminal: (*terminal).to_owned(),
            },
            ["client", "link", terminal, client_id]
                if !client_id.trim().is_empty()
                    && client_id.len() <= 255
                    && !client_id.chars().any(char::is_control) =>
            {
                Command::LinkClient {
                    terminal: (*terminal).to_owned(),
                    client_id: (*client_id).to_owned(),
                }
            }
            ["client", verb @ ("activate" | "deactivate"), client_id] => Command::SetClientActive {
                client_id: (*client_id).to_owned(),
                active: *verb == "activate",
            },
            ["client", "list"] => Command::ListClients,
            ["webhook", "add", terminal, url, events @ ..] => Command::AddWebhook {
                terminal: (*terminal).to_owned(),
                url: (*url).to_owned(),
                events: events.iter().map(|e| (*e).to_owned()).collect(),
            },
            ["webhook", "list", terminal] => Command::ListWebhooks {
                terminal: (*terminal).to_owned(),
            },
            ["webhook", "delete", terminal, id] => Command::DeleteWebhook {
                terminal: (*terminal).to_owned(),
                id: (*id).to_owned(),
            },
            ["webhook", "rotate-secret", terminal, id] => Command::RotateWebhookSecret {
                terminal: (*terminal).to_owned(),
                id: (*id).to_owned(),
            },
            ["webhook", "enable", terminal, id] => Command::EnableWebhook {
                terminal: (*terminal).to_owned(),
                id: (*id).to_owned(),
            },
            ["guard", "show", terminal] => Command::ShowGuard {
                terminal: (*terminal).to_owned(),
            },
            ["guard", "clear", terminal] => Command::ClearGuard {
                terminal: (*terminal).to_owned(),
            },
            ["reversals", rest @ ..] => Command::Reversals(crate::reversal_review::parse(rest)?),
            ["terminal", "rename", number, name @ ..] if !name.is_empty() => {
                TerminalNumber::parse(number).map_err(|e| format!("terminal number {e}"))?;
                let name = name.join(" ");
                let name = name.trim();
                if name.is_empty()
                    || name.chars().count() > MAX_MERCHANT_NAME
                    || name.chars().any(char::is_control)
                {
                    return Err(format!(
                        "the merchant name must be 1 to {MAX_MERCHANT_NAME} characters, none a control character"
                    ));
                }
                Command::RenameTerminal {
                    number: (*number).to_owned(),
                    name: name.to_owned(),
                }
            }
            ["webhook", "deliveries", terminal, id, after @ ..] if after.len() <= 1 => {
                Command::ListDeliveries {
                    terminal: (*terminal).to_owned(),
                    id: (*id).to_owned(),
                    after: after.first().map(|a| (*a).to_owned()),
                }
            }
            ["event", "redeliver", terminal, event] => Command::RedeliverEvent {
                terminal: (*terminal).to_owned(),
                event: (*event).to_owned(),
            },
            ["client", "rotate-secret", client_id, overlap @ ..] if overlap.len() <= 1 => {
                Command::RotateClientSecret {
                    client_id: (*client_id).to_owned(),
                    overlap_hours: match overlap.first() {
                        None => DEFAULT_SECRET_OVERLAP_HOURS,
                        Some(hours) => hours
                            .parse()
                            .ok()
                            .filter(|h| *h <= MAX_SECRET_OVERLAP_HOURS)
                            .ok_or_else(|| {
                                format!(
                                    "the overlap must be a whole number of hours from 0 to {MAX_SECRET_OVERLAP_HOURS}"
                                )
                            })?,
                    },
                }
            }
            ["payment", "find", reference] => Command::FindPayment {
                reference: (*reference).trim().to_owned(),
            },
            ["mail", rest @ ..] => Command::Mail(crate::mail::MailCommand::parse(rest)?),
            _ => return Err(format!("unknown command: {}", words.join(" "))),
        };
        Ok(c)
    }
}

fn terminal_number(s: &str) -> anyhow::Result<TerminalNumber> {
    TerminalNumber::parse(s).map_err(|e| anyhow::anyhow!("terminal number {e}"))
}

fn endpoint_id(s: &str) -> anyhow::Result<Uuid> {
    Uuid::parse_str(s).map_err(|_| anyhow::anyhow!("{s:?} is not a webhook endpoint id"))
}

/// A use-case error as a sentence for the operator.
fn operator_error(e: CheckoutError) -> anyhow::Error {
    match e {
        CheckoutError::Validation(errors) => {
            let lines: Vec<String> = errors
                .fields()
                .iter()
                .map(|(field, messages)| format!("{field}: {}", messages.join(" ")))
                .collect();
            anyhow::anyhow!("{}", lines.join("; "))
        }
        other => anyhow::anyhow!("{other}"),
    }
}

/// Runs a webhook command as the terminal would through the API.
async fn run_webhook(
    settings: &Settings,
    store: PgStore,
    command: Command,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let key = wiring::signing_key(settings)?;
    let webhooks = wiring::wire_webhooks(settings, &key, store)?;
    match command {
        Command::AddWebhook {
            terminal,
            url,
            events,
        } => {
            let number = terminal_number(&terminal)?;
            let events = (!events.is_empty()).then_some(events);
            let created = webhooks
                .create_endpoint(&number, &url, events.as_deref())
                .await
                .map_err(operator_error)?;
            writeln!(out, "endpoint: {}", created.endpoint.id)?;
            writeln!(
                out,
                "events:   {}",
                created.endpoint.events.names().join(",")
            )?;
            writeln!(out, "secret:   {}", created.secret.expose())?;
            writeln!(out, "The secret is shown once; it is stored sealed.")?;
        }
        Command::ListWebhooks { terminal } => {
            let number = terminal_number(&terminal)?;
            for e in webhooks
                .list_endpoints(&number)
                .await
                .map_err(operator_error)?
            {
                let state = match &e.health.disabled {
                    Some(disabled) => format!("disabled: {}", disabled.reason),
                    None => e
                        .health
                        .circuit(time::OffsetDateTime::now_utc())
                        .as_str()
                        .to_owned(),
                };
                writeln!(
                    out,
                    "{}\t{}\t{}\t{state}",
                    e.id,
                    e.url,
                    e.events.names().join(",")
                )?;
            }
        }
        Command::DeleteWebhook { terminal, id } => {
            let number = terminal_number(&terminal)?;
            webhooks
                .delete_endpoint(&number, endpoint_id(&id)?)
                .await
                .map_err(operator_error)?;
            writeln!(out, "endpoint {id} deleted")?;
        }
        Command::RotateWebhookSecret { terminal, id } => {
            let number = terminal_number(&terminal)?;
            let rotated = webhooks
                .rotate_secret(&number, endpoint_id(&id)?)
                .await
                .map_err(operator_error)?;
            writeln!(out, "secret: {}", rotated.secret.expose())?;
            writeln!(
                out,
                "The previous secret signs beside it until {}.",
                rotated.previous_expires_at
            )?;
        }
        Command::EnableWebhook { terminal, id } => {
            let number = terminal_number(&terminal)?;
            webhooks
                .enable_endpoint(&number, endpoint_id(&id)?)
                .await
                .map_err(operator_error)?;
            writeln!(out, "endpoint {id} enabled, its circuit closed")?;
        }
        Command::ListDeliveries {
            terminal,
            id,
            after,
        } => {
            let number = terminal_number(&terminal)?;
            let after = match &after {
                Some(a) => Some(
                    a.parse::<checkout_domain::webhooks::DeliveryCursor>()
                        .map_err(|_| anyhow::anyhow!("{a:?} is not a deliveries cursor"))?,
                ),
                None => None,
            };
            let (_, page) = webhooks
                .deliveries(&number, endpoint_id(&id)?, after, DELIVERIES_PER_PAGE)
                .await
                .map_err(operator_error)?;
            let when = |t: time::OffsetDateTime| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default()
            };
            for d in &page.deliveries {
                let last = d.attempts.last().map_or_else(
                    || "no attempt yet".to_owned(),
                    |a| match (a.status, &a.error) {
                        (Some(status), _) => format!("last answer {status}"),
                        (None, Some(error)) => format!("last error: {error}"),
                        (None, None) => "no answer".to_owned(),
                    },
                );
                writeln!(
                    out,
                    "{}\t{}\t{}\tevent {}\t{}\t{} attempt(s), {last}{}",
                    d.id,
                    when(d.created_at),
                    d.event_type,
                    d.event_id,
                    d.state.as_str(),
                    d.attempts.len(),
                    if d.redelivery { " (redelivery)" } else { "" }
                )?;
            }
            match (&page.cursor, page.has_more) {
                (Some(cursor), true) => writeln!(
                    out,
                    "more: checkout webhook deliveries {terminal} {id} {cursor}"
                )?,
                _ => writeln!(out, "(end of the log)")?,
            }
        }
        Command::RedeliverEvent { terminal, event } => {
            let number = terminal_number(&terminal)?;
            let event_id = Uuid::parse_str(&event)
                .map_err(|_| anyhow::anyhow!("{event:?} is not an event id"))?;
            let queued = webhooks
                .redeliver(&number, event_id)
                .await
                .map_err(operator_error)?;
            if queued.is_empty() {
                writeln!(out, "event {event}: no enabled endpoint receives its type")?;
            }
            for delivery in queued {
                writeln!(out, "event {event}: delivery {delivery} queued, due now")?;
            }
        }
        _ => bail!("not a webhook command"),
    }
    Ok(())
}

/// Runs a support command: the lookups and changes support otherwise did in SQL.
async fn run_support(
    store: &PgStore,
    command: Command,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    match command {
        Command::RenameTerminal { number, name } => {
            if !store
                .set_display_name(&terminal_number(&number)?, &name)
                .await?
            {
                bail!("no terminal {number}");
            }
            writeln!(out, "terminal {number}: payers are shown {name:?}")?;
        }
        Command::FindPayment { reference } => {
            use checkout_domain::ports::SessionRepository;
            let parsed = checkout_domain::usecases::parse_internal_reference(&reference)
                .map_err(operator_error)?;
            let Some(s) = store.find_by_internal_reference(&parsed).await? else {
                bail!("no payment session with internalTransactionReferenceNumber {parsed}");
            };
            let when = |t: time::OffsetDateTime| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default()
            };
            writeln!(out, "checkoutSessionId:                  {}", s.id())?;
            writeln!(
                out,
                "internalTransactionReferenceNumber: {}",
                s.internal_reference()
            )?;
            writeln!(out, "transactionReferenceNumber:         {}", s.reference())?;
            writeln!(out, "terminal:                           {}", s.terminal())?;
            writeln!(
                out,
                "state:                              {} ({})",
                s.state().name(),
                s.state().code()
            )?;
            writeln!(out, "amount:                             {}", s.amount())?;
            writeln!(
                out,
                "created:                            {}",
                when(s.created_at())
            )?;
            writeln!(
                out,
                "last update:                        {}",
                when(s.updated_at())
            )?;
            writeln!(
                out,
                "expires:                            {}",
                when(s.expires_at())
            )?;
            for a in s.attempts() {
                writeln!(
                    out,
                    "attempt:                            {} {} {} {}",
                    when(a.at),
                    a.brand.as_str(),
                    a.last4,
                    a.outcome()
                )?;
            }
        }
        _ => bail!("not a support command"),
    }
    Ok(())
}

/// Runs a command against the configured database.
pub async fn run(settings: &Settings, command: Command) -> anyhow::Result<()> {
    let (url, _cluster) = database::resolve(settings).await?;
    checkout_postgres::run_migrations(&url).await?;
    let store = PgStore::connect(&url, 2).await?;
    let mut out = std::io::stdout().lock();
    match command {
        Command::AddWebhook { .. }
        | Command::ListWebhooks { .. }
        | Command::DeleteWebhook { .. }
        | Command::RotateWebhookSecret { .. }
        | Command::EnableWebhook { .. }
        | Command::ListDeliveries { .. }
        | Command::RedeliverEvent { .. } => {
            run_webhook(settings, store, command, &mut out).await?;
        }
        Command::RenameTerminal { .. } | Command::FindPayment { .. } => {
            run_support(&store, command, &mut out).await?;
        }
        Command::RotateClientSecret {
            client_id,
            overlap_hours,
        } => {
            if settings.identity.provider == IdentityProviderKind::Oidc {
                bail!("the identity provider is an external OpenID Connect provider: rotate the client's secret there");
            }
            let secret = checkout_identity::generate_secret();
            let hash = checkout_identity::hash_secret(secret.expose())?;
            let overlap = time::Duration::hours(i64::from(overlap_hours));
            let Some(until) = store
                .rotate_client_secret(&client_id, &hash, overlap)
                .await?
            else {
                bail!("no client {client_id}");
            };
            writeln!(out, "client_id:     {client_id}")?;
            writeln!(out, "client_secret: {}", secret.expose())?;
            writeln!(out, "The secret is shown once; only its hash is stored.")?;
            let until = until
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default();
            if overlap_hours == 0 {
                writeln!(out, "The previous secret no longer works.")?;
            } else {
                writeln!(out, "The previous secret keeps working until {until}.")?;
            }
        }
        Command::Migrate => writeln!(out, "migrations applied")?,
        Command::Reversals(command) => {
            crate::reversal_review::run(&store, command, &mut out).await?;
        }
        Command::Mail(command) => crate::mail::run(&store, command, &mut out).await?,
        Command::ShowGuard { terminal } => {
            use checkout_domain::ports::CardGuard;
            let number = terminal_number(&terminal)?;
            let policy = settings.guard.policy();
            let state = store
                .terminal_state(&number, &policy.windows, time::OffsetDateTime::now_utc())
                .await?;
            let minutes = policy.windows.terminal.whole_minutes();
            writeln!(out, "terminal: {number}")?;
            writeln!(
                out,
                "card_testing_suspected: {}",
                if state.alerted { "yes" } else { "no" }
            )?;
            writeln!(out, "answers_last_{minutes}_min: {}", state.posts)?;
            writeln!(out, "declines_last_{minutes}_min: {}", state.declines)?;
            writeln!(out, "declines_counted: {}", state.declines_kept)?;
        }
        Command::ClearGuard { terminal } => {
            use checkout_domain::ports::CardGuard;
            let number = terminal_number(&terminal)?;
            let forgotten = store.clear_terminal(&number).await?;
            writeln!(
                out,
                "cleared the card-testing guard of {number}: {forgotten} answers forgotten, alert lowered"
            )?;
        }
        Command::CreateTerminal { number, name } => {
            store
                .create_terminal(&Terminal {
                    number: terminal_number(&number)?,
                    display_name: name,
                    active: true,
                    callback_hosts: None,
                    max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
                    capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
                })
                .await?;
            writeln!(out, "terminal {number} created")?;
        }
        Command::SetTerminalActive { number, active } => {
            if !store
                .set_terminal_active(&terminal_number(&number)?, active)
                .await?
            {
                bail!("no terminal {number}");
            }
            writeln!(
                out,
                "terminal {number} {}",
                if active { "activated" } else { "deactivated" }
            )?;
        }
        Command::SetCallbackHosts { number, hosts } => {
            if !store
                .set_callback_hosts(&terminal_number(&number)?, hosts.as_ref())
                .await?
            {
                bail!("no terminal {number}");
            }
            match hosts {
                Some(h) => writeln!(
                    out,
                    "terminal {number}: callbacks only to {}",
                    h.hosts().join(", ")
                )?,
                None => writeln!(out, "terminal {number}: callbacks to any host")?,
            }
        }
        Command::SetMaxCardAttempts { number, limit } => {
            if !store
                .set_max_card_attempts(&terminal_number(&number)?, limit)
                .await?
            {
                bail!("no terminal {number}");
            }
            writeln!(out, "terminal {number}: maxCardAttempts {limit}")?;
        }
        Command::SetCaptureMethod { number, method } => {
            if !store
                .set_capture_method(&terminal_number(&number)?, method)
                .await?
            {
                bail!("no terminal {number}");
            }
            writeln!(out, "terminal {number}: capture {}", method.as_str())?;
        }
        Command::ListTerminals => {
            for t in store.list_terminals().await? {
                let hosts = t
                    .callback_hosts
                    .as_ref()
                    .map_or_else(|| "any host".to_owned(), |h| h.hosts().join(","));
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\tmaxCardAttempts={}\tcapture={}",
                    t.number,
                    if t.active { "active" } else { "inactive" },
                    hosts,
                    t.display_name,
                    t.max_card_attempts,
                    t.capture_method.as_str()
                )?;
            }
        }
        Command::CreateClient { terminal } => {
            if settings.identity.provider == IdentityProviderKind::Oidc {
                bail!(
                    "the identity provider is an external OpenID Connect provider: create the client there, then bind it here with `checkout client link {terminal} <client_id>`"
                );
            }
            let number = terminal_number(&terminal)?;
            let client_id = checkout_identity::generate_client_id(&number);
            let secret = checkout_identity::generate_secret();
            store
                .create_client(&OAuthClient {
                    client_id: client_id.clone(),
                    secret_hash: checkout_identity::hash_secret(secret.expose())?,
                    terminal: number,
                    roles: vec![Role::SvcTerminal],
                    active: true,
                })
                .await?;
            writeln!(out, "client_id:     {client_id}")?;
            writeln!(out, "client_secret: {}", secret.expose())?;
            writeln!(out, "The secret is shown once; only its hash is stored.")?;
        }
        Command::LinkClient {
            terminal,
            client_id,
        } => {
            let number = terminal_number(&terminal)?;
            // The hash of a random secret that is never shown: the built-in provider issues
            // no token for a linked client, whatever secret is tried.
            let unusable = checkout_identity::generate_secret();
            store
                .create_client(&OAuthClient {
                    client_id: client_id.clone(),
                    secret_hash: checkout_identity::hash_secret(unusable.expose())?,
                    terminal: number,
                    roles: vec![Role::SvcTerminal],
                    active: true,
                })
                .await?;
            writeln!(
                out,
                "client {client_id} linked to terminal {terminal}; its role comes from the provider's tokens"
            )?;
        }
        Command::SetClientActive { client_id, active } => {
            if !store.set_client_active(&client_id, active).await? {
                bail!("no client {client_id}");
            }
            writeln!(
                out,
                "client {client_id} {}",
                if active { "activated" } else { "deactivated" }
            )?;
        }
        Command::ListClients => {
            for c in store.list_clients().await? {
                let roles: Vec<&str> = c.roles.iter().map(|r| r.as_str()).collect();
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}",
                    c.client_id,
                    c.terminal,
                    if c.active { "active" } else { "inactive" },
                    roles.join(",")
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_refuses_bad_input() {
        assert_eq!(
            Command::parse(&["terminal", "create", "T-9", "Coffee", "Shop"]),
            Ok(Command::CreateTerminal {
                number: "T-9".into(),
                name: "Coffee Shop".into()
            })
        );
        assert_eq!(
            Command::parse(&["client", "deactivate", "c1"]),
            Ok(Command::SetClientActive {
                client_id: "c1".into(),
                active: false
            })
        );
        assert_eq!(
            Command::parse(&["client", "link", "T-9", "shop-backend"]),
            Ok(Command::LinkClient {
                terminal: "T-9".into(),
                client_id: "shop-backend".into()
            })
        );
        assert!(Command::parse(&["client", "link", "T-9", "bad\u{7}id"]).is_err());
        assert!(Command::parse(&["client", "link", "T-9"]).is_err());
        assert!(Command::parse(&["terminal", "create", "bad number!", "x"]).is_err());
        assert!(Command::parse(&["terminal", "create", "T-9"]).is_err());
        assert!(Command::parse(&["frobnicate"]).is_err());
        assert_eq!(
            Command::parse(&[
                "terminal",
                "callback-hosts",
                "T-9",
                "Shop.Example",
                "pay.example,shop.example"
            ]),
            Ok(Command::SetCallbackHosts {
                number: "T-9".into(),
                hosts: Some(CallbackHosts::parse(["shop.example", "pay.example"]).unwrap()),
            })
        );
        assert_eq!(
            Command::parse(&["terminal", "callback-hosts", "T-9", "--any"]),
            Ok(Command::SetCallbackHosts {
                number: "T-9".into(),
                hosts: None
            })
        );
        assert!(Command::parse(&[
            "terminal",
            "callback-hosts",
            "T-9",
            "https://shop.example/ok"
        ])
        .is_err());
        assert!(Command::parse(&["terminal", "callback-hosts", "T-9"]).is_err());
        assert_eq!(
            Command::parse(&["terminal", "max-card-attempts", "T-9", "3"]),
            Ok(Command::SetMaxCardAttempts {
                number: "T-9".into(),
                limit: MaxCardAttempts::new(3).unwrap(),
            })
        );
        for bad in ["0", "11", "-1", "three"] {
            assert!(
                Command::parse(&["terminal", "max-card-attempts", "T-9", bad]).is_err(),
                "{bad}"
            );
        }
    }
}
