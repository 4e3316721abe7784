//! POST /api/public/security/auth (spec 4.1).

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::CheckoutError;

use crate::dto::{TokenRequest, TokenResponse};
use crate::json_body::JsonBody;
use crate::openapi::responses::JsonBodyErrors;
use crate::problem::{ApiError, ProblemDetails};
use crate::rate_limit::AuthLimits;
use crate::AppState;

/// Get an access token.
///
/// Issues a JWT access token for a terminal's OAuth 2.0 client credentials (spec 4.1). No
/// bearer token is needed. The sandbox prints its client's secret when it starts; pin it with
/// `CHECKOUT__SANDBOX__CLIENT_SECRET=choose-a-secret`. Request a new token before `expiresIn`
/// seconds have passed.
#[utoipa::path(
    post,
    path = "/api/public/security/auth",
    tag = "Security",
    request_body(content = TokenRequest, example = json!({"client_id": "sandbox-client", "client_secret": "choose-a-secret"})),
    responses(
        (status = 200, description = "Token issued", body = TokenResponse),
        (status = 400, description = "Missing or invalid fields", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "Invalid credentials", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 429, description = "Too many token requests from this client or address; see Retry-After", body = ProblemDetails, content_type = "application/problem+json"),
        JsonBodyErrors,
    )
)]
pub async fn issue_token(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: JsonBody<TokenRequest>,
) -> Result<HttpResponse, ApiError> {
    // The peer address; X-Forwarded-For only from a trusted proxy (anyone can write it).
    let address = state
        .trusted_proxies
        .client_of(&req)
        .map(|a| a.to_string())
        .unwrap_or_default();
    let limits = &state.auth_limits;
    limit(limits.per_address.check(&address))?;
    let credentials = body.0.try_into_domain()?;
    let client_id = &credentials.client_id;
    let pair = AuthLimits::client_address_key(client_id, &address);
    limit(limits.failures_per_client_address.peek(&pair))?;
    limit(limits.per_client.peek(client_id))?;
    match state.checkout.issue_token(&credentials).await {
        Ok(token) => {
            let _ = limits.per_client.check(client_id);
            Ok(HttpResponse::Ok()
                .insert_header(("Cache-Control", "no-store"))
                .json(TokenResponse::from(token)))
        }
        Err(e) => {
            if matches!(e, CheckoutError::Unauthenticated(_)) {
                let _ = limits.failures_per_client_address.check(&pair);
            }
            Err(e.into())
        }
    }
}

/// A refused rate-limit check as a 429.
fn limit(check: Result<(), Duration>) -> Result<(), ApiError> {
    check.map_err(|wait| {
        tracing::warn!(
            retry_after_ms = wait.as_millis() as u64,
            "token requests rate limited"
        );
        ApiError::TooManyRequests {
            retry_after_secs: wait.as_secs_f64().ceil().max(1.0) as u64,
        }
    })
}
