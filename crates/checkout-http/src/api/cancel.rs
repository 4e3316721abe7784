//! POST /pay/api/payment/{checkoutSessionId}/cancel: the merchant withdraws a session that
//! has not been paid.

use actix_web::{web, HttpResponse};

use super::status::session_id;
use crate::auth::Caller;
use crate::dto::PaymentStatusResponse;
use crate::openapi::responses::{BearerErrors, SessionNotFound};
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
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "Cancelled: the status record, state Cancelled (7)", body = PaymentStatusResponse),
        (status = 422, description = "SVC_008 the session is paid, finished or being processed, and nothing changed (the detail names its state); SVC_003 the processor did not confirm the cancel of a challenge's authorisation, and nothing changed", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound,
    )
)]
pub async fn cancel_payment(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let session = state.checkout.withdraw_payment(&caller.0, id).await?;
    tracing::info!(session = %session.id, "session cancelled by the merchant");
    let now = state.checkout.now();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(PaymentStatusResponse::new(&session, now)))
}
