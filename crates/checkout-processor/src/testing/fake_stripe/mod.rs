//! A stand-in for Stripe's PaymentIntents API on 127.0.0.1 that is as unkind as the real one
//! wherever kindness would hide a double charge or a lost payment:
//!
//! - idempotency keys replay the first answer that began work (a 200, a 402, or a 500 saved
//!   after work began), answer 409 while the first request is still executing and 400 when the
//!   key is reused with other parameters;
//! - the list of PaymentIntents lags behind writes by [`FakeStripeConfig::list_delay`];
//! - cancel, capture and refund follow Stripe's state rules;
//! - 3D Secure is completed on a page the fake hosts, at the processor, not by the client;
//! - any call can be made to hang, reset, close, answer a status or be delayed, before or
//!   after its work is done ([`FakeStripe::inject`]);
//! - an authorisation not captured within [`FakeStripeConfig::authorization_lifetime`]
//!   expires: the intent is canceled (`automatic`) and can no longer be captured;
//! - a refund of the `4000000000005126` card reads `succeeded`, then fails
//!   [`FakeStripeConfig::refund_failure_delay`] later;
//! - a payment can be disputed and the dispute won or lost ([`FakeStripe::open_dispute`]);
//! - every state change is an Event, delivered as a signed webhook
//!   ([`FakeStripe::deliver_events_to`]) that may arrive late, twice, out of order, and
//!   again after every non-2xx answer.
//!
//! Raw HTTP/1.1, one request per connection (`connection: close`), form-encoded requests and
//! JSON answers; events are sent with `reqwest`. A card number lives only in memory, as the
//! test behaviour it selects; the recorded requests carry `<redacted>` in its place and in
//! the CVC's.

mod api;
mod cards;
mod delivery;
mod disputes;
mod events;
mod faults;
mod http;
mod idempotency;
mod intents;
mod params;
mod payment_methods;
mod refunds;
mod server;
mod store;
mod three_ds;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use url::Url;

pub use delivery::EventDelivery;
pub use faults::{Call, Fault, When};

use server::Shared;

/// How the fake behaves where Stripe's behaviour depends on timing.
#[derive(Clone, Debug)]
pub struct FakeStripeConfig {
    /// How far `GET /v1/payment_intents` lags behind writes: it shows each intent as it was
    /// this long ago, so an intent younger than this is not listed at all. Default 2 s.
    pub list_delay: Duration,
    /// How long a refund of a payment made with `4000000000005126` reads `succeeded` before
    /// it reads `failed`. Real Stripe answers `succeeded` and fails the refund later; the
    /// default, zero, answers `failed` at once.
    pub refund_failure_delay: Duration,
    /// How long an authorisation (an intent in `requires_capture`) can be captured: older, it
    /// expires, and the intent is canceled with `cancellation_reason: "automatic"`. Stripe's
    /// is 7 days for most cards; the default, `None`, never expires.
    pub authorization_lifetime: Option<Duration>,
}

impl Default for FakeStripeConfig {
    fn default() -> Self {
        FakeStripeConfig {
            list_delay: Duration::from_secs(2),
            refund_failure_delay: Duration::ZERO,
            authorization_lifetime: None,
        }
    }
}

/// A PaymentIntent as the fake holds it now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntentSnapshot {
    /// `pi_...`.
    pub id: String,
    /// Stripe's status: `succeeded`, `requires_capture`, `requires_action`, ...
    pub status: String,
    /// The amount, in minor units.
    pub amount: i64,
    /// The amount captured.
    pub amount_received: i64,
    /// The amount authorised and not yet captured.
    pub amount_capturable: i64,
    /// The lower-case currency code.
    pub currency: String,
    /// The intent's metadata.
    pub metadata: BTreeMap<String, String>,
    /// The attached PaymentMethod (Stripe detaches it after a failed payment).
    pub payment_method: Option<String>,
    /// The latest charge, `ch_...`, once the card was tried.
    pub latest_charge: Option<String>,
    /// Why it was canceled: `automatic` when its authorisation expired.
    pub cancellation_reason: Option<String>,
    /// Creation time, unix seconds.
    pub created: i64,
}

