//! POST /pay/api/start-payment (spec 4.2).

use actix_web::{web, HttpResponse};

use crate::auth::Caller;
use crate::dto::{StartPaymentRequest, StartPaymentResponse};
use crate::json_body::JsonBody;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// Creates a payment session for the hosted checkout page.
#[utoipa::path(
    post,
    path = "/pay/api/start-payment",
    tag = "Payments",
    request_body = StartPaymentRequest,
    security(("bearer" = [])),
    params(("X-idoperacion" = Option<String>, Header, description = "Merchant operation id for tracing")),
    responses(
        (status = 200, description = "Session created", body = StartPaymentResponse),
        (status = 400, description = "Validation failed", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "Body larger than the configured limit (64 KiB by default)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 415, description = "Body is not JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_001 duplicate reference (the body names the session holding it in `checkoutSessionId`), SVC_005 terminal not registered", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 500, description = "Unexpected error", body = ProblemDetails, content_type = "application/problem+json"),
    )
)]
pub async fn start_payment(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<StartPaymentRequest>,
) -> Result<HttpResponse, ApiError> {
    let session = state
        .checkout
        .start_payment(&caller.0, &body.0.into_domain())
        .await?;
    tracing::info!(session = %session.id, terminal = %session.terminal, "checkout session created");
    Ok(HttpResponse::Ok().json(StartPaymentResponse::from(&session)))
}
