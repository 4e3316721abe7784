//! POST /pay/api/start-payment (spec 4.2), with an optional `Idempotency-Key`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::usecases::IdempotentRequest;

use crate::auth::Caller;
use crate::dto::{StartPaymentRequest, StartPaymentResponse};
use crate::idempotency::{self, IdempotencyKeyHeader};
use crate::json_body::JsonBodyWithBytes;
use crate::openapi::responses::{BearerErrors, IdempotencyInProgress, JsonBodyErrors};
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// Start a hosted checkout payment.
///
/// Creates a payment session for the hosted checkout page (spec 4.2); redirect the payer to
/// the answer's `checkoutUrl` (`/pay/checkout-payment/{checkoutSessionId}` at the public
/// base URL).
///
/// With an `Idempotency-Key`, a retry of the same request (same route, same body bytes) within
/// 24 hours answers the first response again, with `Idempotent-Replayed: true`, and creates
/// nothing.
#[utoipa::path(
    post,
    path = "/pay/api/start-payment",
    tag = "Payments",
    request_body(content = StartPaymentRequest, example = json!({"callbackSuccessUrl": "https://merchant.example/ok", "callbackFailUrl": "https://merchant.example/fail", "callbackBackUrl": "https://merchant.example/cart", "totalTransactionAmount": 25.50, "currencyCode": "USD", "terminalNumber": "SANDBOX-001", "transactionReferenceNumber": "ORDER-1001", "generalPurchaseDescription": "Order 1001", "userEmail": "payer@example.com", "culture": "en", "items": [{"itemCode": "SKU-1", "quantity": 2, "description": "Blue mug", "amount": 10.00, "currencyCode": "USD"}], "additionalCharges": [{"chargeName": "Shipping", "chargeAmount": 5.50, "chargeCurrencyCode": "USD"}]})),
    security(("bearer" = [])),
    params(crate::openapi::params::OperationId, crate::openapi::params::CreateIdempotencyKey),
    responses(
        (status = 200, description = "Session created (or, with `Idempotent-Replayed: true`, the first response to this Idempotency-Key)", body = StartPaymentResponse,
         headers(("Idempotent-Replayed" = String, description = "`true` when the response is a replay of the first response to the Idempotency-Key; absent otherwise"))),
        (status = 400, description = "Validation failed (the errors may name `Idempotency-Key`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_001 duplicate reference (the body names the session holding it in `checkoutSessionId`), SVC_005 terminal not registered, or an Idempotency-Key already used with another request (`type` https://tools.ietf.org/html/rfc4918#section-11.2)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, JsonBodyErrors, IdempotencyInProgress,
    )
)]
pub async fn start_payment(
    state: web::Data<AppState>,
    caller: Caller,
    key: IdempotencyKeyHeader,
    req: HttpRequest,
    body: JsonBodyWithBytes<StartPaymentRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = body.value.into_domain();
    let Some(key) = key.0 else {
        let session = state.checkout.start_payment(&caller.0, &request).await?;
        tracing::info!(session = %session.id(), terminal = %session.terminal(), "checkout session created");
        let url = state.pages.checkout_page_url(&session);
        return Ok(HttpResponse::Ok().json(StartPaymentResponse::new(&session, url)));
    };
    let once = IdempotentRequest {
        key,
        fingerprint: idempotency::fingerprint(&req, &body.bytes),
    };
    let create = state.checkout.start_payment(&caller.0, &request);
    let answer = state
        .checkout
        .create_once(&caller.0, &once, create, |result| match result {
            Ok(session) => {
                tracing::info!(session = %session.id(), terminal = %session.terminal(), "checkout session created");
                let url = state.pages.checkout_page_url(session);
                idempotency::json_response(StatusCode::OK, &StartPaymentResponse::new(session, url))
            }
            Err(e) => idempotency::problem_response(e),
        })
        .await?;
    Ok(idempotency::respond(answer))
}
