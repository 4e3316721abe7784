//! What the fake holds (payment methods, intents, refunds, disputes, events), how an intent
//! changes state, and the JSON Stripe writes for each. Every state change records an event.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::cards::{unix_now, Behaviour};
use super::disputes::Dispute;
use super::events::Event;
use super::{Call, FakeStripeConfig, IntentSnapshot, RefundSnapshot};

/// A fresh Stripe-like id: `prefix` + `_` + 24 random letters and digits.
pub(super) fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", random_token(24))
}

/// `len` random letters and digits (SipHash under the process's random keys over a counter).
pub(super) fn random_token(len: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut out = String::with_capacity(len);
    while out.len() < len {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        let mut bits = hasher.finish();
        for _ in 0..10 {
            out.push(char::from(ALPHABET[(bits % 62) as usize]));
            bits /= 62;
        }
    }
    out.truncate(len);
    out
}

/// A card PaymentMethod: its brand, last four digits and behaviour, never its number.
pub(super) struct PaymentMethod {
    pub id: String,
    pub brand: &'static str,
    pub last4: String,
    pub exp_month: u32,
    pub exp_year: i64,
    pub name: Option<String>,
    pub behaviour: Behaviour,
    pub created: i64,
    /// Used by a payment: Stripe refuses to use a PaymentMethod without a customer twice.
    pub consumed: bool,
}

impl PaymentMethod {
    pub fn json(&self) -> Value {
        json!({
            "id": self.id, "object": "payment_method", "type": "card",
            "billing_details": { "name": self.name },
            "card": { "brand": self.brand, "last4": self.last4,
                      "exp_month": self.exp_month, "exp_year": self.exp_year },
            "created": self.created, "customer": null, "livemode": false, "metadata": {},
        })
    }
}

/// A PaymentIntent's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    RequiresPaymentMethod,
    RequiresConfirmation,
    RequiresAction,
    Processing,
    RequiresCapture,
    Canceled,
    Succeeded,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::RequiresPaymentMethod => "requires_payment_method",
            Status::RequiresConfirmation => "requires_confirmation",
            Status::RequiresAction => "requires_action",
            Status::Processing => "processing",
            Status::RequiresCapture => "requires_capture",
            Status::Canceled => "canceled",
            Status::Succeeded => "succeeded",
        }
    }
}

/// How an intent captures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CaptureMethod {
    Automatic,
    AutomaticAsync,
    Manual,
}

impl CaptureMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            CaptureMethod::Automatic => "automatic",
            CaptureMethod::AutomaticAsync => "automatic_async",
            CaptureMethod::Manual => "manual",
        }
    }
}

/// A PaymentIntent.
pub(super) struct Intent {
    pub id: String,
    /// Creation order.
    pub seq: u64,
    pub amount: i64,
    pub amount_received: i64,
    pub amount_capturable: i64,
    pub currency: String,
    pub status: Status,
    pub capture_method: CaptureMethod,
    pub client_secret: String,
    pub metadata: BTreeMap<String, String>,
    pub last_payment_error: Option<Value>,
    pub next_action: Option<Value>,
    pub created: i64,
    pub payment_method: Option<String>,
    /// The behaviour of the card it was confirmed with, kept after Stripe detaches the card.
    pub card: Option<Behaviour>,
    pub return_url: Option<String>,
    pub latest_charge: Option<String>,
    pub cancellation_reason: Option<String>,
    pub canceled_at: Option<i64>,
    /// When it was last authorised (entered `requires_capture`), for the expiry.
    pub authorised_at: Option<Instant>,
}

impl Intent {
    pub fn json(&self) -> Value {
        json!({
            "id": self.id, "object": "payment_intent",
            "amount": self.amount, "amount_capturable": self.amount_capturable,
            "amount_received": self.amount_received,
            "cancellation_reason": self.cancellation_reason, "canceled_at": self.canceled_at,
            "capture_method": self.capture_method.as_str(),
            "client_secret": self.client_secret, "confirmation_method": "automatic",
            "created": self.created, "currency": self.currency,
            "last_payment_error": self.last_payment_error,
            "latest_charge": self.latest_charge, "livemode": false,
            "metadata": self.metadata, "next_action": self.next_action,
            "payment_method": self.payment_method, "payment_method_types": ["card"],
            "status": self.status.as_str(),
        })
    }

