//! Rows as diesel reads and writes them, and their conversion to and from domain values.
//! Reading rebuilds every value with its validating constructor, so a row the domain would
//! refuse is reported as an error, never passed on.

use anyhow::{anyhow, Context};
use checkout_domain::auth::{OAuthClient, Role};
use checkout_domain::card::CardBrand;
use checkout_domain::session::{
    AttemptState, Callbacks, Charge, Dispute, DisputeStatus, HoldAction, HoldActionKind, Item,
    LedgerState, PaymentAttempt, PaymentSession, Refund, SessionKind, SessionMoney, SessionRecord,
    SessionState,
};
use checkout_domain::terminal::{CaptureMethod, Terminal};
use checkout_domain::values::{
    ActionId, Amount, AttemptId, CallbackHosts, CallbackUrl, Culture, Currency, DisplayText, Email,
    IdempotencyKey, InternalReference, ItemCode, LineAmount, MaxCardAttempts, MerchantReference,
    Metadata, RefundId, SessionId, TerminalNumber,
};
use checkout_domain::SvcCode;
use diesel::prelude::*;
use rust_decimal::Decimal;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{
    hold_actions, oauth_clients, payment_attempts, payment_disputes, payment_refunds,
    payment_sessions, session_charges, session_items, terminals,
};

/// The `kind` column of a checkout session.
pub(crate) const KIND_CHECKOUT: &str = "checkout";
/// The `kind` column of a payment link.
pub(crate) const KIND_LINK: &str = "link";

/// A `payment_sessions` row.
#[derive(Debug, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = payment_sessions, check_for_backend(diesel::pg::Pg))]
pub(crate) struct SessionRow {
    pub id: Uuid,
    pub terminal_number: String,
    pub merchant_reference: String,
    pub internal_reference: String,
    pub kind: String,
    pub callback_success_url: Option<String>,
    pub callback_fail_url: Option<String>,
    pub callback_back_url: Option<String>,
    pub amount: Decimal,
    pub currency: String,
    pub description: Option<String>,
    pub email: Option<String>,
    pub culture: Option<String>,
    pub state: i16,
    pub expires_at: OffsetDateTime,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub current_attempt_id: Option<Uuid>,
    pub captured_amount: Option<Decimal>,
    pub refunded_amount: Decimal,
    pub metadata: Option<serde_json::Value>,
    pub capture_method: Option<String>,
}

/// A `session_items` row, without its `session_id`.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = session_items, check_for_backend(diesel::pg::Pg))]
pub(crate) struct ItemRow {
    pub position: i32,
    pub item_code: Option<String>,
    pub quantity: i64,
    pub description: Option<String>,
    pub amount: Decimal,
}

/// A `session_charges` row, without its `session_id`.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = session_charges, check_for_backend(diesel::pg::Pg))]
pub(crate) struct ChargeRow {
    pub position: i32,
    pub name: Option<String>,
    pub amount: Decimal,
}

/// The stored metadata object, checked again.
fn metadata(stored: Option<serde_json::Value>) -> anyhow::Result<Metadata> {
    let Some(value) = stored else {
        return Ok(Metadata::empty());
    };
    let serde_json::Value::Object(map) = value else {
        return Err(anyhow!("stored metadata is not an object"));
    };
    let entries = map.into_iter().map(|(k, v)| match v {
        serde_json::Value::String(v) => Ok((k, v)),
        _ => Err(anyhow!("stored metadata value of {k:?} is not a string")),
    });
    let entries = entries.collect::<anyhow::Result<Vec<_>>>()?;
    Metadata::parse(entries).map_err(|e| anyhow!("stored metadata: {e}"))
}

/// The metadata column of `m`: NULL for none.
pub(crate) fn metadata_column(m: &Metadata) -> Option<serde_json::Value> {
    (!m.is_empty()).then(|| {
        serde_json::Value::Object(
            m.entries()
                .map(|(k, v)| (k.to_owned(), serde_json::Value::String(v.to_owned())))
                .collect(),
        )
    })
}

fn position(i: usize) -> anyhow::Result<i32> {
    i32::try_from(i).context("too many entries")
}

