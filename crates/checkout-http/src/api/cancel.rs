//! POST /pay/api/payment/{checkoutSessionId}/cancel: the merchant withdraws a session that
//! has not been paid.

use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::usecases::{IdempotentAnswer, IdempotentRequest};

use super::status::{session_id, status_answer};
use crate::auth::Caller;
use crate::dto::PaymentStatusResponse;
use crate::idempotency::{self, IdempotencyKeyHeader};
use crate::openapi::responses::{BearerErrors, IdempotencyInProgress, SessionNotFound};
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

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
        let answer = IdempotentAnswer::Fresh(status_answer(
            &state,
            &Ok(session),
            "session cancelled by the merchant",
        ));
        return Ok(idempotency::respond_no_store(answer));
    };
    let once = IdempotentRequest {
        key,
        fingerprint: idempotency::fingerprint(&req, &[]),
    };
    let answer = state
        .checkout
        .withdraw_payment_once(&caller.0, id, &once, |r| {
            status_answer(&state, r, "session cancelled by the merchant")
        })
        .await?;
    Ok(idempotency::respond_no_store(answer))
}
