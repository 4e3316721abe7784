//! Webhook endpoint and deliveries log bodies.

use checkout_domain::webhooks::{
    CircuitState, DeliveryLog, DeliveryPage, LoggedAttempt, WebhookEndpoint,
};
use checkout_domain::ValidationErrors;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;

use super::schemas::{CircuitStateName, DeliveryStateName, EventTypeFilter, EventTypeName};
use super::utc_timestamp;

/// A new webhook endpoint.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookEndpointRequest {
    /// Where to post events: `https`, with no fragment, to a host that resolves to public
    /// addresses (a sandbox served on loopback also accepts `http` and `localhost`, loopback
    /// or private addresses).
    #[schema(
        required = true,
        nullable = false,
        max_length = 2048,
        format = "uri",
        example = "http://localhost:9000/webhooks"
    )]
    pub url: Option<String>,
    /// The event types to receive (a repeat counts once); absent, or a list holding `"*"`: every type,
    /// including types added later.
    #[schema(value_type = Option<Vec<EventTypeFilter>>, min_items = 1, example = json!(["payment.succeeded", "payment.failed"]))]
    pub events: Option<Vec<String>>,
}

impl WebhookEndpointRequest {
    /// The URL, or a validation error naming `Url` when it is absent.
    pub fn url(&self) -> Result<&str, ValidationErrors> {
        match self.url.as_deref() {
            Some(url) if !url.is_empty() => Ok(url),
            _ => {
                let mut errors = ValidationErrors::new();
                errors.add("Url", "The Url field is required.");
                Err(errors)
            }
        }
    }
}

/// A webhook endpoint (its secret is shown only when it is created or rotated), with how it
/// has been answering.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEndpointResponse {
    /// The endpoint id.
    #[schema(example = "0b8c2f4e-7d1a-4e55-9c3b-6a2f1d0e9b77")]
    pub id: String,
    /// Where events are posted.
    pub url: String,
    /// The event types it receives; `["*"]`: every type.
    #[schema(value_type = Vec<EventTypeFilter>)]
    pub events: Vec<String>,
    /// When it was registered (UTC, ISO 8601).
    #[schema(format = DateTime, example = "2026-11-23T11:30:00Z")]
    pub created_date_time: String,
    /// False once it was disabled after failing for days: it is sent nothing (no event is
    /// queued for it) until `POST /pay/api/webhook-endpoints/{id}/enable`.
    #[schema(example = true)]
    pub enabled: bool,
    /// `closed` (deliveries go out as they fall due), `probing` (its last attempt failed: one
    /// attempt at a time), `open` (it kept failing: nothing is attempted until
    /// `circuitOpenUntilDateTime`, then one probe) or `disabled`.
    #[schema(value_type = CircuitStateName)]
    pub circuit: String,
    /// Failed attempts in a row (0 after a delivered one).
    #[schema(example = 0)]
    pub consecutive_failures: u32,
    /// When the first of those failed attempts was made; absent while the last attempt was
    /// delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, example = "2026-11-23T11:30:00Z")]
    pub failing_since_date_time: Option<String>,
    /// While the circuit is open: when the next attempt (a probe) may go.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, example = "2026-11-23T11:31:00Z")]
    pub circuit_open_until_date_time: Option<String>,
    /// When it was disabled; absent while it is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, example = "2026-11-28T11:30:00Z")]
    pub disabled_date_time: Option<String>,
    /// Why it was disabled; absent while it is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        example = "No attempt was delivered since 2026-11-23T11:30:00Z (214 failed in a row; the last: HTTP 503). Enable the endpoint again once it answers 2xx."
    )]
    pub disabled_reason: Option<String>,
}

impl WebhookEndpointResponse {
    /// The body of `endpoint`, its circuit as it stands at `now`.
    pub fn new(endpoint: &WebhookEndpoint, now: OffsetDateTime) -> Self {
        let health = &endpoint.health;
        let circuit = health.circuit(now);
        WebhookEndpointResponse {
            id: endpoint.id.to_string(),
            url: endpoint.url.clone(),
            events: endpoint.events.names(),
            created_date_time: utc_timestamp(endpoint.created_at),
            enabled: health.enabled(),
            circuit: circuit.as_str().to_owned(),
            consecutive_failures: health.consecutive_failures,
            failing_since_date_time: health.failing_since.map(utc_timestamp),
            circuit_open_until_date_time: match circuit {
                CircuitState::Open(until) => Some(utc_timestamp(until)),
                _ => None,
            },
            disabled_date_time: health.disabled.as_ref().map(|d| utc_timestamp(d.at)),
            disabled_reason: health.disabled.as_ref().map(|d| d.reason.clone()),
        }
    }
}

/// A new webhook endpoint with its signing secret, shown this once.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedWebhookEndpointResponse {
    /// The endpoint id.
    pub id: String,
    /// Where events are posted.
    pub url: String,
    /// The event types it receives; `["*"]`: every type.
    #[schema(value_type = Vec<EventTypeFilter>)]
    pub events: Vec<String>,
    /// The signing secret (`whsec_` and base64), for a Standard Webhooks library. Shown only
    /// here: keep it.
    #[schema(example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")]
    pub secret: String,
    /// When it was registered (UTC, ISO 8601).
    #[schema(format = DateTime, example = "2026-11-23T11:30:00Z")]
    pub created_date_time: String,
}

