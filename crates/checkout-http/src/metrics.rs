//! Request metrics: a count and a latency histogram of every answered request, labelled by
//! method, route pattern and status.
//!
//! The route label is actix's `match_pattern` (`/pay/api/payment/{checkoutSessionId}`), never
//! the path, so that no session id, token or other request data becomes a label; a request
//! that matched no route is `unmatched`. Methods outside the standard set are `OTHER`. The
//! metrics go to the `metrics` facade: without a recorder installed they cost nothing.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;

/// Counter: requests answered, by `method`, `route` and `status`.
pub const REQUESTS_TOTAL: &str = "checkout_http_requests_total";
/// Histogram: seconds from the request's arrival to its answer, by `method`, `route` and
/// `status`.
pub const REQUEST_DURATION: &str = "checkout_http_request_duration_seconds";

/// Gauge: requests received and not answered yet (a request hung on the database shows here
/// long before it ends).
pub const REQUESTS_IN_FLIGHT: &str = "checkout_http_requests_in_flight";

/// Counter: card-processor events received, by `outcome` (`applied`, `duplicate`,
/// `unknown_object`, `ignored`, `failed`: not absorbed now, sent again by the processor;
/// refused: `bad_signature`, `stale`, `malformed`, `not_configured`).
pub const PROCESSOR_EVENTS_TOTAL: &str = "checkout_processor_events_total";

/// Counter: card posts screened by the card-testing guard, by `rule` (`none`, `session`,
/// `address`, `card`, `terminal`, `proof`) and `outcome` (`allowed`, `passed`,
/// `challenged`, `refused`). No card data, address or session is ever a label.
pub const CARD_GUARD_DECISIONS_TOTAL: &str = "checkout_card_guard_decisions_total";

/// The route label of a request that matched no route.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// The method as a label: one of the standard methods, else `OTHER` (so that a client cannot
/// mint label values).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// Counts a request in [`REQUESTS_IN_FLIGHT`] until dropped (also when the client goes away
/// and the request's future is dropped unanswered).
struct InFlight;

impl InFlight {
    fn enter() -> InFlight {
        metrics::gauge!(REQUESTS_IN_FLIGHT).increment(1.0);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        metrics::gauge!(REQUESTS_IN_FLIGHT).decrement(1.0);
    }
}

/// Middleware: records [`REQUESTS_TOTAL`] and [`REQUEST_DURATION`] for every request, and
/// [`REQUESTS_IN_FLIGHT`] while it runs.
pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let _in_flight = InFlight::enter();
    let started = Instant::now();
    let method = method_label(req.method());
    let result = next.call(req).await;
    let (route, status) = match &result {
        Ok(response) => (
            response.request().match_pattern(),
            response.status().as_u16(),
        ),
        Err(e) => (None, e.as_response_error().status_code().as_u16()),
    };
    let labels = [
        ("method", method.to_owned()),
        ("route", route.unwrap_or_else(|| UNMATCHED_ROUTE.to_owned())),
        ("status", status.to_string()),
    ];
    metrics::counter!(REQUESTS_TOTAL, &labels).increment(1);
    metrics::histogram!(REQUEST_DURATION, &labels).record(started.elapsed().as_secs_f64());
    result
}
