//! GET /pay/api/payment?transactionReferenceNumber=... : the caller's sessions with one
//! merchant reference; or ?internalTransactionReferenceNumber=... : the one session support
//! was quoted.

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

/// The internal reference's query parameter.
const INTERNAL_PARAMETER: &str = "internalTransactionReferenceNumber";

/// The value of `parameter` in the query string (reported as `field`): `None` when absent; a
/// 400 when the query cannot be read or the parameter is given more than once.
fn query_parameter(
    req: &HttpRequest,
    parameter: &str,
    field: &str,
) -> Result<Option<String>, ApiError> {
    let refused = |message: String| {
        let mut errors = ValidationErrors::new();
        errors.add(field, message);
        ApiError::from(errors)
    };
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(req.query_string())
        .map_err(|_| refused("The query string could not be read.".to_owned()))?;
    let mut values = pairs
        .into_iter()
        .filter(|(name, _)| name == parameter)
        .map(|(_, value)| value);
    let first = values.next();
    if values.next().is_some() {
        return Err(refused(format!("{field} must be given once.")));
    }
    Ok(first)
}

/// Find sessions by merchant reference.
///
/// Lists the caller's payment sessions with one merchant reference, or the one session with
/// an `internalTransactionReferenceNumber` (the reference support is quoted).
///
/// Give exactly one of the two. Newest first, as status records (an expired session and its
/// successor share a merchant reference, so both are listed). Another terminal's sessions are
/// never listed: an unknown reference and another terminal's both answer `[]`.
#[utoipa::path(
    get,
    path = "/pay/api/payment",
    tag = "Payments",
    security(("bearer" = [])),
    params(
        ("transactionReferenceNumber" = Option<String>, Query, min_length = 1, max_length = 64, example = "ORDER-1001",
         description = "The merchant reference: 1 to 64 printable ASCII characters, as given when the session was created (required unless `internalTransactionReferenceNumber` is given)"),
        ("internalTransactionReferenceNumber" = Option<String>, Query, pattern = "^[Hh][Cc][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{22}$", example = "HC0ABCDEFGHJKMNPQRSTVWXY",
         description = "The service's reference of one session (`HC` and 22 Crockford base-32 characters, in either case), as the start answer and the status record give it; instead of `transactionReferenceNumber`"),
        crate::openapi::params::OperationId,
    ),
    responses(
        (status = 200, description = "The caller's sessions with this reference, newest first (at most 100), each exactly as GET /pay/api/payment/{checkoutSessionId} shows it; `[]` when there is none", body = [PaymentStatusResponse]),
        (status = 400, description = "Missing or invalid transactionReferenceNumber, or both references given (the errors name `TransactionReferenceNumber`); an invalid internalTransactionReferenceNumber (the errors name `InternalTransactionReferenceNumber`)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn payments_by_reference(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let reference = query_parameter(&req, REFERENCE_PARAMETER, REFERENCE_FIELD)?;
    let internal = query_parameter(
        &req,
        INTERNAL_PARAMETER,
        checkout_domain::usecases::INTERNAL_REFERENCE_FIELD,
    )?;
    let sessions = match (reference, internal) {
        (Some(_), Some(_)) => {
            let mut errors = ValidationErrors::new();
            errors.add(
                REFERENCE_FIELD,
                "Give transactionReferenceNumber or internalTransactionReferenceNumber, not both.",
            );
            return Err(errors.into());
        }
        (None, Some(internal)) => {
            state
                .checkout
                .payment_by_internal_reference(&caller.0, &internal)
                .await?
        }
        (reference, None) => {
            state
                .checkout
                .payments_by_reference(&caller.0, reference.as_deref())
                .await?
        }
    };
    let now = state.checkout.now();
    let records: Vec<PaymentStatusResponse> = sessions
        .iter()
        .map(|session| PaymentStatusResponse::new(session, now))
        .collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(records))
}
