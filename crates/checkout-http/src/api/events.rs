//! GET /pay/api/events: the caller's terminal's events, to catch up after downtime.

use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use checkout_domain::events::EventCursor;
use checkout_domain::usecases::MAX_EVENTS_PER_PAGE;

use crate::api::paging::{page_query, PageQuery};
use crate::auth::Caller;
use crate::dto::{EventBody, EventPageResponse, RedeliveryResponse};
use crate::openapi::responses::BearerErrors;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

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
        (status = 400, description = "A bad `after` (malformed, or a cursor this feed never handed out to the caller) or `limit` (named in `errors`)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn list_events(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let PageQuery { after, limit } = page_query::<EventCursor>(&req, MAX_EVENTS_PER_PAGE)?;
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
        (status = 202, description = "Queued, due now", body = RedeliveryResponse,
         headers(("RateLimit-Policy" = String, description = "The route's quotas (IETF httpapi ratelimit-headers draft): `\"event\";q=<per event>;w=<seconds>, \"terminal\";q=<per terminal>;w=<seconds>`"))),
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
) -> HttpResponse {
    let not_found = || {
        checkout_domain::CheckoutError::NotFound("No event with this id exists for your terminal.")
    };
    let redeliver = async {
        let id = uuid::Uuid::parse_str(&path).map_err(|_| not_found())?;
        let deliveries = state.webhooks.redeliver(&caller.0.terminal, id).await?;
        Ok::<_, ApiError>(
            HttpResponse::Accepted()
                .insert_header(("Cache-Control", "no-store"))
                .json(RedeliveryResponse {
                    event_id: id.to_string(),
                    deliveries: deliveries.iter().map(ToString::to_string).collect(),
                }),
        )
    };
    let mut response = redeliver.await.unwrap_or_else(|e| e.error_response());
    let limits = &state.webhooks.policy().redeliveries;
    let window = limits.window.whole_seconds().max(1) as u64;
    crate::rate_limit::set_headers(
        &mut response,
        &[
            ("event", limits.per_event, window),
            ("terminal", limits.per_terminal, window),
        ],
        None,
    );
    response
}