/// The item rows of `s`, numbered in order.
pub(crate) fn item_rows(s: &PaymentSession) -> anyhow::Result<Vec<ItemRow>> {
    s.items()
        .iter()
        .enumerate()
        .map(|(i, item)| {
            Ok(ItemRow {
                position: position(i)?,
                item_code: item.code.as_ref().map(|c| c.as_str().to_owned()),
                quantity: i64::from(item.quantity),
                description: item.description.as_ref().map(|d| d.as_str().to_owned()),
                amount: item.amount.value(),
            })
        })
        .collect()
}

/// The charge rows of `s`, numbered in order.
pub(crate) fn charge_rows(s: &PaymentSession) -> anyhow::Result<Vec<ChargeRow>> {
    s.charges()
        .iter()
        .enumerate()
        .map(|(i, charge)| {
            Ok(ChargeRow {
                position: position(i)?,
                name: charge.name.as_ref().map(|n| n.as_str().to_owned()),
                amount: charge.amount.value(),
            })
        })
        .collect()
}

fn text<T, E: std::fmt::Display>(
    field: &str,
    value: &str,
    parse: impl Fn(&str) -> Result<T, E>,
) -> anyhow::Result<T> {
    parse(value).map_err(|e| anyhow!("stored {field} is invalid: {e}"))
}

fn optional_text<T, E: std::fmt::Display>(
    field: &str,
    value: Option<&str>,
    parse: impl Fn(&str) -> Result<T, E>,
) -> anyhow::Result<Option<T>> {
    value.map(|v| text(field, v, parse)).transpose()
}

fn kind(row: &SessionRow) -> anyhow::Result<SessionKind> {
    match row.kind.as_str() {
        KIND_LINK => Ok(SessionKind::PaymentLink),
        KIND_CHECKOUT => {
            let url = |field: &str, value: Option<&str>| -> anyhow::Result<CallbackUrl> {
                let value = value.ok_or_else(|| anyhow!("stored {field} is missing"))?;
                text(field, value, CallbackUrl::parse)
            };
            Ok(SessionKind::IntegratedCheckout(Box::new(Callbacks {
                success: url("callback_success_url", row.callback_success_url.as_deref())?,
                fail: url("callback_fail_url", row.callback_fail_url.as_deref())?,
                back: optional_text(
                    "callback_back_url",
                    row.callback_back_url.as_deref(),
                    CallbackUrl::parse,
                )?,
            })))
        }
        other => Err(anyhow!("stored session kind {other:?} is unknown")),
    }
}

/// Rebuilds a session from its row, items and charges (each already in position order).
pub(crate) fn session_from_rows(
    row: SessionRow,
    items: Vec<ItemRow>,
    charges: Vec<ChargeRow>,
) -> anyhow::Result<PaymentSession> {
    let id = row.id;
    build_session(row, items, charges).with_context(|| format!("reading payment session {id}"))
}

