//! `checkout trigger <event type>`: makes a sandbox session and drives it, through the public
//! API and the sandbox's developer routes, until the service emits that event.

use std::io::Write;

use anyhow::{bail, Context};
use checkout_domain::events::EventType;
use checkout_processor::sandbox::cards;
use reqwest::Method;
use serde_json::{json, Value};

use super::{Connection, Flags, Refused, Remote, CONNECTION_FLAGS};
use crate::settings::Settings;

/// The usage line of `checkout trigger`.
pub const USAGE: &str = "checkout trigger <event type> [--base-url <url>] [--client-id <id>] [--client-secret <secret>]";

/// How the sandbox reaches an event type, or why it cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Pay with a test card (approved, held, or declined until the session fails).
    Pay(&'static str),
    /// Decline cards until the session is Failed.
    DeclineUntilFailed,
    /// Expire the unpaid session now.
    Expire,
    /// The merchant cancels the unpaid session.
    Cancel,
    /// Pay with a card held without capture, then capture.
    Capture,
    /// Pay with a card held without capture, then void.
    Void,
    /// Pay with `card`, then refund half.
    Refund(&'static str),
    /// The sandbox cannot produce it: the reason.
    Unreachable(&'static str),
}

/// How `checkout trigger` reaches `kind`.
pub fn plan(kind: EventType) -> Plan {
    match kind {
        EventType::PaymentSucceeded => Plan::Pay(cards::APPROVED),
        EventType::PaymentAuthorized => Plan::Pay(cards::APPROVED_NOT_CAPTURED),
        EventType::PaymentFailed | EventType::PaymentAttemptFailed => Plan::DeclineUntilFailed,
        EventType::PaymentExpired => Plan::Expire,
        EventType::PaymentCancelled => Plan::Cancel,
        EventType::PaymentCaptured => Plan::Capture,
        EventType::PaymentVoided => Plan::Void,
        EventType::PaymentRefunded => Plan::Refund(cards::APPROVED),
        EventType::PaymentRefundFailed => Plan::Refund(cards::REFUND_REFUSED),
        EventType::PaymentAuthorizationExpired => Plan::Unreachable(
            "the sandbox processor never releases an authorisation by itself (only a real \
             processor's event does)",
        ),
        EventType::PaymentDisputeOpened | EventType::PaymentDisputeClosed => {
            Plan::Unreachable("the sandbox processor has no disputes")
        }
        EventType::TerminalCardTestingSuspected | EventType::TerminalCardTestingEnded => {
            Plan::Unreachable(
                "it would put the terminal's card-testing guard on alert, challenging every \
                 payer of the sandbox",
            )
        }
    }
}

/// The event types the service emits, one per line with what `trigger` does for each.
pub fn event_types() -> String {
    EventType::ALL
        .iter()
        .map(|t| match plan(*t) {
            Plan::Unreachable(why) => format!("  {t}  (not in the sandbox: {why})"),
            _ => format!("  {t}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What `checkout trigger` was asked.
#[derive(Debug)]
pub struct TriggerOptions {
    /// The service and the credentials.
    pub connection: Connection,
    /// The event to make.
    pub kind: EventType,
}

impl TriggerOptions {
    /// Reads the words after `trigger`.
    pub fn parse(args: &[&str], settings: &Settings) -> anyhow::Result<TriggerOptions> {
        let flags = Flags::parse(args, &CONNECTION_FLAGS, &[]).map_err(anyhow::Error::msg)?;
        let [name] = flags.words.as_slice() else {
            bail!("give one event type; the service emits:\n{}", event_types());
        };
        let Some(kind) = EventType::parse(name) else {
            bail!(
                "unknown event type {name:?}; the service emits:\n{}",
                event_types()
            );
        };
        if let Plan::Unreachable(why) = plan(kind) {
            bail!("{kind} cannot be triggered in the sandbox: {why}");
        }
        Ok(TriggerOptions {
            connection: Connection::of(&flags, settings)?,
            kind,
        })
    }
}

/// The path of a session's route.
fn payment(id: &str, rest: &str) -> String {
    format!("/pay/api/payment/{id}{rest}")
}

fn sandbox(id: &str, rest: &str) -> String {
    format!("/pay/api/sandbox/payment/{id}{rest}")
}

/// Creates a session of 20.00 USD; answers its id.
async fn new_session(remote: &mut Remote, kind: EventType) -> anyhow::Result<String> {
    let mut suffix = [0u8; 6];
    getrandom::getrandom(&mut suffix).context("no randomness")?;
    let suffix: String = suffix.iter().map(|b| format!("{b:02x}")).collect();
    let body = json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "callbackBackUrl": "https://merchant.example/cart",
        "totalTransactionAmount": 20.00,
        "currencyCode": "USD",
        "transactionReferenceNumber": format!("trigger-{}-{suffix}", kind.as_str().replace('.', "-")),
    });
    let created = remote
        .call(Method::POST, "/pay/api/start-payment", Some(&body))
        .await?;
    Ok(created["checkoutSessionId"]
        .as_str()
        .context("start-payment answered no checkoutSessionId")?
        .to_owned())
}

/// Pays `id` with `card` through the sandbox route; answers the state name.
async fn pay(remote: &mut Remote, id: &str, card: &str) -> anyhow::Result<String> {
    let record = remote
        .call(
            Method::POST,
            &sandbox(id, "/pay"),
            Some(&json!({ "cardNumber": card })),
        )
        .await?;
    Ok(state_of(&record))
}

fn state_of(record: &Value) -> String {
    record["state"]
        .as_str()
        .or_else(|| record["payment"]["state"].as_str())
        .unwrap_or("?")
        .to_owned()
}

/// Pays with `card` and checks the session reached `state`.
async fn pay_to(remote: &mut Remote, id: &str, card: &str, state: &str) -> anyhow::Result<()> {
    let reached = pay(remote, id, card).await?;
    if reached != state {
        bail!("session {id} is {reached} after the test card, not {state} (is the terminal's capture method as expected?)");
    }
    Ok(())
}

/// POSTs `path` without a body; answers the state of the session it answers.
async fn post_for_state(remote: &mut Remote, path: &str) -> anyhow::Result<String> {
    Ok(state_of(&remote.call(Method::POST, path, None).await?))
}

/// Runs `checkout trigger`: one session driven to the event; prints what it did.
pub async fn run(options: TriggerOptions, out: &mut impl Write) -> anyhow::Result<()> {
    let kind = options.kind;
    let mut remote = Remote::new(options.connection)?;
    let id = new_session(&mut remote, kind).await?;
    writeln!(out, "session {id} created")?;
    let done = match plan(kind) {
        Plan::Pay(card) => pay(&mut remote, &id, card).await?,
        Plan::DeclineUntilFailed => {
            let mut state = String::new();
            // A terminal may allow up to 10 cards per session.
            for _ in 0..10 {
                state = pay(&mut remote, &id, cards::DECLINED).await?;
                if state != "Pending" {
                    break;
                }
            }
            state
        }
        Plan::Expire => post_for_state(&mut remote, &sandbox(&id, "/expire")).await?,
        Plan::Cancel => post_for_state(&mut remote, &payment(&id, "/cancel")).await?,
        Plan::Capture | Plan::Void => {
            pay_to(
                &mut remote,
                &id,
                cards::APPROVED_NOT_CAPTURED,
                "ApprovedTransaction",
            )
            .await?;
            let action = if plan(kind) == Plan::Capture {
                "/capture"
            } else {
                "/void"
            };
            post_for_state(&mut remote, &payment(&id, action)).await?
        }
        Plan::Refund(card) => {
            pay_to(&mut remote, &id, card, "Successful").await?;
            let refund = json!({ "amount": 10.00 });
            match remote
                .call(Method::POST, &payment(&id, "/refunds"), Some(&refund))
                .await
            {
                Ok(answer) => format!(
                    "{}, refund {}",
                    state_of(&answer),
                    answer["refund"]["state"].as_str().unwrap_or("?")
                ),
                // The refused refund is the event asked for.
                Err(e) if kind == EventType::PaymentRefundFailed => {
                    match e.downcast_ref::<Refused>() {
                        Some(refused) if refused.problem["type"] == "SVC_009" => {
                            "Successful, refund Failed".to_owned()
                        }
                        _ => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Plan::Unreachable(why) => bail!("{kind} cannot be triggered in the sandbox: {why}"),
    };
    writeln!(out, "session {id}: {done}")?;
    writeln!(out, "triggered {kind}")?;
    Ok(())
}
