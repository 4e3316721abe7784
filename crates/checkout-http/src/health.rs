//! Health endpoints for load balancers and orchestrators, unauthenticated and cheap:
//! `GET /health/live` (the process answers) and `GET /health/ready` (its dependencies
//! answer; 503 ProblemDetails otherwise).

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use async_trait::async_trait;
use serde_json::json;

use crate::problem::ApiError;
use crate::AppState;

/// Whether the service's dependencies are ready to serve requests.
#[async_trait]
pub trait ReadinessCheck: Send + Sync {
    /// `Ok` when the service can serve requests now.
    ///
    /// MUST answer within a couple of seconds whatever the state of the dependencies (a load
    /// balancer polls it), MUST change nothing, and MUST NOT put credentials (a database
    /// password, a URL carrying one) in the error, which is logged.
    async fn check(&self) -> anyhow::Result<()>;
}

/// `GET /health/live`: 200 whenever the process answers HTTP.
pub async fn live() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "live" }))
}

/// `GET /health/ready`: 200 when [`ReadinessCheck::check`] passes, else 503 ProblemDetails
/// (the cause is logged, not shown).
pub async fn ready(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    match state.readiness.check().await {
        Ok(()) => Ok(HttpResponse::Ok().json(json!({ "status": "ready" }))),
        Err(e) => {
            tracing::warn!(error = format!("{e:#}"), "not ready");
            Err(ApiError::http(
                StatusCode::SERVICE_UNAVAILABLE,
                "The service is not ready: its database cannot be reached or its migrations \
                 are not applied.",
            ))
        }
    }
}
