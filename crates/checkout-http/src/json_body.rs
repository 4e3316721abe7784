//! A JSON body extractor whose every failure is a ProblemDetails: wrong media type (415),
//! too large (413), not JSON (400, key `Body`), a field of the wrong type (400, keyed by the
//! field's PascalCase path such as `Items[0].Amount`).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest};
use checkout_domain::ValidationErrors;
use serde::de::DeserializeOwned;

use crate::problem::ApiError;

/// The largest JSON body accepted, in bytes.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;

/// A deserialized JSON request body.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

/// `totalTransactionAmount` → `TotalTransactionAmount`; `items[0].amount` → `Items[0].Amount`;
/// `client_id` → `ClientId`.
pub fn pascal_case_path(path: &str) -> String {
    path.split('.')
        .map(|segment| {
            let mut out = String::with_capacity(segment.len());
            let mut upper = true;
            for c in segment.chars() {
                if c == '_' {
                    upper = true;
                } else if upper {
                    out.extend(c.to_uppercase());
                    upper = false;
                } else {
                    out.push(c);
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn is_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| {
            let m = m.trim().to_ascii_lowercase();
            m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
        })
        .unwrap_or(false)
}

/// The 400 of a body that is not one JSON object.
fn not_a_json_object() -> ApiError {
    let mut errors = ValidationErrors::new();
    errors.add("Body", "The request body is not a valid JSON object.");
    ApiError::from(errors)
}

/// Parses `bytes` as `T`, naming the failing field.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Every body of the API is an object; anything else would be reported under a
    // meaningless path such as `[0]`.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(not_a_json_object());
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let mut errors = ValidationErrors::new();
        if let Some(name) = unknown_field(&inner) {
            let field = pascal_case_path(&field_path(&path, &name));
            errors.add(
                field.clone(),
                format!("{field} is not a field of this request."),
            );
        } else if inner.is_syntax() || inner.is_eof() || path == "." || path.is_empty() {
            errors.add("Body", "The request body is not a valid JSON object.");
        } else {
            let field = pascal_case_path(&path);
            errors.add(
                field.clone(),
                format!("{field} has a value of the wrong type or format."),
            );
        }
        ApiError::from(errors)
    })?;
    // Only white space may follow the object (`{} x` is not JSON).
    de.end().map_err(|_| not_a_json_object())?;
    Ok(value)
}

/// The name of the field a body's struct refused as unknown (`#[serde(deny_unknown_fields)]`:
/// every request body refuses what it does not read, so a misspelt field is a 400, not a
/// silently ignored one).
fn unknown_field(error: &serde_json::Error) -> Option<String> {
    if !error.is_data() {
        return None;
    }
    // serde's `Error::unknown_field` message: "unknown field `name`, expected ...".
    let message = error.to_string();
    let rest = message.strip_prefix("unknown field `")?;
    Some(rest[..rest.find('`')?].to_owned())
}

/// The path of field `name` read inside the object at `path` (`.` for the body itself), as
/// serde_path_to_error writes paths (`items[0].amount`).
fn field_path(path: &str, name: &str) -> String {
    match path {
        "" | "." => name.to_owned(),
        _ if path == name || path.ends_with(&format!(".{name}")) => path.to_owned(),
        _ => format!("{path}.{name}"),
    }
}

/// A deserialized JSON request body with the exact bytes it was read from (what an
/// idempotency fingerprint covers). Refused exactly like [`JsonBody`].
#[derive(Debug)]
pub struct JsonBodyWithBytes<T> {
    /// The body.
    pub value: T,
    /// The bytes as received.
    pub bytes: web::Bytes,
}

/// Reads a JSON body's bytes: 415 unless the media type is JSON, 413 over the limit.
fn read_json_bytes(
    req: &HttpRequest,
    payload: &mut Payload,
) -> impl Future<Output = Result<web::Bytes, ApiError>> {
    let json = is_json(req);
    let body = read_bytes(req, payload);
    async move {
        if !json {
            return Err(ApiError::http(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "The request body must be JSON (Content-Type: application/json).",
            ));
        }
        body.await
    }
}

