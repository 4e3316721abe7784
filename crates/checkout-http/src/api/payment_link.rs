//! POST /pay/api/generate-payment-link (spec 4.3), with an optional `Idempotency-Key`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::usecases::IdempotentRequest;

use crate::auth::Caller;
use crate::dto::{PaymentLinkRequest, PaymentLinkResponse};
use crate::idempotency::{self, IdempotencyKeyHeader};
use crate::json_body::JsonBodyWithBytes;
use crate::openapi::responses::{BearerErrors, IdempotencyInProgress, JsonBodyErrors};
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// Generate a payment link.
///
/// Creates a shareable payment link that expires (spec 4.3); send `paymentLink` to the payer
/// and poll the status record.
///
/// With an `Idempotency-Key`, a retry of the same request (same route, same body bytes) within
/// 24 hours answers the first response again, with `Idempotent-Replayed: true`, and creates
/// nothing.
#[utoipa::path(
    post,
    path = "/pay/api/generate-payment-link",
    tag = "Payments",
    request_body(content = PaymentLinkRequest, example = json!({"totalTransactionAmount": 15000, "currencyCode": "CRC", "transactionReferenceNumber": "INVOICE-77", "generalPurchaseDescription": "Invoice 77", "userEmail": "payer@example.com", "culture": "es"})),
    security(("bearer" = [])),
    params(crate::openapi::params::OperationId, crate::openapi::params::CreateIdempotencyKey),
    responses(
        (status = 200, description = "Link created (or, with `Idempotent-Replayed: true`, the first response to this Idempotency-Key)", body = PaymentLinkResponse,
         headers(("Idempotent-Replayed" = String, description = "`true` when the response is a replay of the first response to the Idempotency-Key; absent otherwise"))),
        (status = 400, description = "Validation failed (the errors may name `Idempotency-Key`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_001 duplicate reference (the body names the session holding it in `checkoutSessionId`), SVC_005 terminal not registered, or an Idempotency-Key already used with another request (`type` https://tools.ietf.org/html/rfc4918#section-11.2)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, JsonBodyErrors, IdempotencyInProgress,
    )
)]
pub async fn generate_payment_link(
    state: web::Data<AppState>,
    caller: Caller,
    key: IdempotencyKeyHeader,
    req: HttpRequest,
    body: JsonBodyWithBytes<PaymentLinkRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = body.value.into_domain();
    let Some(key) = key.0 else {
        let link = state
            .checkout
            .generate_payment_link(&caller.0, &request)
            .await?;
        tracing::info!(session = %link.session.id(), terminal = %link.session.terminal(), "payment link created");
        return Ok(HttpResponse::Ok().json(PaymentLinkResponse::new(&link.session, link.url)));
    };
    let once = IdempotentRequest {
        key,
        fingerprint: idempotency::fingerprint(&req, &body.bytes),
    };
    let create = state.checkout.generate_payment_link(&caller.0, &request);
    let answer = state
        .checkout
        .create_once(&caller.0, &once, create, |result| match result {
            Ok(link) => {
                tracing::info!(session = %link.session.id(), terminal = %link.session.terminal(), "payment link created");
                idempotency::json_response(
                    StatusCode::OK,
                    &PaymentLinkResponse::new(&link.session, link.url.clone()),
                )
            }
            Err(e) => idempotency::problem_response(e),
        })
        .await?;
    Ok(idempotency::respond(answer))
}
