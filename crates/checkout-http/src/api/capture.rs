//! POST /pay/api/payment/{checkoutSessionId}/capture and /void: the merchant settles an
//! authorisation held without capture, by capturing it or by releasing it.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::session::PaymentSession;
use checkout_domain::usecases::{IdempotentAnswer, IdempotentRequest};
use checkout_domain::CheckoutError;

use super::status::{session_id, status_answer};
use crate::auth::Caller;
use crate::dto::{AmountRequest, PaymentStatusResponse, ReversalResponse};
use crate::idempotency::{self, IdempotencyKeyHeader};
use crate::json_body::OptionalJsonBody;
use crate::openapi::responses::{BearerErrors, IdempotencyInProgress, SessionNotFound};
use crate::problem::{ApiError, ProblemDetails};
use crate::{request_context, AppState};

/// The answer of a void: the SVC_010 body, or its ProblemDetails.
fn voided(
    state: &AppState,
    result: &Result<PaymentSession, CheckoutError>,
) -> checkout_domain::ports::SavedResponse {
    match result {
        Ok(session) => {
            tracing::info!(session = %session.id(), "authorisation voided");
            let body = ReversalResponse::new(
                session,
                None,
                request_context::instance_id(),
                state.checkout.now(),
            );
            idempotency::json_response(StatusCode::OK, &body)
        }
        Err(e) => idempotency::problem_response(e),
    }
}

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
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId, crate::openapi::params::ReversalIdempotencyKey),
    responses(
        (status = 200, description = "Captured: the status record, state Successful, with `capturedAmount` the amount asked", body = PaymentStatusResponse,
         headers(("Idempotent-Replayed" = String, description = "`true` on a replay of the first response to the Idempotency-Key"))),
        (status = 400, description = "Validation failed (the errors name `Amount` or `Idempotency-Key`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_008 not an authorisation held without capture (never authorised, already captured, or another capture or void pending: the detail names the state); SVC_011 an amount above the authorised one; SVC_004 the processor refused (nothing captured); SVC_003 the processor's answer was lost (the capture stays pending and is checked again; send the same request again to learn its outcome); an Idempotency-Key already used with another request", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound, IdempotencyInProgress,
    )
)]
pub async fn capture_payment(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    key: IdempotencyKeyHeader,
    req: HttpRequest,
    body: OptionalJsonBody<AmountRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let amount = body.value.amount.map(|d| d.0);
    let Some(key) = key.0 else {
        let session = state
            .checkout
            .capture_payment(&caller.0, id, amount)
            .await?;
        let answer = IdempotentAnswer::Fresh(status_answer(
            &state,
            &Ok(session),
            "authorisation captured",
        ));
        return Ok(idempotency::respond_no_store(answer));
    };
    let once = IdempotentRequest {
        key,
        fingerprint: idempotency::fingerprint(&req, &body.bytes),
    };
    let answer = state
        .checkout
        .capture_payment_once(&caller.0, id, amount, &once, |r| {
            status_answer(&state, r, "authorisation captured")
        })
        .await?;
    Ok(idempotency::respond_no_store(answer))
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
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId, crate::openapi::params::ReversalIdempotencyKey),
    responses(
        (status = 200, description = "SVC_010 reversal completed: the session is Voided", body = ReversalResponse,
         headers(("Idempotent-Replayed" = String, description = "`true` on a replay of the first response to the Idempotency-Key"))),
        (status = 400, description = "Validation failed (the errors name `Idempotency-Key`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_011 the payment is captured (settled): refund it instead; SVC_008 no authorisation to void, or a capture pending; SVC_009 the processor refused the void, or did not confirm it (it stays pending and is checked again; send the same request again to learn its outcome); an Idempotency-Key already used with another request", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound, IdempotencyInProgress,
    )
)]
pub async fn void_payment(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    key: IdempotencyKeyHeader,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let Some(key) = key.0 else {
        let session = state.checkout.void_payment(&caller.0, id).await?;
        let answer = IdempotentAnswer::Fresh(voided(&state, &Ok(session)));
        return Ok(idempotency::respond_no_store(answer));
    };
    let once = IdempotentRequest {
        key,
        fingerprint: idempotency::fingerprint(&req, &[]),
    };
    let answer = state
        .checkout
        .void_payment_once(&caller.0, id, &once, |r| voided(&state, r))
        .await?;
    Ok(idempotency::respond_no_store(answer))
}
