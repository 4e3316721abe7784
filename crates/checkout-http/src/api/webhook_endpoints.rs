//! /pay/api/webhook-endpoints: a terminal's webhook endpoints, their secrets and their
//! deliveries log.

use actix_web::{web, HttpResponse};
use uuid::Uuid;

use crate::auth::Caller;
use crate::dto::utc_timestamp;
use crate::dto::{
    CreatedWebhookEndpointResponse, DeliveryBody, RotatedSecretResponse, WebhookEndpointRequest,
    WebhookEndpointResponse,
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
/// secret, shown only here.
#[utoipa::path(
    post,
    path = "/pay/api/webhook-endpoints",
    tag = "Webhooks",
    security(("bearer" = [])),
    request_body(content = WebhookEndpointRequest, example = json!({"url": "http://localhost:9000/webhooks", "events": ["payment.succeeded", "payment.failed"]})),
    responses(
        (status = 201, description = "The endpoint, with its secret", body = CreatedWebhookEndpointResponse),
        (status = 400, description = "A bad `Url` (not absolute, not https in production, a private address) or `Events`", body = ProblemDetails, content_type = "application/problem+json"),
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
    let endpoint = WebhookEndpointResponse::new(&created.endpoint);
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
/// Lists the caller's terminal's webhook endpoints, oldest first (without secrets).
#[utoipa::path(
    get,
    path = "/pay/api/webhook-endpoints",
    tag = "Webhooks",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The endpoints", body = [WebhookEndpointResponse], example = json!([{"id": "0b8c2f4e-7d1a-4e55-9c3b-6a2f1d0e9b77", "url": "https://merchant.example/webhooks", "events": ["*"], "createdDateTime": "2026-11-23T11:30:00Z"}])),
        BearerErrors,
    )
)]
pub async fn list_endpoints(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let endpoints = state.webhooks.list_endpoints(&caller.0.terminal).await?;
    let body: Vec<WebhookEndpointResponse> =
        endpoints.iter().map(WebhookEndpointResponse::new).collect();
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

/// An endpoint's deliveries log.
///
/// The deliveries log of one of the caller's endpoints: its newest 100 deliveries, newest
/// first, each with every attempt (time, HTTP status or network error, duration, the first
/// bytes of the answer).
#[utoipa::path(
    get,
    path = "/pay/api/webhook-endpoints/{id}/deliveries",
    tag = "Webhooks",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The endpoint id", example = "0b8c2f4e-7d1a-4e55-9c3b-6a2f1d0e9b77")),
    responses(
        (status = 200, description = "The deliveries", body = [DeliveryBody]),
        (status = 404, description = "No such endpoint of the caller's terminal", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn list_deliveries(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(&path)?;
    let deliveries = state.webhooks.deliveries(&caller.0.terminal, id).await?;
    let body: Vec<DeliveryBody> = deliveries.iter().map(DeliveryBody::new).collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(body))
}
