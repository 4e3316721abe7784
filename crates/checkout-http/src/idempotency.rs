//! The `Idempotency-Key` request header of the create routes (IETF httpapi idempotency-key
//! draft): reading it, the request's fingerprint, and the answer with `Idempotent-Replayed`.
//! What a key means (claims, replays, conflicts) is the domain's
//! (`Checkout::create_once`); this module only translates.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use actix_web::http::StatusCode;
use actix_web::{FromRequest, HttpRequest, HttpResponse};
use checkout_domain::ports::SavedResponse;
use checkout_domain::usecases::IdempotentAnswer;
use checkout_domain::values::{IdempotencyKey, RequestFingerprint};
use checkout_domain::{CheckoutError, ValidationErrors};
use serde::Serialize;

use crate::problem::{ApiError, ProblemDetails};

/// The request header.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";
/// The response header set on a replayed response.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// The optional `Idempotency-Key` of a request: `None` without the header. A header sent
/// twice, or a key that is not 1 to 255 visible ASCII characters, is a 400 naming
/// `Idempotency-Key`. The key may be sent bare (`abc-123`) or as the draft's Structured Field
/// string (`"abc-123"`); both are the same key.
#[derive(Debug, Clone)]
pub struct IdempotencyKeyHeader(pub Option<IdempotencyKey>);

/// A 400 naming the header, with `message`.
fn refused(message: &str) -> ApiError {
    let mut errors = ValidationErrors::new();
    errors.add(IdempotencyKey::FIELD, message);
    ApiError::from(errors)
}

/// The content of an RFC 8941 `sf-string` (`"..."` with `\"` and `\\` escapes), or `None`
/// when `s` is not one.
fn sf_string(s: &str) -> Option<String> {
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped @ ('"' | '\\')) => out.push(escaped),
                _ => return None,
            },
            '"' => return None,
            ' '..='~' => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

/// Reads the header of `req`.
pub fn read_key(req: &HttpRequest) -> Result<Option<IdempotencyKey>, ApiError> {
    let mut values = req.headers().get_all(IDEMPOTENCY_KEY_HEADER);
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(refused("Idempotency-Key must be sent at most once."));
    }
    // Bytes outside ASCII become U+FFFD, which the key's own rule refuses.
    let text = String::from_utf8_lossy(value.as_bytes());
    let key = if text.starts_with('"') {
        sf_string(&text).ok_or_else(|| refused("Idempotency-Key is not a well-formed string."))?
    } else {
        text.into_owned()
    };
    IdempotencyKey::parse(&key)
        .map(Some)
        .map_err(ApiError::from)
}

impl FromRequest for IdempotencyKeyHeader {
    type Error = ApiError;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(read_key(req).map(IdempotencyKeyHeader))
    }
}

/// The fingerprint of a request: SHA-256 over its method, its path and the exact bytes of its
/// body. A retry resends the same bytes; anything else (another amount, another route, even
/// the same object re-serialised with other spacing or key order) is another request.
pub fn fingerprint(req: &HttpRequest, body: &[u8]) -> RequestFingerprint {
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    digest.update(req.method().as_str().as_bytes());
    digest.update(b"\0");
    digest.update(req.path().as_bytes());
    digest.update(b"\0");
    digest.update(body);
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(digest.finish().as_ref());
    RequestFingerprint::from_bytes(bytes)
}

/// A JSON response to send and keep: `status` with `body` as `application/json`.
pub fn json_response<T: Serialize>(status: StatusCode, body: &T) -> SavedResponse {
    match serde_json::to_vec(body) {
        Ok(body) => SavedResponse {
            status: status.as_u16(),
            content_type: "application/json".to_owned(),
            body,
        },
        Err(e) => problem_response(&CheckoutError::Unknown(e.into())),
    }
}

/// The ProblemDetails of a use-case error as a response to send and keep. (A fault's 500 is
/// never kept: the domain releases the key.)
pub fn problem_response(error: &CheckoutError) -> SavedResponse {
    match error {
        CheckoutError::Unknown(e) => tracing::error!(error = format!("{e:#}"), "unexpected error"),
        CheckoutError::Unavailable(e) => {
            tracing::warn!(error = format!("{e:#}"), "dependency unavailable");
        }
        _ => {}
    }
    let body = ProblemDetails::from_checkout(error);
    SavedResponse {
        status: body.status,
        content_type: "application/problem+json".to_owned(),
        body: serde_json::to_vec(&body).unwrap_or_default(),
    }
}

/// The HTTP answer of a money route (capture, void, cancel, refund): as [`respond`], and
/// never cached.
pub fn respond_no_store(answer: IdempotentAnswer) -> HttpResponse {
    let mut response = respond(answer);
    response.headers_mut().insert(
        actix_web::http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-store"),
    );
    response
}

/// The HTTP answer of an idempotent create: the response as first sent, with
/// `Idempotent-Replayed: true` when it is a replay.
pub fn respond(answer: IdempotentAnswer) -> HttpResponse {
    match &answer {
        IdempotentAnswer::FreshUnsaved(response, e) => tracing::warn!(
            status = response.status,
            error = format!("{e:#}"),
            "response not kept under its idempotency key; a retry will run again"
        ),
        IdempotentAnswer::Replayed(response) => {
            tracing::info!(status = response.status, "idempotent replay");
        }
        IdempotentAnswer::Fresh(_) => {}
    }
    let replayed = answer.is_replay();
    let response = answer.response();
    let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut builder = HttpResponse::build(status);
    if let Ok(content_type) = HeaderValue::from_str(&response.content_type) {
        builder.insert_header((CONTENT_TYPE, content_type));
    }
    if replayed {
        builder.insert_header((
            HeaderName::from_static(REPLAYED_HEADER),
            HeaderValue::from_static("true"),
        ));
    }
    builder.body(response.body.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_field_strings_unquote() {
        assert_eq!(sf_string(r#""abc-123""#).as_deref(), Some("abc-123"));
        assert_eq!(sf_string(r#""a\"b\\c""#).as_deref(), Some(r#"a"b\c"#));
        assert_eq!(sf_string(r#""""#).as_deref(), Some(""));
        for bad in [
            r#""abc"#,
            r#"abc""#,
            r#""a"b""#,
            r#""a\nb""#,
            "\"a\u{e9}\"",
            "\"",
        ] {
            assert_eq!(sf_string(bad), None, "{bad}");
        }
    }
}
