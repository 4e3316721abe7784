//! ProblemDetails bodies (spec 2.6, 7): the one place that turns errors into HTTP answers.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use checkout_domain::ports::ProviderUnavailable;
use checkout_domain::{AuthFailure, CheckoutError, IdempotencyConflict, SvcCode, ValidationErrors};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use utoipa::ToSchema;

use crate::request_context;

/// The `type` of a 400 validation answer (RFC 7231 section 6.5.1).
pub const VALIDATION_TYPE: &str = "https://tools.ietf.org/html/rfc7231#section-6.5.1";
/// The `title` of a 400 validation answer.
pub const VALIDATION_TITLE: &str = "Validation failed";

/// The `type` of a 422 for an `Idempotency-Key` reused with another request: 422
/// Unprocessable Entity (RFC 4918 section 11.2), as the idempotency-key draft answers it.
pub const IDEMPOTENCY_KEY_REUSED_TYPE: &str = "https://tools.ietf.org/html/rfc4918#section-11.2";
/// The `type` of a 409 for an `Idempotency-Key` whose first request is still running:
/// 409 Conflict (RFC 7231 section 6.5.8).
pub const IDEMPOTENCY_IN_PROGRESS_TYPE: &str = "https://tools.ietf.org/html/rfc7231#section-6.5.8";
/// The `type` of a 422 for a limit reached (the most webhook endpoints a terminal may have):
/// 422 Unprocessable Entity (RFC 4918 section 11.2).
pub const LIMIT_REACHED_TYPE: &str = "https://tools.ietf.org/html/rfc4918#section-11.2";

/// True when an external identity provider could not be reached (its adapter marks the error
/// with [`ProviderUnavailable`]).
fn identity_unavailable(e: &anyhow::Error) -> bool {
    e.downcast_ref::<ProviderUnavailable>().is_some()
        || e.chain().any(|cause| cause.is::<ProviderUnavailable>())
}

/// True when `error` means "a dependency cannot be reached right now" (answered 503, not
/// 500): the adapter marked its cause (`CheckoutError::Unavailable`).
pub fn is_temporarily_unavailable(error: &CheckoutError) -> bool {
    matches!(error, CheckoutError::Unavailable(_))
}

/// Seconds a client is asked to wait before retrying after a 503.
const RETRY_AFTER_UNAVAILABLE_SECS: u32 = 1;

/// An error body, `application/problem+json`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProblemDetails {
    /// The service error code (e.g. `SVC_001`) when one applies, else an RFC reference URL.
    #[serde(rename = "type")]
    pub kind: String,
    /// Short title.
    pub title: String,
    /// HTTP status code.
    pub status: u16,
    /// Explanation.
    pub detail: String,
    /// Correlation identifier (a GUID), also written in the request's log line.
    pub instance: String,
    /// Validation 400 only: PascalCase field name → messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<BTreeMap<String, Vec<String>>>,
    /// SVC_001 only (an RFC 9457 extension member): the caller's existing session that holds
    /// the `transactionReferenceNumber`, to query with GET /pay/api/payment/{checkoutSessionId}.
    #[serde(rename = "checkoutSessionId", skip_serializing_if = "Option::is_none")]
    #[schema(example = "9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60")]
    pub checkout_session_id: Option<String>,
}

/// Every error a route can answer with.
#[derive(Debug)]
pub enum ApiError {
    /// A use-case error.
    Checkout(CheckoutError),
    /// A problem with the HTTP request itself (route, method, media type, size).
    Http {
        /// The status.
        status: StatusCode,
        /// The detail.
        detail: String,
    },
    /// Too many calls: 429 with `Retry-After`.
    TooManyRequests {
        /// Seconds until a call would be allowed.
        retry_after_secs: u64,
    },
}

impl From<CheckoutError> for ApiError {
    fn from(e: CheckoutError) -> Self {
        ApiError::Checkout(e)
    }
}