    pub fn snapshot(&self) -> IntentSnapshot {
        IntentSnapshot {
            id: self.id.clone(),
            status: self.status.as_str().to_owned(),
            amount: self.amount,
            amount_received: self.amount_received,
            amount_capturable: self.amount_capturable,
            currency: self.currency.clone(),
            metadata: self.metadata.clone(),
            payment_method: self.payment_method.clone(),
            latest_charge: self.latest_charge.clone(),
            cancellation_reason: self.cancellation_reason.clone(),
            created: self.created,
        }
    }

    /// The card went through: captured, or only authorised when `hold` or capture is manual.
    pub fn authorise(&mut self, hold: bool) {
        self.latest_charge = Some(new_id("ch"));
        self.next_action = None;
        self.last_payment_error = None;
        if hold || self.capture_method == CaptureMethod::Manual {
            self.status = Status::RequiresCapture;
            self.amount_capturable = self.amount;
            self.authorised_at = Some(Instant::now());
        } else {
            self.status = Status::Succeeded;
            self.amount_received = self.amount;
        }
    }

    /// The payer must authenticate at `url` (the processor's page).
    pub fn challenge(&mut self, url: String) {
        self.status = Status::RequiresAction;
        self.next_action = Some(json!({
            "type": "redirect_to_url",
            "redirect_to_url": { "url": url, "return_url": self.return_url },
        }));
    }

    /// The payment failed with `error`: back to `requires_payment_method`, card detached.
    pub fn fail(&mut self, error: Value) {
        self.status = Status::RequiresPaymentMethod;
        self.last_payment_error = Some(error);
        self.next_action = None;
        self.payment_method = None;
    }

    pub fn cancel(&mut self, reason: Option<String>) {
        self.status = Status::Canceled;
        self.cancellation_reason = reason;
        self.canceled_at = Some(unix_now());
        self.amount_capturable = 0;
        self.next_action = None;
    }

    pub fn capture(&mut self, amount: i64) {
        self.status = Status::Succeeded;
        self.amount_received = amount;
        self.amount_capturable = 0;
    }
}

/// A refund.
pub(super) struct Refund {
    pub id: String,
    pub seq: u64,
    pub amount: i64,
    pub currency: String,
    pub payment_intent: String,
    pub charge: Option<String>,
    pub reason: Option<String>,
    pub metadata: BTreeMap<String, String>,
    pub created: i64,
    /// When it fails: only a refund of the card whose refunds fail does.
    pub fails_at: Option<Instant>,
    pub failed: bool,
}

impl Refund {
    pub fn status(&self) -> &'static str {
        if self.failed {
            "failed"
        } else {
            "succeeded"
        }
    }

    pub fn json(&self) -> Value {
        let status = self.status();
        json!({
            "id": self.id, "object": "refund", "amount": self.amount,
            "charge": self.charge, "created": self.created, "currency": self.currency,
            "failure_reason": (status == "failed").then_some("unknown"),
            "metadata": self.metadata, "payment_intent": self.payment_intent,
            "reason": self.reason, "status": status,
        })
    }
}

/// How completing a 3DS challenge went.
pub(super) enum Completion {
    Missing,
    NotAwaiting(Status),
    Done {
        passed: bool,
        return_url: Option<String>,
        client_secret: String,
    },
}

/// Everything the fake holds.
pub(super) struct Store {
    /// `http://127.0.0.1:<port>`, for the 3DS page's address.
    pub base: String,
    pub config: FakeStripeConfig,
    pub payment_methods: HashMap<String, PaymentMethod>,
    intents: HashMap<String, Intent>,
    /// Every version of every intent, oldest first, for the lagging list.
    versions: HashMap<String, Vec<(Instant, Value)>>,
    refunds: Vec<Refund>,
    disputes: Vec<Dispute>,
    /// Every event, oldest first.
    events: Vec<Arc<Event>>,
    /// The delivery tasks' queues: each gets every event recorded after it subscribed.
    subscribers: Vec<UnboundedSender<Arc<Event>>>,
    next_seq: u64,
    executions: HashMap<Call, usize>,
}

impl Store {
    pub fn new(base: String, config: FakeStripeConfig) -> Store {
        Store {
            base,
            config,
            payment_methods: HashMap::new(),
            intents: HashMap::new(),
            versions: HashMap::new(),
            refunds: Vec::new(),
            disputes: Vec::new(),
            events: Vec::new(),
            subscribers: Vec::new(),
            next_seq: 0,
            executions: HashMap::new(),
        }
    }

    pub fn next_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    pub fn count(&mut self, call: Call) {
        *self.executions.entry(call).or_default() += 1;
    }

