//! POST /api/public/security/auth (spec 4.1).

use actix_web::{web, HttpResponse};

use crate::dto::{TokenRequest, TokenResponse};
use crate::json_body::JsonBody;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// Issues a JWT access token for a terminal's OAuth 2.0 client credentials.
#[utoipa::path(
    post,
    path = "/api/public/security/auth",
    tag = "Security",
    request_body = TokenRequest,
    responses(
        (status = 200, description = "Token issued", body = TokenResponse),
        (status = 400, description = "Missing or invalid fields", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "Invalid credentials", body = ProblemDetails, content_type = "application/problem+json"),
    )
)]
pub async fn issue_token(
    state: web::Data<AppState>,
    body: JsonBody<TokenRequest>,
) -> Result<HttpResponse, ApiError> {
    let credentials = body.0.try_into_domain()?;
    let token = state.checkout.issue_token(&credentials).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(TokenResponse::from(token)))
}