/// A refund as the fake holds it now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefundSnapshot {
    /// `re_...`.
    pub id: String,
    /// The refunded PaymentIntent.
    pub payment_intent: String,
    /// The amount refunded, in minor units.
    pub amount: i64,
    /// `succeeded` or `failed`.
    pub status: String,
    /// The refund's metadata (the Stripe adapter sends `refund`: its ledger row's id).
    pub metadata: BTreeMap<String, String>,
}

/// A dispute as the fake holds it now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisputeSnapshot {
    /// `dp_...`.
    pub id: String,
    /// The disputed PaymentIntent.
    pub payment_intent: String,
    /// The disputed charge, the intent's latest.
    pub charge: String,
    /// The amount disputed, in minor units: what the intent received.
    pub amount: i64,
    /// The lower-case currency code.
    pub currency: String,
    /// Stripe's reason: `fraudulent`, `product_not_received`, ...
    pub reason: String,
    /// Stripe's status: `needs_response`, `under_review`, `won`, `lost`, ...
    pub status: String,
    /// Creation time, unix seconds.
    pub created: i64,
}

/// An event as the fake recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSnapshot {
    /// `evt_...`.
    pub id: String,
    /// The event's `type`: `payment_intent.succeeded`, `refund.failed`, ...
    pub kind: String,
    /// The id of the object it is about (`pi_...`, `re_...`, `dp_...`).
    pub object_id: String,
    /// Creation time, unix seconds.
    pub created: i64,
    /// The object as it was when the event happened (the event's `data.object`).
    pub object: Value,
}

/// One send of an event to an endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliverySnapshot {
    /// The event sent.
    pub event_id: String,
    /// The endpoint it was sent to.
    pub url: Url,
    /// Which send of this delivery it was, from 1. A duplicate delivery counts its own.
    pub attempt: u32,
    /// The status answered; `None` when the connection failed or timed out.
    pub status: Option<u16>,
}

/// One request as received, with card data redacted.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query's fields, decoded.
    pub query: Vec<(String, String)>,
    /// The API call, when the request is one.
    pub call: Option<Call>,
    /// Selected headers, names in lower case: `authorization`, `content-type`,
    /// `idempotency-key`, `stripe-version`, `user-agent`.
    pub headers: Vec<(String, String)>,
    /// The form fields of the body, decoded; every `...number` and `...cvc` field reads
    /// `<redacted>`. Empty when the body is not form-encoded.
    pub form: Vec<(String, String)>,
}

impl Recorded {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        find(&self.headers, name)
    }

    /// The value of form field `name`.
    pub fn field(&self, name: &str) -> Option<&str> {
        find(&self.form, name)
    }
}

