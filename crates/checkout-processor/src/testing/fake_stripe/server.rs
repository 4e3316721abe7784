//! The connections: accept, read one request, record it, apply the staged fault, authenticate,
//! pass through the idempotency layer, answer, close.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{json, Map};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::api::{self, error};
use super::faults::{Faults, Staged};
use super::http::{self, Request, Response};
use super::idempotency::{self, Claim, Keys};
use super::store::{new_id, Store};
use super::{three_ds, Call, DeliverySnapshot, FakeStripeConfig, Fault, Recorded};

/// How long [`Fault::Hang`] holds a connection.
const HANG: Duration = Duration::from_secs(120);
/// Stripe's limit on an idempotency key's length.
const MAX_KEY: usize = 255;
const RECORDED_HEADERS: &[&str] = &[
    "authorization",
    "content-type",
    "idempotency-key",
    "stripe-version",
    "user-agent",
];

/// The state every connection shares. No lock is held across an await.
pub(super) struct Shared {
    store: Mutex<Store>,
    keys: Mutex<Keys>,
    faults: Mutex<Faults>,
    log: Mutex<Vec<Recorded>>,
    deliveries: Mutex<Vec<DeliverySnapshot>>,
}

impl Shared {
    pub fn new(base: String, config: FakeStripeConfig) -> Shared {
        Shared {
            store: Mutex::new(Store::new(base, config)),
            keys: Mutex::default(),
            faults: Mutex::default(),
            log: Mutex::default(),
            deliveries: Mutex::default(),
        }
    }

    /// The store, brought up to date with the time-driven changes (see [`Store::tick`]).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        let mut store = lock(&self.store);
        store.tick();
        store
    }

    /// Every send of an event, in order.
    pub fn deliveries(&self) -> MutexGuard<'_, Vec<DeliverySnapshot>> {
        lock(&self.deliveries)
    }

    pub fn faults(&self) -> MutexGuard<'_, Faults> {
        lock(&self.faults)
    }

    pub fn log(&self) -> MutexGuard<'_, Vec<Recorded>> {
        lock(&self.log)
    }

    fn keys(&self) -> MutexGuard<'_, Keys> {
        lock(&self.keys)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How often [`ticker`] brings the store up to date when nothing else reads it.
const TICK: Duration = Duration::from_millis(10);

/// Makes the time-driven changes (expiries, late refund failures) when they are due, even
/// while no request comes, until aborted.
pub(super) async fn ticker(shared: Arc<Shared>) {
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        // Taking the store is what brings it up to date.
        drop(shared.store());
    }
}

/// Accepts connections until aborted; aborting it drops, and so aborts, every connection.
pub(super) async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                while connections.try_join_next().is_some() {}
                connections.spawn(serve(stream, shared.clone()));
            }
            // Out of file descriptors, say: wait for connections to finish.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let Some(request) = http::read_request(&mut stream).await else {
        return;
    };
    let call = Call::classify(&request.method, request.path());
    shared.log().push(record(&request, call));
    let Staged { before, after } = call.map(|c| shared.faults().take(c)).unwrap_or_default();
    let hold = match before {
        Some(Fault::Delay(hold)) => Some(hold),
        Some(fault) => return strike(stream, fault).await,
        None => None,
    };
    let saved_instead = match after {
        Some(Fault::Status(status)) if status >= 500 => Some(status),
        _ => None,
    };
    let response = respond(&shared, &request, call, hold, saved_instead).await;
    match after {
        None => http::write(&mut stream, &response).await,
        Some(Fault::Delay(delay)) => {
            tokio::time::sleep(delay).await;
            http::write(&mut stream, &response).await;
        }
        Some(fault) => strike(stream, fault).await,
    }
}

/// Does to the connection what `fault` says (a delay is applied by the caller).
async fn strike(mut stream: TcpStream, fault: Fault) {
    match fault {
        Fault::Hang => tokio::time::sleep(HANG).await,
        Fault::Reset => {
            let _ = stream.set_zero_linger();
        }
        Fault::Close | Fault::Delay(_) => {}
        Fault::Status(status) => http::write(&mut stream, &api_error(status)).await,
    }
}

