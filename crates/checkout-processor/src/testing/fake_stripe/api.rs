//! The API calls' answers: routing to the endpoints, Stripe's error bodies, list pages.

use serde_json::{json, Map, Value};

use super::http::Request;
use super::params::Params;
use super::store::Store;
use super::{disputes, intents, payment_methods, refunds, Call};

/// An endpoint's answer, and whether the endpoint began its work (then the answer is saved
/// under the idempotency key and the execution counted) or refused by validation.
pub(super) struct Reply {
    pub status: u16,
    pub body: Value,
    pub executed: bool,
}

/// An endpoint's result; the error side is a refusal, often by validation.
pub(super) type Outcome = Result<Reply, Reply>;

impl Reply {
    /// 200 with `body`, work done.
    pub fn ok(body: Value) -> Reply {
        Reply {
            status: 200,
            body,
            executed: true,
        }
    }

    /// A 400 `invalid_request_error` raised by validation, before any work.
    pub fn invalid(message: &str, param: Option<&str>, code: Option<&str>) -> Reply {
        Reply {
            status: 400,
            body: error("invalid_request_error", code, message, param, Map::new()),
            executed: false,
        }
    }

    /// A required parameter is missing.
    pub fn missing(param: &str) -> Reply {
        let message = format!("Missing required param: {param}.");
        Reply::invalid(&message, Some(param), Some("parameter_missing"))
    }

    /// An unknown object: 404 when named by the path, 400 when named by parameter `param`.
    pub fn no_such(kind: &str, id: &str, param: Option<&str>) -> Reply {
        let message = format!("No such {kind}: '{id}'");
        let mut reply = Reply::invalid(&message, param, Some("resource_missing"));
        if param.is_none() {
            reply.status = 404;
        }
        reply
    }

    /// A 400 found while doing the work (the object's state forbids it): saved under the key.
    pub fn refused(code: &str, message: &str, extra: Map<String, Value>) -> Reply {
        Reply {
            status: 400,
            body: error("invalid_request_error", Some(code), message, None, extra),
            executed: true,
        }
    }

    /// `payment_intent_unexpected_state`, carrying the intent.
    pub fn unexpected_state(message: &str, intent: Value) -> Reply {
        let extra = Map::from_iter([("payment_intent".to_owned(), intent)]);
        Reply::refused("payment_intent_unexpected_state", message, extra)
    }

    /// A processor-side failure after the request was accepted: saved under the key.
    pub fn api_error(status: u16) -> Reply {
        Reply {
            status,
            body: api_error_body(),
            executed: true,
        }
    }
}

/// Stripe's error body: `{"error": {"type", "code"?, "message", "param"?, ...extra}}`.
pub(super) fn error(
    kind: &str,
    code: Option<&str>,
    message: &str,
    param: Option<&str>,
    extra: Map<String, Value>,
) -> Value {
    let mut error = Map::new();
    error.insert("type".into(), kind.into());
    if let Some(code) = code {
        error.insert("code".into(), code.into());
        let doc = format!(
            "https://stripe.com/docs/error-codes/{}",
            code.replace('_', "-")
        );
        error.insert("doc_url".into(), doc.into());
    }
    error.insert("message".into(), message.into());
    if let Some(param) = param {
        error.insert("param".into(), param.into());
    }
    error.extend(extra);
    json!({ "error": error })
}

/// The body of a 5xx: Stripe's `api_error`.
pub(super) fn api_error_body() -> Value {
    error(
        "api_error",
        None,
        "An unknown error occurred while processing your request.",
        None,
        Map::new(),
    )
}

/// Answers `call` for `request` (already authenticated) and counts an execution.
pub(super) fn execute(store: &mut Store, call: Call, request: &Request) -> Reply {
    let fields = if request.method == "GET" {
        request.query()
    } else {
        request.form()
    };
    let params = Params::new(fields);
    let id = request.path().split('/').nth(3).unwrap_or_default();
    let outcome = match call {
        Call::CreatePaymentMethod => payment_methods::create(store, &params),
        Call::CreateIntent => intents::create(store, &params),
        Call::RetrieveIntent => intents::retrieve(store, id, &params),
        Call::ListIntents => intents::list(store, &params),
        Call::CancelIntent => intents::cancel(store, id, &params),
        Call::CaptureIntent => intents::capture(store, id, &params),
        Call::CreateRefund => refunds::create(store, &params),
        Call::ListRefunds => refunds::list(store, &params),
        Call::RetrieveRefund => refunds::retrieve(store, id, &params),
        Call::RetrieveDispute => disputes::retrieve(store, id, &params),
    };
    let reply = outcome.unwrap_or_else(|refusal| refusal);
    if reply.executed {
        store.count(call);
    }
    reply
}

/// Where a list page starts, as creation orders resolved from `starting_after` and
/// `ending_before`.
pub(super) struct Cursor {
    pub limit: usize,
    pub after: Option<u64>,
    pub before: Option<u64>,
}

impl Cursor {
    /// Reads `limit` (1 to 100, default 10) and the cursors, resolving ids with `seq_of`.
    pub fn read(
        p: &Params,
        kind: &str,
        seq_of: impl Fn(&str) -> Option<u64>,
    ) -> Result<Cursor, Reply> {
        let limit = p.integer("limit")?.unwrap_or(10);
        if !(1..=100).contains(&limit) {
            let message = "Invalid limit: must be an integer between 1 and 100.";
            return Err(Reply::invalid(
                message,
                Some("limit"),
                Some("parameter_invalid_integer"),
            ));
        }
        let resolve = |param: &str| -> Result<Option<u64>, Reply> {
            p.get(param)
                .map(|id| seq_of(id).ok_or_else(|| Reply::no_such(kind, id, Some(param))))
                .transpose()
        };
        Ok(Cursor {
            limit: usize::try_from(limit).unwrap_or(10),
            after: resolve("starting_after")?,
            before: resolve("ending_before")?,
        })
    }

    /// The page of `items` (newest first, with their creation order) this cursor selects.
    pub fn page(&self, items: Vec<(u64, Value)>, url: &str) -> Value {
        let (data, has_more): (Vec<Value>, bool) = match self.before {
            Some(before) => {
                let newer: Vec<Value> = items
                    .into_iter()
                    .filter(|(seq, _)| *seq > before)
                    .map(|(_, v)| v)
                    .collect();
                let skip = newer.len().saturating_sub(self.limit);
                (newer.into_iter().skip(skip).collect(), skip > 0)
            }
            None => {
                let mut older: Vec<Value> = items
                    .into_iter()
                    .filter(|(seq, _)| self.after.is_none_or(|after| *seq < after))
                    .map(|(_, v)| v)
                    .take(self.limit + 1)
                    .collect();
                let has_more = older.len() > self.limit;
                older.truncate(self.limit);
                (older, has_more)
            }
        };
        json!({ "object": "list", "data": data, "has_more": has_more, "url": url })
    }
}