    pub fn executions(&self, call: Call) -> usize {
        self.executions.get(&call).copied().unwrap_or(0)
    }

    pub fn intent(&self, id: &str) -> Option<&Intent> {
        self.intents.get(id)
    }

    /// The intent whose latest charge is `charge`.
    pub fn intent_by_charge(&self, charge: &str) -> Option<&Intent> {
        self.intents
            .values()
            .find(|i| i.latest_charge.as_deref() == Some(charge))
    }

    /// Adds a new intent. `as_created` is its status and JSON before it was confirmed, the
    /// object of `payment_intent.created`; the confirmation's event follows.
    pub fn insert_intent(&mut self, intent: Intent, as_created: (Status, Value)) {
        let id = intent.id.clone();
        self.emit("payment_intent.created", as_created.1);
        let kind = intent_event(as_created.0, &intent);
        let json = intent.json();
        self.intents.insert(id.clone(), intent);
        self.publish(&id);
        if let Some(kind) = kind {
            self.emit(kind, json);
        }
    }

    /// Changes intent `id` with `change`, publishes the new version to the list and records
    /// the event of its new status, if it changed.
    pub fn update_intent<R>(
        &mut self,
        id: &str,
        change: impl FnOnce(&mut Intent) -> R,
    ) -> Option<R> {
        let intent = self.intents.get_mut(id)?;
        let before = intent.status;
        let result = change(intent);
        let event = intent_event(before, intent).map(|kind| (kind, intent.json()));
        self.publish(id);
        if let Some((kind, json)) = event {
            self.emit(kind, json);
        }
        Some(result)
    }

    /// Records the intent's current version; drops versions the list can no longer show.
    fn publish(&mut self, id: &str) {
        let Some(intent) = self.intents.get(id) else {
            return;
        };
        let delay = self.config.list_delay;
        let versions = self.versions.entry(id.to_owned()).or_default();
        versions.push((Instant::now(), intent.json()));
        let visible = versions
            .iter()
            .rposition(|(at, _)| at.elapsed() >= delay)
            .unwrap_or(0);
        versions.drain(..visible);
    }

    /// The intents as the list shows them: each as it was `list_delay` ago (so none younger
    /// than that), newest first, with their creation order.
    pub fn listed_intents(&self) -> Vec<(u64, Value)> {
        let delay = self.config.list_delay;
        let mut listed: Vec<(u64, Value)> = self
            .versions
            .iter()
            .filter_map(|(id, versions)| {
                let (_, shown) = versions
                    .iter()
                    .rev()
                    .find(|(at, _)| at.elapsed() >= delay)?;
                Some((self.intents.get(id)?.seq, shown.clone()))
            })
            .collect();
        listed.sort_by_key(|(seq, _)| std::cmp::Reverse(*seq));
        listed
    }

    pub fn snapshots(&self) -> Vec<IntentSnapshot> {
        let mut intents: Vec<&Intent> = self.intents.values().collect();
        intents.sort_by_key(|i| i.seq);
        intents.into_iter().map(Intent::snapshot).collect()
    }

    /// The amount refunded from intent `id`, failed refunds excepted.
    pub fn refunded(&self, id: &str) -> i64 {
        self.refunds
            .iter()
            .filter(|r| r.payment_intent == id && !r.failed)
            .map(|r| r.amount)
            .sum()
    }

    /// Every refund, oldest first.
    pub fn refunds(&self) -> &[Refund] {
        &self.refunds
    }

    /// Adds a new refund (`refund.created`); one that failed at once also records its failure.
    pub fn insert_refund(&mut self, refund: Refund) {
        let json = refund.json();
        let failed = refund.failed;
        self.refunds.push(refund);
        self.emit("refund.created", json.clone());
        if failed {
            self.emit("refund.failed", json.clone());
            self.emit("refund.updated", json);
        }
    }

    pub fn refund_snapshots(&self) -> Vec<RefundSnapshot> {
        self.refunds
            .iter()
            .map(|r| RefundSnapshot {
                id: r.id.clone(),
                payment_intent: r.payment_intent.clone(),
                amount: r.amount,
                status: r.status().to_owned(),
                metadata: r.metadata.clone(),
            })
            .collect()
    }

    pub fn disputes(&self) -> &[Dispute] {
        &self.disputes
    }

    /// Adds a new dispute (`charge.dispute.created`).
    pub fn insert_dispute(&mut self, dispute: Dispute) {
        let json = dispute.json();
        self.disputes.push(dispute);
        self.emit("charge.dispute.created", json);
    }