fn build_session(
    row: SessionRow,
    items: Vec<ItemRow>,
    charges: Vec<ChargeRow>,
) -> anyhow::Result<PaymentSession> {
    let currency = text("currency", &row.currency, Currency::parse)?;
    let items = items
        .into_iter()
        .map(|i| {
            Ok(Item {
                code: optional_text("item_code", i.item_code.as_deref(), ItemCode::parse)?,
                quantity: u32::try_from(i.quantity).context("stored quantity is out of range")?,
                description: optional_text(
                    "item description",
                    i.description.as_deref(),
                    DisplayText::parse,
                )?,
                amount: LineAmount::new(i.amount, currency)
                    .map_err(|e| anyhow!("stored item amount {e}"))?,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let charges = charges
        .into_iter()
        .map(|c| {
            Ok(Charge {
                name: optional_text("charge name", c.name.as_deref(), DisplayText::parse)?,
                amount: LineAmount::new(c.amount, currency)
                    .map_err(|e| anyhow!("stored charge amount {e}"))?,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(PaymentSession::restore(SessionRecord {
        id: SessionId::from_uuid(row.id),
        terminal: text(
            "terminal number",
            &row.terminal_number,
            TerminalNumber::parse,
        )?,
        reference: text(
            "merchant reference",
            &row.merchant_reference,
            MerchantReference::parse,
        )?,
        internal_reference: text(
            "internal reference",
            &row.internal_reference,
            InternalReference::parse,
        )?,
        kind: kind(&row)?,
        amount: Amount::new(row.amount, currency).map_err(|e| anyhow!("stored amount {e}"))?,
        description: optional_text(
            "description",
            row.description.as_deref(),
            DisplayText::parse,
        )?,
        email: optional_text("email", row.email.as_deref(), Email::parse)?,
        culture: optional_text("culture", row.culture.as_deref(), Culture::parse)?,
        items,
        charges,
        metadata: metadata(row.metadata)?,
        capture_method: row
            .capture_method
            .map(|m| CaptureMethod::parse(&m).ok_or_else(|| anyhow!("stored capture method {m:?}")))
            .transpose()?,
        state: SessionState::from_code(row.state)
            .ok_or_else(|| anyhow!("stored state code {} is unknown", row.state))?,
        created_at: row.created_at,
        updated_at: row.updated_at,
        current_attempt: row.current_attempt_id.map(AttemptId::from_uuid),
        expires_at: row.expires_at,
        money: SessionMoney::new(row.captured_amount, row.refunded_amount, currency)
            .map_err(|e| anyhow!("stored captured or refunded amount {e}"))?,
        attempts: Vec::new(),
        disputes: Vec::new(),
    }))
}

/// A `payment_attempts` row (without its insertion counter).
#[derive(Debug, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = payment_attempts, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AttemptRow {
    pub id: Uuid,
    pub session_id: Uuid,
    pub card_brand: String,
    pub card_last4: String,
    pub processor_reference: Option<String>,
    pub challenge_url: Option<String>,
    pub state: String,
    pub svc_code: Option<String>,
    pub payment_method: String,
    pub return_url: String,
    pub checks: i32,
    pub next_check_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub capture_method: String,
}

impl TryFrom<AttemptRow> for PaymentAttempt {
    type Error = anyhow::Error;

    fn try_from(row: AttemptRow) -> anyhow::Result<PaymentAttempt> {
        Ok(PaymentAttempt {
            id: AttemptId::from_uuid(row.id),
            session_id: SessionId::from_uuid(row.session_id),
            card_brand: CardBrand::parse(&row.card_brand),
            card_last4: row.card_last4,
            processor_reference: row.processor_reference,
            challenge_url: row.challenge_url,
            state: AttemptState::parse(&row.state)
                .ok_or_else(|| anyhow!("stored attempt state {:?} is unknown", row.state))?,
            payment_method: row.payment_method,
            return_url: row.return_url,
            capture_method: capture_method(&row.capture_method)?,
            checks: u32::try_from(row.checks).unwrap_or_default(),
            next_check_at: row.next_check_at,
            svc_code: row
                .svc_code
                .map(|c| SvcCode::parse(&c).ok_or_else(|| anyhow!("stored code {c:?} is unknown")))
                .transpose()?,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// A `terminals` row.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = terminals, check_for_backend(diesel::pg::Pg))]
pub(crate) struct TerminalRow {
    pub number: String,
    pub display_name: String,
    pub active: bool,
    pub callback_hosts: Option<Vec<String>>,
    pub max_card_attempts: i16,
    pub capture_method: String,
}

/// A stored capture method, parsed.
fn capture_method(stored: &str) -> anyhow::Result<CaptureMethod> {
    CaptureMethod::parse(stored)
        .ok_or_else(|| anyhow!("stored capture method {stored:?} is unknown"))
}

impl TryFrom<TerminalRow> for Terminal {
    type Error = anyhow::Error;

    fn try_from(row: TerminalRow) -> anyhow::Result<Terminal> {
        let callback_hosts = row
            .callback_hosts
            .map(|hosts| CallbackHosts::parse(hosts.iter().map(String::as_str)))
            .transpose()
            .with_context(|| format!("reading the callback hosts of terminal {}", row.number))?;
        Ok(Terminal {
            number: text("terminal number", &row.number, TerminalNumber::parse)?,
            display_name: row.display_name,
            active: row.active,
            callback_hosts,
            max_card_attempts: MaxCardAttempts::new(i64::from(row.max_card_attempts))
                .with_context(|| format!("reading maxCardAttempts of terminal {}", row.number))?,
            capture_method: capture_method(&row.capture_method)?,
        })
    }
}

/// A new `terminals` row.
#[derive(Insertable)]
#[diesel(table_name = terminals, check_for_backend(diesel::pg::Pg))]
pub(crate) struct NewTerminalRow<'a> {
    pub number: &'a str,
    pub display_name: &'a str,
    pub active: bool,
    pub callback_hosts: Option<&'a [String]>,
    pub max_card_attempts: i16,
    pub capture_method: &'static str,
}

/// An `oauth_clients` row.
#[derive(Queryable, Selectable)]
#[diesel(table_name = oauth_clients, check_for_backend(diesel::pg::Pg))]
pub(crate) struct ClientRow {
    pub client_id: String,
    pub secret_hash: String,
    pub terminal_number: String,
    pub roles: Vec<String>,
    pub active: bool,
}

impl TryFrom<ClientRow> for OAuthClient {
    type Error = anyhow::Error;

    fn try_from(row: ClientRow) -> anyhow::Result<OAuthClient> {
        let roles = row
            .roles
            .iter()
            .map(|r| Role::parse(r).ok_or_else(|| anyhow!("stored role {r:?} is unknown")))
            .collect::<anyhow::Result<Vec<_>>>()
            .with_context(|| format!("reading OAuth client {}", row.client_id))?;
        Ok(OAuthClient {
            terminal: text(
                "terminal number",
                &row.terminal_number,
                TerminalNumber::parse,
            )?,
            client_id: row.client_id,
            secret_hash: row.secret_hash,
            roles,
            active: row.active,
        })
    }
}

/// A new (or replacing) `oauth_clients` row.
#[derive(Insertable)]
#[diesel(table_name = oauth_clients, check_for_backend(diesel::pg::Pg))]
pub(crate) struct NewClientRow<'a> {
    pub client_id: &'a str,
    pub secret_hash: &'a str,
    pub terminal_number: &'a str,
    pub roles: Vec<&'static str>,
    pub active: bool,
}

impl<'a> NewClientRow<'a> {
    /// The row of `c`.
    pub fn of(c: &'a OAuthClient) -> Self {
        NewClientRow {
            client_id: &c.client_id,
            secret_hash: &c.secret_hash,
            terminal_number: c.terminal.as_str(),
            roles: c.roles.iter().map(|r| r.as_str()).collect(),
            active: c.active,
        }
    }
}

/// A `payment_refunds` row (without its insertion counter).
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = payment_refunds, check_for_backend(diesel::pg::Pg))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct RefundRow {
    pub id: Uuid,
    pub session_id: Uuid,
    pub amount: Decimal,
    pub state: String,
    pub processor_reference: Option<String>,
    pub svc_code: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub idempotency_key: Option<String>,
    pub next_check_at: Option<OffsetDateTime>,
}

impl RefundRow {
    /// The row of `r`.
    pub fn of(r: &Refund) -> Self {
        RefundRow {
            id: r.id.as_uuid(),
            session_id: r.session_id.as_uuid(),
            amount: r.amount,
            state: r.state.as_str().to_owned(),
            processor_reference: r.processor_reference.clone(),
            svc_code: r.svc_code.map(|c| c.code().to_owned()),
            created_at: r.created_at,
            updated_at: r.updated_at,
            idempotency_key: r.key.as_ref().map(|k| k.as_str().to_owned()),
            next_check_at: r.next_check_at,
        }
    }
}

impl TryFrom<RefundRow> for Refund {
    type Error = anyhow::Error;

    fn try_from(row: RefundRow) -> anyhow::Result<Refund> {
        Ok(Refund {
            id: RefundId::from_uuid(row.id),
            session_id: SessionId::from_uuid(row.session_id),
            amount: row.amount,
            state: LedgerState::parse(&row.state)
                .ok_or_else(|| anyhow!("stored refund state {:?} is unknown", row.state))?,
            processor_reference: row.processor_reference,
            svc_code: stored_code(row.svc_code.as_deref())?,
            key: stored_key(row.idempotency_key.as_deref())?,
            next_check_at: row.next_check_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// A `payment_disputes` row (without its insertion counter).
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = payment_disputes, check_for_backend(diesel::pg::Pg))]
pub(crate) struct DisputeRow {
    pub reference: String,
    pub session_id: Uuid,
    pub amount: Decimal,
    pub reason: String,
    pub status: String,
    pub opened_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl DisputeRow {
    /// The row of `d`.
    pub fn of(d: &Dispute) -> Self {
        DisputeRow {
            reference: d.reference.clone(),
            session_id: d.session_id.as_uuid(),
            amount: d.amount,
            reason: d.reason.clone(),
            status: d.status.as_str().to_owned(),
            opened_at: d.opened_at,
            updated_at: d.updated_at,
        }
    }
}

impl TryFrom<DisputeRow> for Dispute {
    type Error = anyhow::Error;

    fn try_from(row: DisputeRow) -> anyhow::Result<Dispute> {
        Ok(Dispute {
            status: DisputeStatus::parse(&row.status)
                .ok_or_else(|| anyhow!("stored dispute status {:?} is unknown", row.status))?,
            reference: row.reference,
            session_id: SessionId::from_uuid(row.session_id),
            amount: row.amount,
            reason: row.reason,
            opened_at: row.opened_at,
            updated_at: row.updated_at,
        })
    }
}

/// A stored SVC code, parsed.
fn stored_code(code: Option<&str>) -> anyhow::Result<Option<SvcCode>> {
    code.map(|c| SvcCode::parse(c).ok_or_else(|| anyhow!("stored code {c:?} is unknown")))
        .transpose()
}

/// A stored merchant key, parsed.
fn stored_key(key: Option<&str>) -> anyhow::Result<Option<IdempotencyKey>> {
    key.map(|k| IdempotencyKey::parse(k).map_err(|_| anyhow!("stored key {k:?} is invalid")))
        .transpose()
}

/// A `hold_actions` row.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = hold_actions, check_for_backend(diesel::pg::Pg))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct HoldActionRow {
    pub id: Uuid,
    pub session_id: Uuid,
    pub kind: String,
    pub amount: Decimal,
    pub state: String,
    pub captured_amount: Option<Decimal>,
    pub svc_code: Option<String>,
    pub idempotency_key: Option<String>,
    pub next_check_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl HoldActionRow {
    /// The row of `a`.
    pub fn of(a: &HoldAction) -> Self {
        HoldActionRow {
            id: a.id.as_uuid(),
            session_id: a.session_id.as_uuid(),
            kind: a.kind.as_str().to_owned(),
            amount: a.amount,
            state: a.state.as_str().to_owned(),
            captured_amount: a.captured,
            svc_code: a.svc_code.map(|c| c.code().to_owned()),
            idempotency_key: a.key.as_ref().map(|k| k.as_str().to_owned()),
            next_check_at: a.next_check_at,
            created_at: a.created_at,
            updated_at: a.updated_at,
        }
    }
}

impl TryFrom<HoldActionRow> for HoldAction {
    type Error = anyhow::Error;

    fn try_from(row: HoldActionRow) -> anyhow::Result<HoldAction> {
        Ok(HoldAction {
            id: ActionId::from_uuid(row.id),
            session_id: SessionId::from_uuid(row.session_id),
            kind: HoldActionKind::parse(&row.kind)
                .ok_or_else(|| anyhow!("stored action kind {:?} is unknown", row.kind))?,
            amount: row.amount,
            state: LedgerState::parse(&row.state)
                .ok_or_else(|| anyhow!("stored action state {:?} is unknown", row.state))?,
            captured: row.captured_amount,
            svc_code: stored_code(row.svc_code.as_deref())?,
            key: stored_key(row.idempotency_key.as_deref())?,
            next_check_at: row.next_check_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}
