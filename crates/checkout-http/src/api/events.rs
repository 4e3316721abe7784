//! GET /pay/api/events: the caller's terminal's events, to catch up after downtime.

use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::events::EventCursor;
use checkout_domain::usecases::MAX_EVENTS_PER_PAGE;
use checkout_domain::ValidationErrors;

use crate::auth::Caller;
use crate::dto::{EventBody, EventPageResponse, RedeliveryResponse};
use crate::openapi::responses::BearerErrors;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// Events per page when `limit` is not given.
const DEFAULT_LIMIT: u32 = 50;

/// The value of the query parameter `name`: `Ok(None)` when absent, an error naming `field`
/// when it is given more than once.
pub(crate) fn single<'a>(
    pairs: &'a [(String, String)],
    name: &str,
    field: &str,
    errors: &mut ValidationErrors,
) -> Option<&'a str> {
    let mut values = pairs
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str());
    let first = values.next();
    if values.next().is_some() {
        errors.add(field, "Give it at most once.");
        return None;
    }
    first
}

/// List the terminal's events.
///
/// Lists the caller's terminal's events in the order of the transactions that wrote them (a
/// session's events in the order they happened), after the cursor
/// `after` (from the first event when absent). A cursor never skips an event that commits
/// late: events of transactions still running are held back until they commit.
#[utoipa::path(
    get,
    path = "/pay/api/events",
    tag = "Events",
    security(("bearer" = [])),
    params(
        ("after" = Option<String>, Query, description = "The `cursor` of the previous page; absent: from the first event", pattern = r"^([0-9]{1,19}\.[0-9]{1,19})?$", example = "741.3"),
        ("limit" = Option<u32>, Query, description = "Events per page, 1 to 100 (default 50)", minimum = 1, maximum = 100, example = 50),
    ),
    responses(
        (status = 200, description = "A page of events", body = EventPageResponse),
        (status = 400, description = "A bad `after` or `limit` (named in `errors`)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn list_events(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let mut errors = ValidationErrors::new();
    // Read by hand, so that every bad query (a repeated parameter too) is a ProblemDetails
    // naming the field.
    let pairs: Vec<(String, String)> = match serde_urlencoded::from_str(req.query_string()) {
        Ok(pairs) => pairs,
        Err(_) => {
            errors.add("Query", "The query string could not be read.");
            Vec::new()
        }
    };
    let after = single(&pairs, "after", "After", &mut errors);
    let limit = single(&pairs, "limit", "Limit", &mut errors);
    let after = match after {
        None | Some("") => None,
        Some(raw) => match raw.parse::<EventCursor>() {
            Ok(cursor) => Some(cursor),
            Err(_) => {
                errors.add("After", "Not a cursor this service handed out.");
                None
            }
        },
    };
    let limit = match limit {
        None => DEFAULT_LIMIT,
        Some(raw) => match raw.parse::<u32>() {
            Ok(n) if (1..=MAX_EVENTS_PER_PAGE).contains(&n) => n,
            _ => {
                errors.add("Limit", "Must be a whole number from 1 to 100.");
                DEFAULT_LIMIT
            }
        },
    };
    errors
        .into_result(())
        .map_err(checkout_domain::CheckoutError::from)?;
    let page = state.checkout.list_events(&caller.0, after, limit).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(EventPageResponse {
            events: page.events.iter().map(EventBody::new).collect(),
            cursor: page.cursor.map(|c| c.to_string()),
            has_more: page.has_more,
        }))
}

/// Redeliver an event.
///
/// Sends one of the caller's events again now: a new delivery to every enabled endpoint that
/// receives its type, with the same `webhook-id` (the event id) and body, followed in each
/// endpoint's deliveries log. Redeliveries are limited per event and per terminal over a
/// sliding hour (429 with `Retry-After` past either); to catch up on many events, read
/// `GET /pay/api/events`.
#[utoipa::path(
    post,
    path = "/pay/api/events/{id}/redeliver",
    tag = "Events",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The event id", example = "6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55")),
    responses(
        (status = 202, description = "Queued, due now", body = RedeliveryResponse),
        (status = 404, description = "No such event of the caller's terminal", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 429, description = "Too many redeliveries: of this event (5 an hour by default) or of the terminal's events (100 an hour); nothing queued. `Retry-After` says when one is allowed again", body = ProblemDetails, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds until a redelivery of this event is allowed again"))),
        BearerErrors,
    )
)]
pub async fn redeliver_event(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || {
        checkout_domain::CheckoutError::NotFound("No event with this id exists for your terminal.")
    };
    let id = uuid::Uuid::parse_str(&path).map_err(|_| not_found())?;
    let deliveries = state.webhooks.redeliver(&caller.0.terminal, id).await?;
    Ok(HttpResponse::Accepted()
        .insert_header(("Cache-Control", "no-store"))
        .json(RedeliveryResponse {
            event_id: id.to_string(),
            deliveries: deliveries.iter().map(ToString::to_string).collect(),
        }))
}
