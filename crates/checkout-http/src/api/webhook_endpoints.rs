//! /pay/api/webhook-endpoints: a terminal's webhook endpoints, their secrets, their circuit
//! (enabling one again) and their deliveries log.

use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::usecases::MAX_DELIVERIES_LOGGED;
use checkout_domain::webhooks::DeliveryCursor;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::api::paging::{page_query, PageQuery};
use crate::auth::Caller;
use crate::dto::utc_timestamp;
use crate::dto::{
    CreatedWebhookEndpointResponse, DeliveryPageResponse, RotatedSecretResponse,
    WebhookEndpointRequest, WebhookEndpointResponse,
};
use crate::json_body::JsonBody;
use crate::openapi::responses::{BearerErrors, JsonBodyErrors};
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// The 404 of an endpoint id that is not one of the caller's (or not an id at all).
fn endpoint_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| {
        checkout_domain::CheckoutError::NotFound(
            "No webhook endpoint with this id exists for your terminal.",
        )
        .into()
    })
}

/// Register a webhook endpoint.
///
/// Registers a webhook endpoint for the caller's terminal. The answer carries the signing
/// secret, shown only here. A terminal may have at most 16 endpoints (by default); one
/// endpoint may receive every event type.
#[utoipa::path(
    post,
    path = "/pay/api/webhook-endpoints",
    tag = "Webhooks",
    security(("bearer" = [])),
    request_body(content = WebhookEndpointRequest, example = json!({"url": "http://localhost:9000/webhooks", "events": ["payment.succeeded", "payment.failed"]})),
    responses(
        (status = 201, description = "The endpoint, with its secret", body = CreatedWebhookEndpointResponse),
        (status = 400, description = "A bad `Url` (not absolute, not https in production, a private address) or `Events`", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The terminal already has the most endpoints it may have (16 by default); nothing saved", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, JsonBodyErrors,
    )
)]
pub async fn create_endpoint(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<WebhookEndpointRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = body.0;
    let url = request.url()?;
    let created = state
        .webhooks
        .create_endpoint(&caller.0.terminal, url, request.events.as_deref())
        .await?;
    let endpoint = WebhookEndpointResponse::new(&created.endpoint, OffsetDateTime::now_utc());
    Ok(HttpResponse::Created()
        .insert_header(("Cache-Control", "no-store"))
        .json(CreatedWebhookEndpointResponse {
            id: endpoint.id,
            url: endpoint.url,
            events: endpoint.events,
            secret: created.secret.expose().to_owned(),
            created_date_time: endpoint.created_date_time,
        }))
}

/// List webhook endpoints.
///
/// Lists the caller's terminal's webhook endpoints, oldest first (without secrets), each with
/// its circuit and whether it is disabled.
#[utoipa::path(
    get,
    path = "/pay/api/webhook-endpoints",
    tag = "Webhooks",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The endpoints", body = [WebhookEndpointResponse], example = json!([{"id": "0b8c2f4e-7d1a-4e55-9c3b-6a2f1d0e9b77", "url": "https://merchant.example/webhooks", "events": ["*"], "createdDateTime": "2026-11-23T11:30:00Z", "enabled": true, "circuit": "closed", "consecutiveFailures": 0}])),
        BearerErrors,
    )
)]
pub async fn list_endpoints(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let endpoints = state.webhooks.list_endpoints(&caller.0.terminal).await?;
    let now = OffsetDateTime::now_utc();
    let body: Vec<WebhookEndpointResponse> = endpoints
        .iter()
        .map(|e| WebhookEndpointResponse::new(e, now))
        .collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(body))
}

