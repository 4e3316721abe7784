//! GET /pay/api/events bodies: a page of the terminal's events. Each event has exactly the
//! body its webhook delivery carries.

use checkout_domain::events::{EventSubject, PaymentEvent};
use checkout_domain::ports::EventEncoder;
use serde::Serialize;
use utoipa::ToSchema;

use super::schemas::{DisputeStatusName, EventTypeName};
use super::{utc_timestamp, PaymentStatusResponse};

/// One event: what happened to a payment session, with the session's status record as of
/// the event.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventBody {
    /// The event id: the same on every delivery and every read of the event.
    #[schema(example = "6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55")]
    pub id: String,
    /// One of `payment.succeeded`, `payment.authorized`, `payment.failed`,
    /// `payment.expired`, `payment.cancelled`, `payment.captured`, `payment.voided`,
    /// `payment.refunded`, `payment.attempt_failed`, `payment.refund_failed`,
    /// `payment.authorization_expired`, `payment.dispute_opened`,
    /// `payment.dispute_closed`, and the card-testing guard's
    /// `terminal.card_testing_suspected` and `terminal.card_testing_ended` (about the session
    /// whose post saw the terminal's decline rate spike or calm).
    #[serde(rename = "type")]
    #[schema(value_type = EventTypeName)]
    pub kind: String,
    /// When it happened (UTC, ISO 8601).
    #[schema(format = DateTime, example = "2026-11-23T11:32:10Z")]
    pub timestamp: String,
    /// The status record of `GET /pay/api/payment/{id}` as of the event.
    pub data: PaymentStatusResponse,
    /// `payment.refund_failed`: the refund that failed (its `refundId` in
    /// `GET /pay/api/payment/{id}/refunds`). Absent on other events.
    #[serde(rename = "refundId", skip_serializing_if = "Option::is_none")]
    #[schema(example = "5b1f0e2a-8c3d-4e7f-9a6b-0c1d2e3f4a5b")]
    pub refund_id: Option<String>,
    /// `payment.dispute_opened` and `payment.dispute_closed`: the dispute, with its status as
    /// of the event (a closed one's outcome: `Won`, `Lost` or `InquiryClosed`). Absent on
    /// other events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispute: Option<EventDispute>,
}

/// The dispute an event is about.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventDispute {
    /// The processor's dispute reference (as in the record's `disputes`).
    #[schema(example = "dp_1Q2w3E4r5T6y7U8i")]
    pub dispute_id: String,
    /// Its status when the event was written.
    #[schema(value_type = DisputeStatusName)]
    pub status: String,
}

impl EventBody {
    /// The body of `event`.
    pub fn new(event: &PaymentEvent) -> Self {
        EventBody {
            id: event.id.to_string(),
            kind: event.kind.as_str().to_owned(),
            timestamp: utc_timestamp(event.occurred_at),
            data: PaymentStatusResponse::new(&event.session, event.occurred_at),
            refund_id: match &event.about {
                Some(EventSubject::Refund(id)) => Some(id.to_string()),
                _ => None,
            },
            dispute: match &event.about {
                Some(EventSubject::Dispute { reference, status }) => Some(EventDispute {
                    dispute_id: reference.clone(),
                    status: status.name().to_owned(),
                }),
                _ => None,
            },
        }
    }
}

/// A page of events.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventPageResponse {
    /// The events, in the order of the transactions that wrote them.
    pub events: Vec<EventBody>,
    /// Pass as `after` to read on from here (absent while there is nothing to read).
    pub cursor: Option<String>,
    /// True when more events were already available after this page.
    pub has_more: bool,
}

/// Webhook bodies: the JSON of [`EventBody`], the same as the feed's.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonEventEncoder;

impl EventEncoder for JsonEventEncoder {
    fn encode(&self, event: &PaymentEvent) -> Vec<u8> {
        // Serialising plain strings and numbers cannot fail.
        serde_json::to_vec(&EventBody::new(event)).unwrap_or_default()
    }
}

/// The OpenAPI 3.1 `webhooks` section: the request each webhook endpoint receives for an event
/// (Standard Webhooks: the body is the event, exactly as the feed shows it, signed in the
/// `webhook-*` headers).
pub fn webhook_requests() -> serde_json::Value {
    let header = |name: &str, description: &str, example: &str| {
        serde_json::json!({
            "name": name,
            "in": "header",
            "required": true,
            "description": description,
            "schema": {"type": "string"},
            "example": example,
        })
    };
    serde_json::json!({
        "paymentEvent": {
            "post": {
                "operationId": "payment_event_webhook",
                "summary": "A payment event, posted to each subscribed webhook endpoint",
                "description": "Sent to every enabled endpoint of the terminal whose `events` include the event's type, as a Standard Webhooks message: verify the signature over `{webhook-id}.{webhook-timestamp}.{raw body}` with the endpoint's `whsec_` secret (any Standard Webhooks library does), refuse a timestamp more than 5 minutes away, and deduplicate by `webhook-id` (the same on every attempt and on a redelivery). Answer any 2xx promptly (an attempt waits 15 seconds by default); anything else is retried with growing waits, and the attempt is in the endpoint's deliveries log.",
                "tags": ["Webhooks"],
                "security": [],
                "parameters": [
                    header("webhook-id", "The message id: the event's id, the same on every attempt", "6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55"),
                    header("webhook-timestamp", "The attempt's time, in Unix seconds", "1795952000"),
                    header("webhook-signature", "Space-separated `v1,<base64 HMAC-SHA256>` signatures, one per secret in use (two while a rotated secret overlaps)", "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="),
                ],
                "requestBody": {
                    "required": true,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/EventBody"}
                        }
                    }
                },
                "responses": {
                    "200": {"description": "Received (any 2xx): the delivery is done"},
                    "400": {"description": "Refused (for example a signature that does not verify): the delivery is retried, then left failed in the deliveries log"}
                }
            }
        }
    })
}
