//! POST and GET /pay/api/payment/{checkoutSessionId}/refunds: refunds of a captured payment,
//! each optionally under an `Idempotency-Key`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::usecases::{IdempotentAnswer, IdempotentRequest, RefundDone};

use super::status::session_id;
use crate::auth::Caller;
use crate::dto::{RefundListResponse, RefundRequest, ReversalResponse};
use crate::idempotency::{self, IdempotencyKeyHeader};
use crate::json_body::JsonBodyWithBytes;
use crate::openapi::responses::{BearerErrors, IdempotencyInProgress, SessionNotFound};
use crate::problem::{ApiError, ProblemDetails};
use crate::{request_context, AppState};

/// The SVC_010 answer of a refund done.
fn done(state: &AppState, done: &RefundDone) -> ReversalResponse {
    ReversalResponse::new(
        &done.session,
        Some(&done.refund),
        request_context::instance_id(),
        state.checkout.now(),
    )
}

/// Refunds `amount` of a captured payment (Successful). Partial refunds may follow each other
/// until their sum reaches the captured amount.
///
/// The refund is recorded, its amount reserved, before the processor is asked, so that
/// racing refunds never exceed the captured amount. With an `Idempotency-Key`, the key names
/// one refund for good: a retry never refunds again, and answers the refund as it stands (a
/// settled answer replayed with `Idempotent-Replayed: true`).
#[utoipa::path(
    post,
    path = "/pay/api/payment/{checkoutSessionId}/refunds",
    tag = "Payments",
    request_body(content = RefundRequest, example = json!({"amount": 5.00})),
    security(("bearer" = [])),
    params(
        crate::openapi::params::SessionPath,
        crate::openapi::params::OperationId,
        crate::openapi::params::ReversalIdempotencyKey,
    ),
    responses(
        (status = 200, description = "SVC_010 reversal completed: the refund (Succeeded) and the status record with its `refundedAmount`", body = ReversalResponse,
         headers(("Idempotent-Replayed" = String, description = "`true` on a replay of the first response to the Idempotency-Key"))),
        (status = 400, description = "Validation failed (the errors name `Amount` or `Idempotency-Key`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "Body larger than the configured limit", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 415, description = "Body is not JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_008 nothing captured to refund; SVC_011 above what can still be refunded; SVC_009 the processor refused (nothing refunded) or has not confirmed (the refund is listed as Unknown, its amount reserved, not counted as refunded, and checked again until the processor answers); an Idempotency-Key already used with another request", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound, IdempotencyInProgress,
    )
)]
pub async fn create_refund(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    key: IdempotencyKeyHeader,
    req: HttpRequest,
    body: JsonBodyWithBytes<RefundRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let amount = body.value.amount.map(|d| d.0);
    let Some(key) = key.0 else {
        let refund = state.checkout.refund_payment(&caller.0, id, amount).await?;
        tracing::info!(session = %id, refund = %refund.refund.id, "refund made");
        let answer = IdempotentAnswer::Fresh(idempotency::json_response(
            StatusCode::OK,
            &done(&state, &refund),
        ));
        return Ok(idempotency::respond_no_store(answer));
    };
    let once = IdempotentRequest {
        key,
        fingerprint: idempotency::fingerprint(&req, &body.bytes),
    };
    let answer = state
        .checkout
        .refund_payment_once(&caller.0, id, amount, &once, |result| match result {
            Ok(refund) => {
                tracing::info!(session = %id, refund = %refund.refund.id, "refund made");
                idempotency::json_response(StatusCode::OK, &done(&state, refund))
            }
            Err(e) => idempotency::problem_response(e),
        })
        .await?;
    Ok(idempotency::respond_no_store(answer))
}

/// List a session's refunds.
///
/// Lists the refunds of one of the caller's sessions, oldest first, with its captured and
/// refunded amounts.
#[utoipa::path(
    get,
    path = "/pay/api/payment/{checkoutSessionId}/refunds",
    tag = "Payments",
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "The refunds, oldest first (`[]` when there is none)", body = RefundListResponse),
        BearerErrors, SessionNotFound,
    )
)]
pub async fn list_refunds(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let (session, refunds) = state.checkout.payment_refunds(&caller.0, id).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(RefundListResponse::new(&session, &refunds)))
}
