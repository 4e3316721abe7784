//! GET /pay/api/payment/{checkoutSessionId} (spec 4.4).

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use checkout_domain::ports::SavedResponse;
use checkout_domain::session::PaymentSession;
use checkout_domain::values::SessionId;
use checkout_domain::{CheckoutError, SvcCode};

use crate::auth::Caller;
use crate::dto::PaymentStatusResponse;
use crate::openapi::responses::BearerErrors;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// The answer of a merchant's action that returns the status record (capture, cancel), or
/// its ProblemDetails; `done` is logged with the session on success.
pub fn status_answer(
    state: &AppState,
    result: &Result<PaymentSession, CheckoutError>,
    done: &'static str,
) -> SavedResponse {
    match result {
        Ok(session) => {
            tracing::info!(session = %session.id(), "{done}");
            let body = PaymentStatusResponse::new(session, state.checkout.now());
            crate::idempotency::json_response(StatusCode::OK, &body)
        }
        Err(e) => crate::idempotency::problem_response(e),
    }
}

/// The session id of a `/pay/api/payment/{checkoutSessionId}...` path; SVC_007 (404) when
/// it is not one, exactly like an unknown id.
pub fn session_id(path: &str) -> Result<SessionId, ApiError> {
    path.parse::<SessionId>()
        .map_err(|_| CheckoutError::svc(SvcCode::Svc007).into())
}

/// Read a payment session's state.
///
/// The status record of one of the caller's payment sessions (spec 4.4). Poll it for a
/// payment link until `state` is terminal (see the `PaymentState` schema). Sessions of other terminals
/// answer 404, exactly like unknown ids.
#[utoipa::path(
    get,
    path = "/pay/api/payment/{checkoutSessionId}",
    tag = "Payments",
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "The payment status record", body = PaymentStatusResponse),
        (status = 404, description = "SVC_007 payment session not found", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn payment_status(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let session = state.checkout.payment_status(&caller.0, id).await?;
    let now = state.checkout.now();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(PaymentStatusResponse::new(&session, now)))
}
