//! POST /pay/api/payment/{checkoutSessionId}/capture and /void: the merchant settles an
//! authorisation held without capture, by capturing it or by releasing it.

use actix_web::{web, HttpResponse};

use super::status::session_id;
use crate::auth::Caller;
use crate::dto::{AmountRequest, PaymentStatusResponse, ReversalResponse};
use crate::json_body::OptionalJsonBody;
use crate::openapi::responses::{BearerErrors, SessionNotFound};
use crate::problem::{ApiError, ProblemDetails};
use crate::{request_context, AppState};

/// Capture an authorisation.
///
/// Captures an authorisation (`ApprovedTransaction`): the whole amount, or `amount` (at most
/// the authorised amount), once. The session becomes Successful with its `capturedAmount`.
#[utoipa::path(
    post,
    path = "/pay/api/payment/{checkoutSessionId}/capture",
    tag = "Payments",
    request_body(content = Option<AmountRequest>, description = "Optional: `{\"amount\": 10.00}` for a partial capture; no body captures the whole amount", example = json!({"amount": 10.00})),
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "Captured: the status record, state Successful, with `capturedAmount`", body = PaymentStatusResponse),
        (status = 400, description = "Validation failed (the errors name `Amount`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_008 not an authorisation held without capture (never authorised, or already captured); SVC_011 an amount above the authorised one; SVC_004 the processor refused (nothing captured); SVC_003 the processor's answer was lost (send the same request again)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound,
    )
)]
pub async fn capture_payment(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    body: OptionalJsonBody<AmountRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let amount = body.value.amount.map(|d| d.0);
    let session = state
        .checkout
        .capture_payment(&caller.0, id, amount)
        .await?;
    tracing::info!(session = %session.id, "authorisation captured");
    let now = state.checkout.now();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(PaymentStatusResponse::new(&session, now)))
}

/// Void an authorisation.
///
/// Voids an authorisation held without capture (`ApprovedTransaction`): the processor
/// releases the payer's funds and the session becomes Voided (8).
#[utoipa::path(
    post,
    path = "/pay/api/payment/{checkoutSessionId}/void",
    tag = "Payments",
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "SVC_010 reversal completed: the session is Voided", body = ReversalResponse),
        (status = 422, description = "SVC_011 the payment is captured (settled): refund it instead; SVC_008 no authorisation to void; SVC_009 the processor did not confirm the void (nothing changed)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound,
    )
)]
pub async fn void_payment(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let session = state.checkout.void_payment(&caller.0, id).await?;
    tracing::info!(session = %session.id, "authorisation voided");
    let now = state.checkout.now();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(ReversalResponse::new(
            &session,
            None,
            request_context::instance_id(),
            now,
        )))
}
