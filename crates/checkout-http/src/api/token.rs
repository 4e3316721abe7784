//! POST /api/public/security/auth (spec 4.1).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use base64::Engine;
use checkout_domain::auth::ClientCredentials;
use checkout_domain::{CheckoutError, ValidationErrors};

use crate::dto::{TokenForm, TokenRequest, TokenResponse};
use crate::json_body::{read_bytes, JsonBody};
use crate::openapi::responses::JsonBodyErrors;
use crate::problem::{ApiError, ProblemDetails};
use crate::rate_limit::AuthLimits;
use crate::AppState;

/// Get an access token.
///
/// Issues a JWT access token for a terminal's OAuth 2.0 client credentials (spec 4.1). No
/// bearer token is needed. The sandbox prints its client's secret when it starts; pin it with
/// `CHECKOUT__SANDBOX__CLIENT_SECRET=choose-a-secret`. Request a new token before `expiresIn`
/// seconds have passed. Besides the spec's JSON body, the standard OAuth 2.0
/// client-credentials form is accepted (the `oauth2` security scheme): RFC 6749 section 4.4,
/// `Content-Type: application/x-www-form-urlencoded` with `grant_type=client_credentials` and
/// `client_id` and `client_secret` in the body or in HTTP Basic (not both), other parameters
/// such as `scope` ignored; so OAuth libraries, Swagger UI and Postman fetch tokens by
/// themselves. Every answer carries `access_token`, `token_type` and `expires_in` too. `RateLimit-Policy` and `RateLimit` (IETF httpapi ratelimit-headers
/// draft) tell the limits of the caller's address.
#[utoipa::path(
    post,
    path = "/api/public/security/auth",
    tag = "Security",
    request_body(content = TokenRequest, example = json!({"client_id": "sandbox-client", "client_secret": "choose-a-secret"})),
    responses(
        (status = 200, description = "Token issued", body = TokenResponse,
         headers(
            ("RateLimit-Policy" = String, description = "The route's quotas (IETF httpapi ratelimit-headers draft): `\"address\";q=<requests>;w=60, \"client\";q=<tokens>;w=60`"),
            ("RateLimit" = String, description = "What the caller's address has left: `\"address\";r=<remaining>;t=<seconds until the quota is full again>`"),
         )),
        (status = 400, description = "Missing or invalid fields", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "Invalid credentials", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 429, description = "Too many token requests from this client or address; see Retry-After (and RateLimit, RateLimit-Policy)", body = ProblemDetails, content_type = "application/problem+json",
         headers(("Retry-After" = u64, description = "Seconds until a request is allowed again"))),
        JsonBodyErrors,
    )
)]
pub async fn issue_token(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: TokenCall,
) -> HttpResponse {
    // The peer address; X-Forwarded-For only from a trusted proxy (anyone can write it).
    let address = state
        .trusted_proxies
        .client_of(&req)
        .map(|a| a.to_string())
        .unwrap_or_default();
    let mut response = issue(&state, &address, body)
        .await
        .unwrap_or_else(|e| e.error_response());
    state.auth_limits.set_headers(&mut response, &address);
    response
}

/// Issues the token, within the limits of `address` and of the client.
async fn issue(state: &AppState, address: &str, body: TokenCall) -> Result<HttpResponse, ApiError> {
    let limits = &state.auth_limits;
    limit(limits.per_address.check(address))?;
    let credentials = body.0?;
    let client_id = &credentials.client_id;
    let pair = AuthLimits::client_address_key(client_id, address);
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

/// The credentials of a token request: the spec's JSON body, or the OAuth 2.0 form body
/// (`application/x-www-form-urlencoded`) with the credentials in it or in HTTP Basic. Its
/// validation errors are kept for the handler, which answers them after the address's rate
/// limit.
pub struct TokenCall(Result<ClientCredentials, ValidationErrors>);

impl FromRequest for TokenCall {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if !is_form(req) {
            let body = JsonBody::<TokenRequest>::from_request(req, payload);
            return Box::pin(async move { Ok(TokenCall(body.await?.0.try_into_domain())) });
        }
        let basic = basic_credentials(req);
        let body = read_bytes(req, payload);
        Box::pin(async move {
            let bytes = body.await?;
            let form: TokenForm = serde_urlencoded::from_bytes(&bytes).map_err(|_| {
                let mut errors = ValidationErrors::new();
                errors.add("Body", "The request body is not a valid form.");
                ApiError::from(errors)
            })?;
            Ok(TokenCall(
                basic.and_then(|basic| form.try_into_domain(basic)),
            ))
        })
    }
}

/// Whether the body is a form (`application/x-www-form-urlencoded`).
fn is_form(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| {
            m.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}

/// The client credentials of an HTTP Basic `Authorization` header (RFC 6749 section 2.3.1:
/// each form-encoded, then joined by `:` and base64-encoded); `None` without one, a 400 naming
/// `Authorization` when it is not readable.
fn basic_credentials(req: &HttpRequest) -> Result<Option<(String, String)>, ValidationErrors> {
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let unreadable = || {
        let mut errors = ValidationErrors::new();
        errors.add(
            "Authorization",
            "Authorization must be Basic with base64(client_id:client_secret).",
        );
        errors
    };
    let value = value.to_str().map_err(|_| unreadable())?;
    let Some((scheme, encoded)) = value.trim().split_once(' ') else {
        return Err(unreadable());
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(unreadable());
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| unreadable())?;
    let decoded = String::from_utf8(decoded).map_err(|_| unreadable())?;
    let (id, secret) = decoded.split_once(':').ok_or_else(unreadable)?;
    let form_decoded = |text: &str| -> Result<String, ValidationErrors> {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(&format!("v={text}")).map_err(|_| unreadable())?;
        Ok(pairs.into_iter().next().map(|(_, v)| v).unwrap_or_default())
    };
    Ok(Some((form_decoded(id)?, form_decoded(secret)?)))
}
