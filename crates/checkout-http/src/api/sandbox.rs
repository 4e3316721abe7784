//! The sandbox's developer routes under `/pay/api/sandbox/payment/{checkoutSessionId}/...`:
//! pay with a test card, pass or fail a 3DS challenge, expire a session now, and settle now
//! what would otherwise wait for the reconciliation sweep. Mounted only when the service runs
//! as a sandbox ([`AppState::sandbox_routes`]); in production every one is a 404 like any
//! unknown address. Authenticated like the merchant routes and scoped to the caller's
//! terminal: another terminal's session is SVC_007, exactly like an unknown id.

use actix_web::{web, HttpResponse};
use checkout_domain::card::CardInput;
use checkout_domain::usecases::PaymentResult;
use checkout_domain::{CheckoutError, SvcCode, ValidationErrors};
use serde::Deserialize;
use utoipa::ToSchema;

use super::status::session_id;
use crate::auth::Caller;
use crate::dto::PaymentStatusResponse;
use crate::json_body::JsonBody;
use crate::openapi::responses::{BearerErrors, JsonBodyErrors, SessionNotFound};
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// POST /pay/api/sandbox/payment/{id}/pay body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxPayRequest {
    /// A sandbox test card number (the README's list: `4242424242424242` approved and
    /// captured, `4000000000000077` approved and held, `4000000000000002` declined,
    /// `4000002760003184` needs a 3DS challenge, ...). The payer's other fields are filled in
    /// (a valid expiry and verification value).
    #[schema(value_type = String, required = true, nullable = false, example = "4242424242424242", pattern = "^[0-9]{12,19}$")]
    pub card_number: Option<String>,
}

/// POST /pay/api/sandbox/payment/{id}/challenge body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxChallengeRequest {
    /// `true`: the payer passes the challenge (the payment is authorised); `false`: the payer
    /// fails it (declined, SVC_006).
    #[schema(value_type = bool, required = true, nullable = false, example = true)]
    pub passed: Option<bool>,
}

/// A 400 naming `field`, which the body lacks.
fn missing(field: &str) -> ApiError {
    let mut errors = ValidationErrors::new();
    errors.add(field, format!("{field} is required."));
    CheckoutError::Validation(errors).into()
}

/// The status record of `id` as the caller reads it, 200.
async fn record(state: &AppState, caller: &Caller, id: &str) -> Result<HttpResponse, ApiError> {
    let session = state
        .checkout
        .payment_status(&caller.0, session_id(id)?)
        .await?;
    Ok(answer(state, &session))
}

fn answer(state: &AppState, session: &checkout_domain::session::PaymentSession) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(PaymentStatusResponse::new(session, state.checkout.now()))
}

/// A processor that did not answer: SVC_003, nothing assumed.
fn unresolved() -> ApiError {
    CheckoutError::svc_with(
        SvcCode::Svc003,
        "The processor's answer was not received; the session is settled by reconciliation \
         (or by POST .../settle).",
    )
    .into()
}

/// Pay with a test card (sandbox only).
///
/// Submits a sandbox test card for one of the caller's Pending sessions, exactly as the payer
/// would on the hosted page (the card-testing guard aside), and answers the status record as
/// it then stands: Successful, ApprovedTransaction, ChallengeRequired, Failed, or Pending when
/// the terminal allows another card. Sandbox only: 404 in production.
#[utoipa::path(
    post,
    path = "/pay/api/sandbox/payment/{checkoutSessionId}/pay",
    tag = "Sandbox",
    request_body(content = SandboxPayRequest, example = json!({"cardNumber": "4242424242424242"})),
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "The card was submitted: the status record as it now stands", body = PaymentStatusResponse),
        (status = 400, description = "Validation failed (the errors name `CardNumber`, or a field the request does not have)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_008 the session is not waiting for a card (the detail names its state); SVC_002 it expired; SVC_003 or SVC_004 the processor did not take the card (nothing charged)", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound, JsonBodyErrors,
    )
)]
pub async fn sandbox_pay(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    body: JsonBody<SandboxPayRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let card_number = body.0.card_number.ok_or_else(|| missing("CardNumber"))?;
    let session = state.checkout.payment_status(&caller.0, id).await?;
    if session.state() != checkout_domain::session::SessionState::Pending {
        return Err(not_in_state(&session, "waiting for a card"));
    }
    let year = (state.checkout.now().year() + 3) % 100;
    let input = CardInput {
        cardholder_name: "Sandbox Payer".into(),
        card_number,
        expiry: format!("12/{year:02}"),
        cvv: "123".into(),
    };
    let post = state.checkout.process_payment(id, &input).await?;
    match post.result {
        Err(fields) => {
            let mut errors = ValidationErrors::new();
            for (field, error) in fields {
                let name = match field {
                    checkout_domain::card::CardField::CardNumber => "CardNumber",
                    checkout_domain::card::CardField::CardholderName => "CardholderName",
                    checkout_domain::card::CardField::Expiry => "Expiry",
                    checkout_domain::card::CardField::Cvv => "Cvv",
                };
                errors.add(name, error.to_string());
            }
            Err(CheckoutError::Validation(errors).into())
        }
        Ok(PaymentResult::Retry { code }) => Err(CheckoutError::svc(code).into()),
        Ok(PaymentResult::Unresolved) => Err(unresolved()),
        Ok(_) => record(&state, &caller, &path).await,
    }
}

