#![doc = include_str!("../README.md")]

pub mod api;
pub mod auth;
pub mod card_guard;
pub mod client_address;
pub mod dto;
pub mod health;
pub mod idempotency;
pub mod json_body;
pub mod metrics;
pub mod openapi;
pub mod pages;
pub mod problem;
pub mod rate_limit;
pub mod request_context;
pub mod routes;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpResponse, ResponseError};
use checkout_domain::Checkout;
use utoipa_swagger_ui::SwaggerUi;

use crate::problem::ApiError;

/// What every route needs: the use cases, the public keys, the pages, the limits.
pub struct AppState {
    /// The use cases.
    pub checkout: Checkout,
    /// The webhook use cases.
    pub webhooks: checkout_domain::usecases::Webhooks,
    /// The JSON Web Key Set served at `/.well-known/jwks.json`.
    pub jwks: serde_json::Value,
    /// The hosted pages' templates and keys.
    pub pages: pages::Pages,
    /// Rate limits of the token endpoint.
    pub auth_limits: rate_limit::AuthLimits,
    /// The largest request body accepted, bytes; a larger one is a 413 ProblemDetails.
    pub max_body_bytes: usize,
    /// What `GET /health/ready` asks.
    pub readiness: std::sync::Arc<dyn health::ReadinessCheck>,
    /// Whether Swagger UI is served at `/swagger` (`/openapi.json` is served either way).
    pub swagger_ui: bool,
    /// The proxies whose `X-Forwarded-For` names the client's address.
    pub trusted_proxies: client_address::TrustedProxies,
    /// The public base URL as configured, the OpenAPI document's server; `None` when it is not
    /// configured, and the document's server is then relative (the address it was read from).
    pub configured_base_url: Option<String>,
    /// Whether the sandbox's developer routes (`/pay/api/sandbox/...`) are mounted: in a
    /// sandbox only; in production they are unknown addresses (404).
    pub sandbox_routes: bool,
}

async fn not_found() -> HttpResponse {
    ApiError::http(StatusCode::NOT_FOUND, "No resource exists at this address.").error_response()
}

/// 405 with the `Allow` header naming the resource's methods (RFC 9110).
pub(crate) async fn method_not_allowed(allow: String) -> HttpResponse {
    let mut response = ApiError::http(
        StatusCode::METHOD_NOT_ALLOWED,
        "This method is not allowed on this resource.",
    )
    .error_response();
    response.headers_mut().insert(
        actix_web::http::header::ALLOW,
        actix_web::http::header::HeaderValue::try_from(allow)
            .unwrap_or(actix_web::http::header::HeaderValue::from_static("")),
    );
    response
}

/// The Content-Security-Policy of Swagger UI's pages: its own scripts and styles only (its
/// bundle sets inline styles and uses `data:` images), requests to this origin only (the
/// OpenAPI document, "Try it out"), never framed, no forms, no plugins.
pub const SWAGGER_CSP: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; \
     connect-src 'self'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'; \
     object-src 'none'";

/// Gives every response under `/swagger` its own strict Content-Security-Policy, and tells
/// browsers not to frame it, sniff types or send the referrer elsewhere.
async fn swagger_headers(
    req: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let path = req.path();
    let swagger = path == "/swagger" || path.starts_with("/swagger/");
    let mut response = next.call(req).await?;
    if swagger {
        use actix_web::http::header::{self, HeaderValue};
        let headers = response.headers_mut();
        for (name, value) in [
            (header::CONTENT_SECURITY_POLICY, SWAGGER_CSP),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ] {
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
    Ok(response)
}

/// Swagger UI at `/swagger` with the OpenAPI document at `/openapi.json`, or, with
/// `swagger_ui` off, the document alone (and `/swagger` is a 404).
fn api_explorer(
    swagger_ui: bool,
    document: serde_json::Value,
) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        if swagger_ui {
            cfg.route("/swagger", web::get().to(swagger_redirect))
                .service(
                    SwaggerUi::new("/swagger/{_:.*}")
                        .external_url_unchecked("/openapi.json", document),
                );
        } else {
            let document = web::Bytes::from(document.to_string());
            cfg.route(
                "/openapi.json",
                web::get().to(move || {
                    let document = document.clone();
                    async move {
                        HttpResponse::Ok()
                            .content_type("application/json")
                            .body(document)
                    }
                }),
            );
        }
    }
}

async fn swagger_redirect() -> HttpResponse {
    HttpResponse::MovedPermanently()
        .insert_header(("Location", "/swagger/"))
        .finish()
}

/// The whole web application: JSON API, public keys, OpenAPI and Swagger UI, health
/// endpoints, with ProblemDetails for unknown routes and wrong methods, the per-request
/// context middleware, the request metrics and the API's version on every answer
/// ([`openapi::VERSION_HEADER`]).
pub fn build_app(
    state: web::Data<AppState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let max_body_bytes = state.max_body_bytes;
    let swagger_ui = state.swagger_ui;
    let sandbox_routes = state.sandbox_routes;
    let document = routes::document(state.configured_base_url.as_deref());
    App::new()
        .app_data(state)
        .app_data(web::PayloadConfig::new(max_body_bytes))
        .wrap(from_fn(request_context::track))
        .wrap(from_fn(metrics::record))
        .wrap(from_fn(swagger_headers))
        .wrap(
            actix_web::middleware::DefaultHeaders::new()
                .add((openapi::VERSION_HEADER, openapi::API_VERSION)),
        )
        .service(
            web::resource("/health/live")
                .route(web::get().to(health::live))
                .default_service(web::to(|| method_not_allowed("GET".to_owned()))),
        )
        .service(
            web::resource("/health/ready")
                .route(web::get().to(health::ready))
                .default_service(web::to(|| method_not_allowed("GET".to_owned()))),
        )
        .configure(routes::mount_for(sandbox_routes))
        .configure(pages::configure)
        .configure(api_explorer(swagger_ui, document))
        .default_service(web::to(not_found))
}