fn find<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// A running fake Stripe; stops on drop (its listener, every open connection, its ticker and
/// its event deliveries).
pub struct FakeStripe {
    /// Its base URL, `http://127.0.0.1:<port>/`.
    pub base_url: Url,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
    ticker: JoinHandle<()>,
    /// The tasks delivering events, one for each endpoint.
    delivery_tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl FakeStripe {
    /// Starts a fake on a free loopback port.
    pub async fn start(config: FakeStripeConfig) -> FakeStripe {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let base_url = Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let shared = Arc::new(Shared::new(format!("http://127.0.0.1:{port}"), config));
        let task = tokio::spawn(server::accept_loop(listener, shared.clone()));
        let ticker = tokio::spawn(server::ticker(shared.clone()));
        FakeStripe {
            base_url,
            shared,
            task,
            ticker,
            delivery_tasks: Mutex::default(),
        }
    }

    /// Queues a one-shot `fault` for the next request of `call` (first in, first out per call).
    pub fn inject(&self, call: Call, when: When, fault: Fault) {
        self.shared.faults().push(call, when, fault);
    }

    /// Applies `fault` to every request of `call` for which no one-shot fault is queued.
    pub fn inject_always(&self, call: Call, when: When, fault: Fault) {
        self.shared.faults().set_always(call, when, fault);
    }

    /// Removes every queued and permanent fault.
    pub fn clear_faults(&self) {
        self.shared.faults().clear();
    }

    /// Every PaymentIntent, oldest first, as it is now.
    pub fn intents(&self) -> Vec<IntentSnapshot> {
        self.shared.store().snapshots()
    }

    /// The PaymentIntent `id` as it is now.
    pub fn intent(&self, id: &str) -> Option<IntentSnapshot> {
        self.shared.store().intent(id).map(store::Intent::snapshot)
    }

    /// How many intents whose `metadata[metadata_key]` is `value` are charged or authorised
    /// (`succeeded` or `requires_capture`): how many times that payer's card was taken.
    pub fn charged_intents_for(&self, metadata_key: &str, value: &str) -> usize {
        self.intents()
            .iter()
            .filter(|i| matches!(i.status.as_str(), "succeeded" | "requires_capture"))
            .filter(|i| i.metadata.get(metadata_key).map(String::as_str) == Some(value))
            .count()
    }

    /// Every refund, oldest first, with its status now.
    pub fn refunds(&self) -> Vec<RefundSnapshot> {
        self.shared.store().refund_snapshots()
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.log().clone()
    }

    /// How many times the work of `call` was actually done: requests that got past validation,
    /// whatever their answer. Replays, refusals by validation and faults before the work are
    /// not counted.
    pub fn executions(&self, call: Call) -> usize {
        self.shared.store().executions(call)
    }

    /// Completes the 3D Secure challenge of intent `id` as the payer would on the hosted page:
    /// `pass` authorises it, otherwise it fails authentication. Returns `false`, changing
    /// nothing, when the intent is unknown or no longer `requires_action`.
    pub fn complete_3ds(&self, intent_id: &str, pass: bool) -> bool {
        matches!(
            self.shared.store().complete_3ds(intent_id, pass),
            store::Completion::Done { .. }
        )
    }

    /// Opens a dispute (`needs_response`) of the captured charge of intent `payment_intent`
    /// for `reason` (one of Stripe's: `fraudulent`, `product_not_received`, ...), as the
    /// cardholder's bank would; returns its id, `dp_...`. Panics when the intent has no
    /// captured charge or its charge is already disputed.
    pub fn open_dispute(&self, payment_intent: &str, reason: &str) -> String {
        // The store's lock is released before any panic.
        let opened = disputes::open(&mut self.shared.store(), payment_intent, reason);
        opened.unwrap_or_else(|why| panic!("cannot open a dispute: {why}"))
    }

    /// Sets the status of dispute `id` to one of Stripe's: `warning_needs_response`,
    /// `warning_under_review`, `warning_closed`, `needs_response`, `under_review`, `won`,
    /// `lost`. Panics for an unknown dispute or status.
    pub fn set_dispute_status(&self, id: &str, status: &str) {
        let set = disputes::set_status(&mut self.shared.store(), id, status);
        set.unwrap_or_else(|why| panic!("cannot set the dispute's status: {why}"));
    }

    /// Every dispute, oldest first, as it is now.
    pub fn disputes(&self) -> Vec<DisputeSnapshot> {
        let store = self.shared.store();
        store
            .disputes()
            .iter()
            .map(disputes::Dispute::snapshot)
            .collect()
    }

    /// Every event so far, oldest first, delivered or not.
    pub fn events(&self) -> Vec<EventSnapshot> {
        let store = self.shared.store();
        store.events().iter().map(|e| e.snapshot()).collect()
    }

    /// Every send of an event so far, in order, to any endpoint.
    pub fn deliveries(&self) -> Vec<DeliverySnapshot> {
        self.shared.deliveries().clone()
    }

    /// Delivers every event that happens from now on (earlier ones are not sent) to `url` as
    /// Stripe delivers webhooks: a `POST` of the event's JSON signed with `secret` in the
    /// `Stripe-Signature` header (`t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<body>">,v0=...`,
    /// signed afresh for every send), retried, duplicated and reordered as `delivery` says.
    /// Each call adds an endpoint. Needs a Tokio runtime.
    pub fn deliver_events_to(&self, url: Url, secret: &str, delivery: EventDelivery) {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.shared.store().subscribe(sender);
        let endpoint = delivery::Endpoint::new(url, secret, delivery);
        let task = tokio::spawn(delivery::run(receiver, endpoint, self.shared.clone()));
        self.delivery_tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(task);
    }
}

impl Drop for FakeStripe {
    fn drop(&mut self) {
        // The accept loop owns the connections' tasks, and each delivery task its sends:
        // aborting them aborts those.
        self.task.abort();
        self.ticker.abort();
        let tasks = self
            .delivery_tasks
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for task in tasks.drain(..) {
            task.abort();
        }
    }
}