/// Delete a webhook endpoint.
///
/// Deletes one of the caller's webhook endpoints: it gets nothing more (deliveries not yet
/// made are cancelled; an attempt already on its way may still arrive).
#[utoipa::path(
    delete,
    path = "/pay/api/webhook-endpoints/{id}",
    tag = "Webhooks",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The endpoint id", example = "0b8c2f4e-7d1a-4e55-9c3b-6a2f1d0e9b77")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such endpoint of the caller's terminal", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn delete_endpoint(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(&path)?;
    state
        .webhooks
        .delete_endpoint(&caller.0.terminal, id)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Rotate an endpoint's signing secret.
///
/// Gives one of the caller's endpoints a new secret. The previous one keeps signing beside it
/// (two `v1,` signatures per delivery) until `previousSecretExpiresDateTime`, so that the
/// merchant can switch without losing a delivery.
#[utoipa::path(
    post,
    path = "/pay/api/webhook-endpoints/{id}/rotate-secret",
    tag = "Webhooks",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The endpoint id", example = "0b8c2f4e-7d1a-4e55-9c3b-6a2f1d0e9b77")),
    responses(
        (status = 200, description = "The new secret", body = RotatedSecretResponse),
        (status = 404, description = "No such endpoint of the caller's terminal", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn rotate_secret(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(&path)?;
    let rotated = state.webhooks.rotate_secret(&caller.0.terminal, id).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(RotatedSecretResponse {
            id: id.to_string(),
            secret: rotated.secret.expose().to_owned(),
            previous_secret_expires_date_time: utc_timestamp(rotated.previous_expires_at),
        }))
}

/// Enable a webhook endpoint again.
///
/// Enables one of the caller's endpoints with a closed circuit: one disabled after failing for
/// days gets the events written from now on (the ones written while it was disabled are in
/// `GET /pay/api/events`, and `POST /pay/api/events/{id}/redeliver` sends one again), and one
/// whose circuit is open or probing gets its due deliveries at once. Answers the endpoint.
#[utoipa::path(
    post,
    path = "/pay/api/webhook-endpoints/{id}/enable",
    tag = "Webhooks",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The endpoint id", example = "0b8c2f4e-7d1a-4e55-9c3b-6a2f1d0e9b77")),
    responses(
        (status = 200, description = "The endpoint, enabled, its circuit closed", body = WebhookEndpointResponse),
        (status = 404, description = "No such endpoint of the caller's terminal", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn enable_endpoint(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(&path)?;
    let endpoint = state
        .webhooks
        .enable_endpoint(&caller.0.terminal, id)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(WebhookEndpointResponse::new(
            &endpoint,
            OffsetDateTime::now_utc(),
        )))
}

/// An endpoint's deliveries log.
///
/// The deliveries log of one of the caller's endpoints, a page at a time, newest first: each
/// delivery with every attempt (time, HTTP status or network error, duration, the first
/// bytes of the answer, never kept from a loopback or private address), and the endpoint
/// itself (whether it is enabled, its circuit, why it was disabled). Pass `cursor` back as
/// `after` to read the older ones.
#[utoipa::path(
    get,
    path = "/pay/api/webhook-endpoints/{id}/deliveries",
    tag = "Webhooks",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The endpoint id", example = "0b8c2f4e-7d1a-4e55-9c3b-6a2f1d0e9b77"),
        ("after" = Option<String>, Query, description = "The `cursor` of the previous page; absent: from the newest delivery", pattern = r"^[0-9]{0,19}$", example = "741"),
        ("limit" = Option<u32>, Query, description = "Deliveries per page, 1 to 100 (default 50)", minimum = 1, maximum = 100, example = 50),
    ),
    responses(
        (status = 200, description = "A page of the deliveries", body = DeliveryPageResponse),
        (status = 400, description = "A bad `after` or `limit` (named in `errors`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such endpoint of the caller's terminal", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn list_deliveries(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(&path)?;
    let PageQuery { after, limit } = page_query::<DeliveryCursor>(&req, MAX_DELIVERIES_LOGGED)?;
    let (endpoint, page) = state
        .webhooks
        .deliveries(&caller.0.terminal, id, after, limit)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(DeliveryPageResponse::new(
            &endpoint,
            &page,
            OffsetDateTime::now_utc(),
        )))
}
