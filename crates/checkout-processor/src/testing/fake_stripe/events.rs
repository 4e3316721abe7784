//! Stripe's Event objects: one for every state change the fake makes, carrying the changed
//! object as a retrieve would have answered it at that moment.

use serde_json::{json, Value};

use super::cards::unix_now;
use super::store::new_id;
use super::EventSnapshot;

/// The API version the events are written in (the one the Stripe adapter asks for).
pub(super) const API_VERSION: &str = "2024-06-20";

/// An event, with its JSON written once so that every delivery sends the same bytes.
pub(super) struct Event {
    pub id: String,
    pub kind: &'static str,
    pub created: i64,
    pub object: Value,
    pub body: String,
}

impl Event {
    /// A new event of type `kind` about `object`, created now.
    pub fn new(kind: &'static str, object: Value) -> Event {
        let id = new_id("evt");
        let created = unix_now();
        let body = json!({
            "id": id, "object": "event", "api_version": API_VERSION, "created": created,
            "data": { "object": object }, "livemode": false, "pending_webhooks": 1,
            "request": { "id": null, "idempotency_key": null }, "type": kind,
        })
        .to_string();
        Event {
            id,
            kind,
            created,
            object,
            body,
        }
    }

    pub fn snapshot(&self) -> EventSnapshot {
        EventSnapshot {
            id: self.id.clone(),
            kind: self.kind.to_owned(),
            object_id: self.object["id"].as_str().unwrap_or_default().to_owned(),
            created: self.created,
            object: self.object.clone(),
        }
    }
}
