//! GET /pay/api/payment?transactionReferenceNumber=... : the caller's sessions with one
//! merchant reference.

use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::ValidationErrors;

use crate::auth::Caller;
use crate::dto::PaymentStatusResponse;
use crate::openapi::responses::BearerErrors;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// The query parameter.
const REFERENCE_PARAMETER: &str = "transactionReferenceNumber";
/// The name its errors are reported under (PascalCase, like the body fields).
const REFERENCE_FIELD: &str = "TransactionReferenceNumber";

/// The reference of the query string: `None` when absent; a 400 when it cannot be read or is
/// given more than once.
fn reference_parameter(req: &HttpRequest) -> Result<Option<String>, ApiError> {
    let refused = |message: &str| {
        let mut errors = ValidationErrors::new();
        errors.add(REFERENCE_FIELD, message);
        ApiError::from(errors)
    };
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(req.query_string())
        .map_err(|_| refused("The query string could not be read."))?;
    let mut values = pairs
        .into_iter()
        .filter(|(name, _)| name == REFERENCE_PARAMETER)
        .map(|(_, value)| value);
    let first = values.next();
    if values.next().is_some() {
        return Err(refused("TransactionReferenceNumber must be given once."));
    }
    Ok(first)
}

/// Find sessions by merchant reference.
///
/// Lists the caller's payment sessions with one merchant reference.
///
/// Newest first, as status records (an expired session and its successor share a reference,
/// so both are listed). Another terminal's sessions are never listed: an unknown reference
/// and another terminal's both answer `[]`.
#[utoipa::path(
    get,
    path = "/pay/api/payment",
    tag = "Payments",
    security(("bearer" = [])),
    params(
        ("transactionReferenceNumber" = String, Query, min_length = 1, max_length = 64, example = "ORDER-1001",
         description = "The merchant reference: 1 to 64 printable ASCII characters, as given when the session was created"),
        crate::openapi::params::OperationId,
    ),
    responses(
        (status = 200, description = "The caller's sessions with this reference, newest first (at most 100), each exactly as GET /pay/api/payment/{checkoutSessionId} shows it; `[]` when there is none", body = [PaymentStatusResponse]),
        (status = 400, description = "Missing or invalid transactionReferenceNumber (the errors name `TransactionReferenceNumber`)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn payments_by_reference(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let reference = reference_parameter(&req)?;
    let sessions = state
        .checkout
        .payments_by_reference(&caller.0, reference.as_deref())
        .await?;
    let now = state.checkout.now();
    let records: Vec<PaymentStatusResponse> = sessions
        .iter()
        .map(|session| PaymentStatusResponse::new(session, now))
        .collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(records))
}
