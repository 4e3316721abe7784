//! POST /pay/api/payment/{checkoutSessionId}/cancel: the merchant withdraws a session that
//! has not been paid.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::ports::SavedResponse;
use checkout_domain::session::PaymentSession;
use checkout_domain::usecases::{IdempotentAnswer, IdempotentRequest};
use checkout_domain::CheckoutError;

use super::status::session_id;
use crate::auth::Caller;
use crate::dto::PaymentStatusResponse;
use crate::idempotency::{self, IdempotencyKeyHeader};
use crate::openapi::responses::{BearerErrors, IdempotencyInProgress, SessionNotFound};
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// The answer of a cancel: the status record, or its ProblemDetails.
fn cancelled(state: &AppState, result: &Result<PaymentSession, CheckoutError>) -> SavedResponse {
    match result {
        Ok(session) => {
            tracing::info!(session = %session.id, "session cancelled by the merchant");
            let body = PaymentStatusResponse::new(session, state.checkout.now());
            idempotency::json_response(StatusCode::OK, &body)
        }
        Err(e) => idempotency::problem_response(e),
    }
}

/// Cancel an unpaid session.
///
/// Cancels one of the caller's sessions (a payment link or an integrated checkout) that has
/// not been paid: Pending, or waiting for a 3DS challenge (whose authorisation is cancelled at
/// the processor first). A payer who opens it afterwards is told it was cancelled.
#[utoipa::path(
    post,
    path = "/pay/api/payment/{checkoutSessionId}/cancel",
    tag = "Payments",
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId, crate::openapi::params::ReversalIdempotencyKey),
    responses(
        (status = 200, description = "Cancelled: the status record, state Cancelled (7)", body = PaymentStatusResponse,
         headers(("Idempotent-Replayed" = String, description = "`true` on a replay of the first response to the Idempotency-Key"))),
        (status = 400, description = "Validation failed (the errors name `Idempotency-Key`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_008 the session is paid, finished or being processed, and nothing changed (the detail names its state); SVC_003 the processor did not confirm the cancel of a challenge's authorisation, and nothing changed (not kept under an Idempotency-Key: a retry asks again); an Idempotency-Key already used with another request", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound, IdempotencyInProgress,
    )
)]
pub async fn cancel_payment(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    key: IdempotencyKeyHeader,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let Some(key) = key.0 else {
        let session = state.checkout.withdraw_payment(&caller.0, id).await?;
        let answer = IdempotentAnswer::Fresh(cancelled(&state, &Ok(session)));
        return Ok(idempotency::respond_no_store(answer));
    };
    let once = IdempotentRequest {
        key,
        fingerprint: idempotency::fingerprint(&req, &[]),
    };
    let answer = state
        .checkout
        .withdraw_payment_once(&caller.0, id, &once, |r| cancelled(&state, r))
        .await?;
    Ok(idempotency::respond_no_store(answer))
}