/// The answer to `request`. `hold` keeps it executing that long before the work;
/// `saved_instead` is a 5xx saved under the idempotency key in place of the real answer.
async fn respond(
    shared: &Shared,
    request: &Request,
    call: Option<Call>,
    hold: Option<Duration>,
    saved_instead: Option<u16>,
) -> Response {
    if request.path().starts_with("/3ds/") {
        return three_ds::handle(&mut shared.store(), request);
    }
    let Some(api_key) = bearer(request) else {
        return unauthorized();
    };
    let Some(call) = call else {
        return unrecognized(request);
    };
    if request.method == "POST" && !request.body.is_empty() && !request.is_form() {
        let message = "Invalid request: the body must be application/x-www-form-urlencoded.";
        return invalid(message);
    }
    let key = request
        .header("idempotency-key")
        .filter(|key| request.method == "POST" && !key.is_empty());
    let response = match key {
        Some(key) => idempotent(shared, request, call, (api_key, key), hold, saved_instead).await,
        None => {
            pause(hold).await;
            let reply = api::execute(&mut shared.store(), call, request);
            Response::json(reply.status, &reply.body)
        }
    };
    if response.header("request-id").is_some() {
        response
    } else {
        response.with_header("request-id", &new_id("req"))
    }
}

/// Runs `request` under idempotency key `key` of `api_key`, or answers for the key.
async fn idempotent(
    shared: &Shared,
    request: &Request,
    call: Call,
    (api_key, key): (&str, &str),
    hold: Option<Duration>,
    saved_instead: Option<u16>,
) -> Response {
    if key.len() > MAX_KEY {
        return invalid("Idempotency-Key must be at most 255 characters long.");
    }
    let fingerprint = idempotency::fingerprint(&request.method, request.path(), &request.form());
    let claim = shared.keys().claim(api_key, key, fingerprint);
    match claim {
        Claim::Started => {}
        Claim::Replay(saved) => {
            let original = saved.header("request-id").unwrap_or_default().to_owned();
            return saved
                .with_header("idempotent-replayed", "true")
                .with_header("original-request", &original)
                .with_header("request-id", &new_id("req"));
        }
        Claim::InProgress => return in_progress(key),
        Claim::Mismatch => return mismatch(key),
    }
    pause(hold).await;
    let reply = api::execute(&mut shared.store(), call, request);
    let request_id = new_id("req");
    let response = Response::json(reply.status, &reply.body)
        .with_header("idempotency-key", key)
        .with_header("request-id", &request_id);
    let saved = reply.executed.then(|| match saved_instead {
        Some(status) => api_error(status)
            .with_header("idempotency-key", key)
            .with_header("request-id", &request_id),
        None => response.clone(),
    });
    shared.keys().finish(api_key, key, saved);
    response
}

async fn pause(hold: Option<Duration>) {
    if let Some(hold) = hold {
        tokio::time::sleep(hold).await;
    }
}

/// The API key of `Authorization: Bearer <key>`.
fn bearer(request: &Request) -> Option<&str> {
    let (scheme, key) = request.header("authorization")?.split_once(' ')?;
    let key = key.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !key.is_empty()).then_some(key)
}

fn record(request: &Request, call: Option<Call>) -> Recorded {
    let redact = |(name, value): (String, String)| {
        let secret = ["number", "cvc"]
            .iter()
            .any(|s| name == *s || name.ends_with(&format!("[{s}]")));
        let value = if secret {
            "<redacted>".to_owned()
        } else {
            value
        };
        (name, value)
    };
    Recorded {
        method: request.method.clone(),
        path: request.path().to_owned(),
        query: request.query(),
        call,
        headers: request
            .headers
            .iter()
            .filter(|(name, _)| RECORDED_HEADERS.contains(&name.as_str()))
            .cloned()
            .collect(),
        form: request.form().into_iter().map(redact).collect(),
    }
}

fn stripe_error(status: u16, kind: &str, message: &str) -> Response {
    Response::json(status, &error(kind, None, message, None, Map::new()))
}

fn api_error(status: u16) -> Response {
    Response::json(status, &api::api_error_body())
}

fn invalid(message: &str) -> Response {
    stripe_error(400, "invalid_request_error", message)
}

fn unauthorized() -> Response {
    let message = "You did not provide an API key. You need to provide your API key in the \
                   Authorization header, using Bearer auth (e.g. 'Authorization: Bearer \
                   YOUR_SECRET_KEY').";
    stripe_error(401, "invalid_request_error", message)
        .with_header("www-authenticate", "Bearer realm=\"Stripe\"")
}

fn unrecognized(request: &Request) -> Response {
    let message = format!(
        "Unrecognized request URL ({}: {}).",
        request.method,
        request.path()
    );
    Response::json(
        404,
        &json!({ "error": { "type": "invalid_request_error", "message": message } }),
    )
}

fn in_progress(key: &str) -> Response {
    let message = format!(
        "There is currently another in-progress request using this Idempotent Key (that \
         probably means you submitted twice, and the other request is still going through): \
         {key}. Please try again later."
    );
    stripe_error(409, "idempotency_error", &message)
}

fn mismatch(key: &str) -> Response {
    let message = format!(
        "Keys for idempotent requests can only be used with the same parameters they were \
         first used with. Try using a key other than '{key}' if you meant to execute a \
         different request."
    );
    stripe_error(400, "idempotency_error", &message)
}