/// Pass or fail a 3DS challenge (sandbox only).
///
/// Answers the 3DS challenge of one of the caller's sessions waiting for one
/// (ChallengeRequired), as the payer would on the challenge page: passed, the payment is
/// authorised; failed, it is declined. Answers the status record as it then stands. Sandbox
/// only: 404 in production.
#[utoipa::path(
    post,
    path = "/pay/api/sandbox/payment/{checkoutSessionId}/challenge",
    tag = "Sandbox",
    request_body(content = SandboxChallengeRequest, example = json!({"passed": true})),
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "The challenge was answered: the status record as it now stands", body = PaymentStatusResponse),
        (status = 400, description = "Validation failed (the errors name `Passed`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "SVC_008 the session is not waiting for a challenge (the detail names its state); SVC_002 it expired; SVC_003 the processor's answer was not received", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound, JsonBodyErrors,
    )
)]
pub async fn sandbox_challenge(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    body: JsonBody<SandboxChallengeRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let passed = body.0.passed.ok_or_else(|| missing("Passed"))?;
    let session = state.checkout.payment_status(&caller.0, id).await?;
    if session.state() != checkout_domain::session::SessionState::ChallengeRequired {
        return Err(not_in_state(&session, "waiting for a 3DS challenge"));
    }
    let (_, outcome) = state.checkout.answer_challenge(id, passed).await?;
    match outcome.result {
        PaymentResult::Unresolved => Err(unresolved()),
        _ => record(&state, &caller, &path).await,
    }
}

/// Expire a session now (sandbox only).
///
/// Expires one of the caller's sessions at once, as its `expirationDateTime` passing would:
/// Pending becomes Expired (`payment.expired`); a session waiting for a challenge has its
/// authorisation cancelled at the processor first. An Expired session is answered as it is.
/// Sandbox only: 404 in production.
#[utoipa::path(
    post,
    path = "/pay/api/sandbox/payment/{checkoutSessionId}/expire",
    tag = "Sandbox",
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "Expired: the status record, state Expired", body = PaymentStatusResponse),
        (status = 422, description = "SVC_008 the session is paid, finished or being processed (the detail names its state) and nothing changed; SVC_003 the processor did not confirm the cancel of a challenge's authorisation", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors, SessionNotFound,
    )
)]
pub async fn sandbox_expire(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let session = state
        .checkout
        .expire_now(&caller.0, session_id(&path)?)
        .await?;
    Ok(answer(&state, &session))
}

/// Settle now what waits for the clock (sandbox only).
///
/// Runs for one of the caller's sessions what the reconciliation sweep would run later: a card
/// attempt whose answer was lost (test card `4000000000000184`) or a challenge finished at the
/// processor is asked about at once and its answer recorded; a passed expiry is written.
/// Answers the status record as it then stands (unchanged when nothing was waiting). Sandbox
/// only: 404 in production.
#[utoipa::path(
    post,
    path = "/pay/api/sandbox/payment/{checkoutSessionId}/settle",
    tag = "Sandbox",
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "Settled as far as the processor says: the status record as it now stands", body = PaymentStatusResponse),
        BearerErrors, SessionNotFound,
    )
)]
pub async fn sandbox_settle(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let session = state
        .checkout
        .settle_now(&caller.0, session_id(&path)?)
        .await?;
    Ok(answer(&state, &session))
}

/// SVC_008 naming the session's state and what the route needs.
fn not_in_state(session: &checkout_domain::session::PaymentSession, needs: &str) -> ApiError {
    CheckoutError::svc_with(
        SvcCode::Svc008,
        format!(
            "The payment is {} (state code {}), not {needs}; nothing changed.",
            session.state().name(),
            session.state().code()
        ),
    )
    .into()
}
