//! The API calls of the fake and the faults a test can stage on them.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// An API call of the fake, for fault injection and counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// `POST /v1/payment_methods`.
    CreatePaymentMethod,
    /// `POST /v1/payment_intents`.
    CreateIntent,
    /// `GET /v1/payment_intents/{id}`.
    RetrieveIntent,
    /// `GET /v1/payment_intents`.
    ListIntents,
    /// `POST /v1/payment_intents/{id}/cancel`.
    CancelIntent,
    /// `POST /v1/payment_intents/{id}/capture`.
    CaptureIntent,
    /// `POST /v1/refunds`.
    CreateRefund,
    /// `GET /v1/refunds`.
    ListRefunds,
    /// `GET /v1/refunds/{id}`.
    RetrieveRefund,
    /// `GET /v1/disputes/{id}`.
    RetrieveDispute,
}

impl Call {
    /// The call a request makes, from its method and path (a query is ignored); `None` for
    /// anything else, such as the 3DS page.
    pub fn classify(method: &str, path: &str) -> Option<Call> {
        let path = path.split('?').next().unwrap_or_default();
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match (method, segments.as_slice()) {
            ("POST", ["v1", "payment_methods"]) => Some(Call::CreatePaymentMethod),
            ("POST", ["v1", "payment_intents"]) => Some(Call::CreateIntent),
            ("GET", ["v1", "payment_intents"]) => Some(Call::ListIntents),
            ("GET", ["v1", "payment_intents", id]) if !id.is_empty() => Some(Call::RetrieveIntent),
            ("POST", ["v1", "payment_intents", id, "cancel"]) if !id.is_empty() => {
                Some(Call::CancelIntent)
            }
            ("POST", ["v1", "payment_intents", id, "capture"]) if !id.is_empty() => {
                Some(Call::CaptureIntent)
            }
            ("POST", ["v1", "refunds"]) => Some(Call::CreateRefund),
            ("GET", ["v1", "refunds"]) => Some(Call::ListRefunds),
            ("GET", ["v1", "refunds", id]) if !id.is_empty() => Some(Call::RetrieveRefund),
            ("GET", ["v1", "disputes", id]) if !id.is_empty() => Some(Call::RetrieveDispute),
            _ => None,
        }
    }
}

/// When a fault strikes, relative to the call's work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Before the work: nothing is done and nothing is saved under the idempotency key.
    Before,
    /// After the work: it is done and its real answer saved under the key, but this
    /// connection gets the fault.
    After,
}

/// What happens to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Never answers (holds the connection for 120 s or until the fake stops).
    Hang,
    /// Resets the connection (TCP RST).
    Reset,
    /// Closes the connection without a word.
    Close,
    /// Answers this status with an `api_error` body. After the work, a 5xx is also what is
    /// saved under the idempotency key, as Stripe saves a 500 that happened mid-request.
    Status(u16),
    /// Before: holds the request as executing for this long (a request with the same key
    /// meanwhile gets 409), then does the work and answers. After: does the work at once and
    /// answers this much later.
    Delay(Duration),
}

/// The faults staged for one request, split by when they strike.
#[derive(Default)]
pub(super) struct Staged {
    pub before: Option<Fault>,
    pub after: Option<Fault>,
}

/// Queued one-shot faults and permanent faults, per call.
#[derive(Default)]
pub(super) struct Faults {
    queued: HashMap<Call, VecDeque<(When, Fault)>>,
    always: HashMap<Call, (When, Fault)>,
}

impl Faults {
    pub fn push(&mut self, call: Call, when: When, fault: Fault) {
        self.queued
            .entry(call)
            .or_default()
            .push_back((when, fault));
    }

    pub fn set_always(&mut self, call: Call, when: When, fault: Fault) {
        self.always.insert(call, (when, fault));
    }

    pub fn clear(&mut self) {
        self.queued.clear();
        self.always.clear();
    }

    /// The fault for the next request of `call`: the oldest queued one, else the permanent one.
    pub fn take(&mut self, call: Call) -> Staged {
        let next = self
            .queued
            .get_mut(&call)
            .and_then(VecDeque::pop_front)
            .or_else(|| self.always.get(&call).copied());
        match next {
            Some((When::Before, fault)) => Staged {
                before: Some(fault),
                after: None,
            },
            Some((When::After, fault)) => Staged {
                before: None,
                after: Some(fault),
            },
            None => Staged::default(),
        }
    }
}