impl From<ValidationErrors> for ApiError {
    fn from(e: ValidationErrors) -> Self {
        ApiError::Checkout(CheckoutError::Validation(e))
    }
}

impl ApiError {
    /// An HTTP-level problem.
    pub fn http(status: StatusCode, detail: impl Into<String>) -> Self {
        ApiError::Http {
            status,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::Checkout(e) => write!(f, "{e}"),
            ApiError::Http { status, detail } => write!(f, "{status}: {detail}"),
            ApiError::TooManyRequests { retry_after_secs } => {
                write!(f, "429: retry after {retry_after_secs} s")
            }
        }
    }
}

/// The RFC reference and title of an HTTP status without a service code.
fn rfc_type_and_title(status: StatusCode) -> (&'static str, &'static str) {
    match status.as_u16() {
        400 => (VALIDATION_TYPE, VALIDATION_TITLE),
        401 => (
            "https://tools.ietf.org/html/rfc7235#section-3.1",
            "Unauthorized",
        ),
        404 => (
            "https://tools.ietf.org/html/rfc7231#section-6.5.4",
            "Not Found",
        ),
        405 => (
            "https://tools.ietf.org/html/rfc7231#section-6.5.5",
            "Method Not Allowed",
        ),
        413 => (
            "https://tools.ietf.org/html/rfc7231#section-6.5.11",
            "Payload Too Large",
        ),
        415 => (
            "https://tools.ietf.org/html/rfc7231#section-6.5.13",
            "Unsupported Media Type",
        ),
        429 => (
            "https://tools.ietf.org/html/rfc6585#section-4",
            "Too Many Requests",
        ),
        503 => (
            "https://tools.ietf.org/html/rfc7231#section-6.6.4",
            "Service Unavailable",
        ),
        _ => (
            "https://tools.ietf.org/html/rfc7231#section-6.6.1",
            "An error occurred while processing your request.",
        ),
    }
}

impl ProblemDetails {
    fn plain(status: StatusCode, detail: String) -> Self {
        let (kind, title) = rfc_type_and_title(status);
        ProblemDetails {
            kind: kind.to_owned(),
            title: title.to_owned(),
            status: status.as_u16(),
            detail,
            instance: request_context::instance_id(),
            errors: None,
            checkout_session_id: None,
        }
    }

    /// The body of a service error code.
    pub fn for_code(code: SvcCode, detail: String) -> Self {
        let spec = code.spec();
        ProblemDetails {
            kind: spec.code.to_owned(),
            title: spec.title.to_owned(),
            status: spec.http_status,
            detail,
            instance: request_context::instance_id(),
            errors: None,
            checkout_session_id: None,
        }
    }

    /// The body of any error.
    pub fn from_error(error: &ApiError) -> Self {
        match error {
            ApiError::Http { status, detail } => Self::plain(*status, detail.clone()),
            ApiError::TooManyRequests { retry_after_secs } => Self::plain(
                StatusCode::TOO_MANY_REQUESTS,
                format!("Too many token requests; retry after {retry_after_secs} seconds."),
            ),
            ApiError::Checkout(error) => Self::from_checkout(error),
        }
    }

