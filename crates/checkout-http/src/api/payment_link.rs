//! POST /pay/api/generate-payment-link (spec 4.3).

use actix_web::{web, HttpResponse};

use crate::auth::Caller;
use crate::dto::{PaymentLinkRequest, PaymentLinkResponse};
use crate::json_body::JsonBody;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// Creates a shareable payment link that expires.
#[utoipa::path(
    post,
    path = "/pay/api/generate-payment-link",
    tag = "Payments",
    request_body = PaymentLinkRequest,
    security(("bearer" = [])),
    params(("X-idoperacion" = Option<String>, Header, description = "Merchant operation id for tracing")),
    responses(
        (status = 200, description = "Link created", body = PaymentLinkResponse),
        (status = 400, description = "Validation failed", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "Body larger than the configured limit (64 KiB by default)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 415, description = "Body is not JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_001 duplicate reference (the body names the session holding it in `checkoutSessionId`), SVC_005 terminal not registered", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 500, description = "Unexpected error", body = ProblemDetails, content_type = "application/problem+json"),
    )
)]
pub async fn generate_payment_link(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<PaymentLinkRequest>,
) -> Result<HttpResponse, ApiError> {
    let link = state
        .checkout
        .generate_payment_link(&caller.0, &body.0.into_domain())
        .await?;
    tracing::info!(session = %link.session.id, terminal = %link.session.terminal, "payment link created");
    Ok(HttpResponse::Ok().json(PaymentLinkResponse::new(&link.session, link.url)))
}
