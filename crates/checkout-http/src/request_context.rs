//! Per-request context: a correlation GUID (the ProblemDetails `instance`), the merchant's
//! optional `X-idoperacion`, a tracing span holding both, and one log line per request.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;
use uuid::Uuid;

/// The header a merchant may send to trace an operation (spec 4, 5.8).
pub const OPERATION_HEADER: &str = "x-idoperacion";
/// The response header that carries the request's correlation GUID.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

tokio::task_local! {
    static INSTANCE: String;
}

/// The correlation GUID of the request being served (a fresh one outside a request).
pub fn instance_id() -> String {
    INSTANCE
        .try_with(Clone::clone)
        .unwrap_or_else(|_| Uuid::new_v4().to_string())
}

/// Keeps an operation id printable and short before it reaches a log line.
fn sanitize_operation_id(value: &HeaderValue) -> Option<String> {
    let s = value.to_str().ok()?.trim();
    let clean: String = s
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect();
    (!clean.is_empty()).then_some(clean)
}

/// Middleware: runs the request inside a span with its GUID and operation id, and logs one
/// line when it ends (method, route, status, milliseconds). Never logs bodies or headers.
pub async fn track(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let instance = Uuid::new_v4().to_string();
    let operation = req
        .headers()
        .get(OPERATION_HEADER)
        .and_then(sanitize_operation_id)
        .unwrap_or_default();
    let span = tracing::info_span!(
        "request",
        instance = %instance,
        operation_id = %operation,
        method = %req.method(),
        path = %req.path(),
    );
    let started = Instant::now();
    let result = INSTANCE
        .scope(instance.clone(), next.call(req))
        .instrument(span.clone())
        .await;
    let _entered = span.enter();
    match result {
        Ok(mut response) => {
            let status = response.status().as_u16();
            tracing::info!(
                status,
                ms = started.elapsed().as_millis() as u64,
                "request served"
            );
            if let Ok(value) = HeaderValue::from_str(&instance) {
                response
                    .headers_mut()
                    .insert(HeaderName::from_static(REQUEST_ID_HEADER), value);
            }
            Ok(response)
        }
        Err(e) => {
            tracing::warn!(ms = started.elapsed().as_millis() as u64, error = %e, "request failed");
            Err(e)
        }
    }
}