/// A rotated secret, shown this once.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotatedSecretResponse {
    /// The endpoint id.
    pub id: String,
    /// The new signing secret. Shown only here: keep it.
    pub secret: String,
    /// Until when the previous secret still signs beside the new one (each delivery carries
    /// one signature per active secret).
    #[schema(format = DateTime, example = "2026-11-23T11:30:00Z")]
    pub previous_secret_expires_date_time: String,
}

/// One attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttemptBody {
    /// When it started (UTC, ISO 8601).
    #[schema(format = DateTime, example = "2026-11-23T11:30:00Z")]
    pub attempted_date_time: String,
    /// How long it took, milliseconds.
    pub duration_ms: u32,
    /// The receiver's HTTP status; absent when there was no answer.
    pub status: Option<u16>,
    /// Why there was no answer (timeout, connection refused or closed, a refused URL).
    pub error: Option<String>,
    /// The first bytes of the receiver's answer; never kept for a receiver at a loopback or
    /// private address.
    pub response_excerpt: Option<String>,
}

impl DeliveryAttemptBody {
    fn new(attempt: &LoggedAttempt) -> Self {
        DeliveryAttemptBody {
            attempted_date_time: utc_timestamp(attempt.attempted_at),
            duration_ms: attempt.duration_ms,
            status: attempt.status,
            error: attempt.error.clone(),
            response_excerpt: attempt.response_excerpt.clone(),
        }
    }
}

/// One delivery of one event to the endpoint, with every attempt.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryBody {
    /// The delivery id.
    pub id: String,
    /// The event delivered: the `webhook-id` header of every attempt.
    pub event_id: String,
    /// The event's type.
    #[schema(value_type = EventTypeName)]
    pub event_type: String,
    /// `pending` (another attempt is due), `delivered` (answered 2xx), `failed` (every
    /// attempt of the retry schedule failed) or `cancelled` (the endpoint was deleted or
    /// disabled).
    #[schema(value_type = DeliveryStateName)]
    pub state: String,
    /// When the event was queued for the endpoint (UTC, ISO 8601).
    #[schema(format = DateTime, example = "2026-11-23T11:30:00Z")]
    pub created_date_time: String,
    /// When the next attempt is due (pending deliveries only).
    #[schema(format = DateTime, example = "2026-11-23T11:31:00Z")]
    pub next_attempt_date_time: Option<String>,
    /// True when asked for again with `POST /pay/api/events/{id}/redeliver`.
    pub redelivery: bool,
    /// Every attempt, oldest first.
    pub attempts: Vec<DeliveryAttemptBody>,
}

impl DeliveryBody {
    /// The body of `delivery`.
    pub fn new(delivery: &DeliveryLog) -> Self {
        DeliveryBody {
            id: delivery.id.to_string(),
            event_id: delivery.event_id.to_string(),
            event_type: delivery.event_type.as_str().to_owned(),
            state: delivery.state.as_str().to_owned(),
            created_date_time: utc_timestamp(delivery.created_at),
            next_attempt_date_time: delivery.next_attempt_at.map(utc_timestamp),
            redelivery: delivery.redelivery,
            attempts: delivery
                .attempts
                .iter()
                .map(DeliveryAttemptBody::new)
                .collect(),
        }
    }
}

/// A page of an endpoint's deliveries log, newest first, with the endpoint itself.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryPageResponse {
    /// The endpoint: whether it is enabled, its circuit, and why it was disabled.
    pub endpoint: WebhookEndpointResponse,
    /// The deliveries, newest first, each with every attempt.
    pub deliveries: Vec<DeliveryBody>,
    /// Pass it as `after` to read the older deliveries; absent when the page is empty.
    #[schema(pattern = r"^[0-9]{1,19}$", example = "741")]
    pub cursor: Option<String>,
    /// True when older deliveries follow this page.
    pub has_more: bool,
}

impl DeliveryPageResponse {
    /// The body of `page` of `endpoint`'s log, its circuit as it stands at `now`.
    pub fn new(endpoint: &WebhookEndpoint, page: &DeliveryPage, now: OffsetDateTime) -> Self {
        DeliveryPageResponse {
            endpoint: WebhookEndpointResponse::new(endpoint, now),
            deliveries: page.deliveries.iter().map(DeliveryBody::new).collect(),
            cursor: page.cursor.map(|c| c.to_string()),
            has_more: page.has_more,
        }
    }
}

/// The deliveries queued by a redelivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedeliveryResponse {
    /// The event.
    pub event_id: String,
    /// The new deliveries, one per enabled endpoint receiving the event's type (none when no
    /// endpoint receives it); follow them in each endpoint's deliveries log.
    pub deliveries: Vec<String>,
}