    /// Sets dispute `id`'s status and records `charge.dispute.closed` when it is final,
    /// `charge.dispute.updated` otherwise; nothing when it is unchanged. `false` when unknown.
    pub fn set_dispute_status(&mut self, id: &str, status: &'static str) -> bool {
        let Some(dispute) = self.disputes.iter_mut().find(|d| d.id == id) else {
            return false;
        };
        if dispute.status == status {
            return true;
        }
        dispute.status = status;
        let json = dispute.json();
        let kind = if dispute.is_closed() {
            "charge.dispute.closed"
        } else {
            "charge.dispute.updated"
        };
        self.emit(kind, json);
        true
    }

    /// Records an event of type `kind` about `object` (as a retrieve would answer it now) and
    /// queues it for every delivery.
    pub fn emit(&mut self, kind: &'static str, object: Value) {
        let event = Arc::new(Event::new(kind, object));
        self.subscribers
            .retain(|subscriber| subscriber.send(event.clone()).is_ok());
        self.events.push(event);
    }

    pub fn events(&self) -> &[Arc<Event>] {
        &self.events
    }

    /// Queues every event recorded from now on to `subscriber`.
    pub fn subscribe(&mut self, subscriber: UnboundedSender<Arc<Event>>) {
        self.subscribers.push(subscriber);
    }

    /// Makes the changes time has brought since the last call: authorisations older than
    /// [`FakeStripeConfig::authorization_lifetime`] expire (the intent is canceled with reason
    /// `automatic`), refunds due to fail fail. Called before anything reads or changes the
    /// store, and by a ticker, so each change is recorded, and its event sent, when it happens.
    pub fn tick(&mut self) {
        let now = Instant::now();
        if let Some(lifetime) = self.config.authorization_lifetime {
            let mut expired: Vec<(u64, String)> = self
                .intents
                .values()
                .filter(|i| i.status == Status::RequiresCapture)
                .filter(|i| {
                    i.authorised_at
                        .is_some_and(|at| now.saturating_duration_since(at) >= lifetime)
                })
                .map(|i| (i.seq, i.id.clone()))
                .collect();
            expired.sort();
            for (_, id) in expired {
                self.update_intent(&id, |intent| intent.cancel(Some("automatic".to_owned())));
            }
        }
        let mut failing = Vec::new();
        for refund in &mut self.refunds {
            if refund.fails_at.is_some_and(|at| now >= at) && !refund.failed {
                refund.failed = true;
                failing.push(refund.json());
            }
        }
        for json in failing {
            self.emit("refund.failed", json.clone());
            self.emit("refund.updated", json);
        }
    }

    /// Completes intent `id`'s 3DS challenge: passed authorises it, failed fails it.
    pub fn complete_3ds(&mut self, id: &str, pass: bool) -> Completion {
        let Some(intent) = self.intents.get(id) else {
            return Completion::Missing;
        };
        if intent.status != Status::RequiresAction {
            return Completion::NotAwaiting(intent.status);
        }
        self.update_intent(id, |intent| {
            if pass {
                intent.authorise(intent.card == Some(Behaviour::AuthoriseOnly));
            } else {
                intent.fail(authentication_failure());
            }
            Completion::Done {
                passed: pass,
                return_url: intent.return_url.clone(),
                client_secret: intent.client_secret.clone(),
            }
        })
        .unwrap_or(Completion::Missing)
    }
}

/// The event an intent's change of status to `after`'s makes, if any.
fn intent_event(before: Status, after: &Intent) -> Option<&'static str> {
    if before == after.status {
        return None;
    }
    match after.status {
        Status::RequiresAction => Some("payment_intent.requires_action"),
        Status::Processing => Some("payment_intent.processing"),
        Status::RequiresCapture => Some("payment_intent.amount_capturable_updated"),
        Status::Succeeded => Some("payment_intent.succeeded"),
        Status::Canceled => Some("payment_intent.canceled"),
        Status::RequiresPaymentMethod if after.last_payment_error.is_some() => {
            Some("payment_intent.payment_failed")
        }
        Status::RequiresPaymentMethod | Status::RequiresConfirmation => None,
    }
}

fn authentication_failure() -> Value {
    json!({
        "type": "invalid_request_error",
        "code": "payment_intent_authentication_failure",
        "doc_url": "https://stripe.com/docs/error-codes/payment-intent-authentication-failure",
        "message": "The provided PaymentMethod has failed authentication. You can provide \
                    payment_method_data or a new PaymentMethod to attempt to fulfill this \
                    PaymentIntent again.",
    })
}