    /// The body of a use-case error.
    pub fn from_checkout(error: &CheckoutError) -> Self {
        match error {
            CheckoutError::Validation(errors) => ProblemDetails {
                errors: Some(errors.fields().clone()),
                ..Self::plain(
                    StatusCode::BAD_REQUEST,
                    "One or more fields of the request are missing or invalid.".to_owned(),
                )
            },
            CheckoutError::Unauthenticated(failure) => Self::plain(
                StatusCode::UNAUTHORIZED,
                match failure {
                    AuthFailure::InvalidCredentials => "The client credentials are invalid.",
                    AuthFailure::MissingToken => "A bearer token is required.",
                    AuthFailure::ExpiredToken => "The bearer token has expired.",
                    AuthFailure::InvalidToken => "The bearer token is not valid.",
                    AuthFailure::MissingRole => "The bearer token lacks the role SvcTerminal.",
                }
                .to_owned(),
            ),
            CheckoutError::Service {
                code,
                detail,
                session,
            } => ProblemDetails {
                checkout_session_id: session.as_ref().map(ToString::to_string),
                ..Self::for_code(*code, detail.clone())
            },
            CheckoutError::Idempotency(conflict) => {
                let (status, kind, title, detail) = match conflict {
                    IdempotencyConflict::KeyReused => (
                        StatusCode::UNPROCESSABLE_ENTITY,
                        IDEMPOTENCY_KEY_REUSED_TYPE,
                        "Idempotency-Key is already used",
                        "This Idempotency-Key was already used with a different request \
                         (another route or another body). Use a new key for a new request; \
                         resend the first request unchanged to get its response again.",
                    ),
                    IdempotencyConflict::InProgress => (
                        StatusCode::CONFLICT,
                        IDEMPOTENCY_IN_PROGRESS_TYPE,
                        "A request is outstanding for this Idempotency-Key",
                        "The first request with this Idempotency-Key is still being \
                         processed. Retry shortly to get its response.",
                    ),
                };
                ProblemDetails {
                    kind: kind.to_owned(),
                    title: title.to_owned(),
                    detail: detail.to_owned(),
                    ..Self::plain(status, String::new())
                }
            }
            CheckoutError::NotFound(detail) => {
                Self::plain(StatusCode::NOT_FOUND, (*detail).to_owned())
            }
            CheckoutError::LimitReached(detail) => ProblemDetails {
                kind: LIMIT_REACHED_TYPE.to_owned(),
                title: "Limit reached".to_owned(),
                ..Self::plain(StatusCode::UNPROCESSABLE_ENTITY, detail.clone())
            },
            CheckoutError::TooManyRequests { detail, .. } => {
                Self::plain(StatusCode::TOO_MANY_REQUESTS, detail.clone())
            }
            CheckoutError::Unavailable(e) if identity_unavailable(e) => Self::plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "The identity provider cannot be reached right now. Retry shortly.".to_owned(),
            ),
            CheckoutError::Unavailable(_) => Self::plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "The database cannot be reached right now (for example during a failover). \
                 The request may or may not have taken effect: retry it shortly, with the \
                 same Idempotency-Key for a create."
                    .to_owned(),
            ),
            CheckoutError::Unknown(_) => Self::plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "An unexpected error occurred. Quote the instance when contacting support."
                    .to_owned(),
            ),
        }
    }

    /// The HTTP answer carrying this body.
    pub fn into_response(self) -> HttpResponse {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = HttpResponse::build(status);
        response.content_type("application/problem+json");
        if status == StatusCode::UNAUTHORIZED {
            response.insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer")));
        }
        response.json(self)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        let status = ProblemDetails::from_error(self).status;
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let body = ProblemDetails::from_error(self);
        match self {
            ApiError::Checkout(CheckoutError::Unavailable(e)) => {
                tracing::warn!(instance = %body.instance, error = format!("{e:#}"), "dependency unavailable");
            }
            ApiError::Checkout(CheckoutError::Unknown(e)) => {
                tracing::error!(instance = %body.instance, error = format!("{e:#}"), "unexpected error");
            }
            ApiError::Checkout(CheckoutError::Unauthenticated(failure)) => {
                tracing::info!(instance = %body.instance, reason = %failure, "authentication refused");
            }
            _ => {}
        }
        let mut response = body.into_response();
        if let ApiError::TooManyRequests { retry_after_secs }
        | ApiError::Checkout(CheckoutError::TooManyRequests {
            retry_after_secs, ..
        }) = self
        {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from((*retry_after_secs).max(1)),
            );
        } else if response.status() == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(RETRY_AFTER_UNAVAILABLE_SECS),
            );
        }
        response
    }
}