/// Reads a body's bytes, whatever its media type: 413 over the limit.
pub fn read_bytes(
    req: &HttpRequest,
    payload: &mut Payload,
) -> impl Future<Output = Result<web::Bytes, ApiError>> {
    let limit = req
        .app_data::<web::Data<crate::AppState>>()
        .map_or(DEFAULT_MAX_BODY_BYTES, |state| state.max_body_bytes);
    let body = web::Bytes::from_request(req, payload);
    async move {
        body.await.map_err(|e| {
            if e.as_response_error().status_code() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::http(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("The request body is larger than {limit} bytes."),
                )
            } else {
                ApiError::http(
                    StatusCode::BAD_REQUEST,
                    "The request body could not be read.",
                )
            }
        })
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for JsonBody<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = read_json_bytes(req, payload);
        Box::pin(async move { parse_json(&bytes.await?).map(JsonBody) })
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for JsonBodyWithBytes<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = read_json_bytes(req, payload);
        Box::pin(async move {
            let bytes = bytes.await?;
            let value = parse_json(&bytes)?;
            Ok(JsonBodyWithBytes { value, bytes })
        })
    }
}

/// An optional JSON request body: no body at all (and no `Content-Type`) reads as
/// `T::default()`; any body is read and refused exactly like [`JsonBody`].
#[derive(Debug)]
pub struct OptionalJsonBody<T> {
    /// The body, or the default.
    pub value: T,
    /// The bytes as received (empty without a body).
    pub bytes: web::Bytes,
}

impl<T: DeserializeOwned + Default + 'static> FromRequest for OptionalJsonBody<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if req
            .headers()
            .contains_key(actix_web::http::header::CONTENT_TYPE)
        {
            let body = JsonBodyWithBytes::<T>::from_request(req, payload);
            return Box::pin(async move {
                let JsonBodyWithBytes { value, bytes } = body.await?;
                Ok(OptionalJsonBody { value, bytes })
            });
        }
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            match body.await {
                Ok(bytes) if bytes.is_empty() => Ok(OptionalJsonBody {
                    value: T::default(),
                    bytes,
                }),
                _ => Err(ApiError::http(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "The request body must be JSON (Content-Type: application/json).",
                )),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_pascal_case() {
        assert_eq!(
            pascal_case_path("totalTransactionAmount"),
            "TotalTransactionAmount"
        );
        assert_eq!(
            pascal_case_path("items[0].currencyCode"),
            "Items[0].CurrencyCode"
        );
        assert_eq!(pascal_case_path("client_id"), "ClientId");
    }

    /// Found by `cargo fuzz` (start_payment_body): bytes after the object were ignored.
    #[test]
    fn text_after_the_object_is_refused() {
        for body in [&b"{}\""[..], b"{\n\n}\xff\xff", b"{\"culture\":\"es\"} {}"] {
            let error = parse_json::<serde_json::Value>(body).err();
            let Some(ApiError::Checkout(checkout_domain::CheckoutError::Validation(errors))) =
                error
            else {
                panic!("accepted {body:?}");
            };
            assert!(errors.messages("Body").is_some());
        }
        assert!(parse_json::<serde_json::Value>(b" {} \r\n\t").is_ok());
    }

    /// The field keys of a refused body.
    fn refused_keys<T: DeserializeOwned + std::fmt::Debug>(body: &str) -> Vec<String> {
        let Err(ApiError::Checkout(checkout_domain::CheckoutError::Validation(errors))) =
            parse_json::<T>(body.as_bytes())
        else {
            panic!("accepted {body}");
        };
        errors.fields().keys().cloned().collect()
    }

    #[test]
    fn an_unknown_field_is_named_in_pascal_case_with_its_path() {
        use crate::dto::{StartPaymentRequest, TokenRequest};
        assert_eq!(
            refused_keys::<StartPaymentRequest>(r#"{"callbackBackURL": "https://x.example"}"#),
            ["CallbackBackURL"]
        );
        assert_eq!(
            refused_keys::<StartPaymentRequest>(
                r#"{"items": [{"itemCode": "A"}, {"itemCode": "B", "colour": "red"}]}"#
            ),
            ["Items[1].Colour"]
        );
        assert_eq!(
            refused_keys::<TokenRequest>(r#"{"client_id": "a", "grant": "x"}"#),
            ["Grant"]
        );
        // The fields it reads are still read.
        assert!(
            parse_json::<StartPaymentRequest>(br#"{"callbackBackUrl": "https://x.example"}"#)
                .is_ok()
        );
    }
}
