//! The OpenAPI 3.1 document, generated from the handlers, and the Swagger UI.

use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::schema::{KnownFormat, Schema, SchemaFormat, Type};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{RefOr, Server};
use utoipa::{Modify, OpenApi};

use crate::api;
use crate::dto;
use crate::dto::patterns::Patterns;
use crate::problem::ProblemDetails;

/// The API description served at `/openapi.json`.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Hosted Checkout API",
        version = "1.0.0",
        contact(name = "Hosted checkout support (cite checkoutSessionId, transactionReferenceNumber, internalTransactionReferenceNumber and X-idoperacion)"),
        description = "Create payment sessions for a hosted checkout page or shareable payment links, and read their state (by id, or by merchant reference); withdraw unpaid sessions; capture, void and refund payments. Every error is a ProblemDetails body; service codes SVC_001..SVC_011."
    ),
    paths(
        api::token::issue_token,
        api::start_payment::start_payment,
        api::payment_link::generate_payment_link,
        api::status::payment_status,
        api::qr::payment_link_qr,
        api::events::list_events,
        api::events::redeliver_event,
        api::webhook_endpoints::create_endpoint,
        api::webhook_endpoints::list_endpoints,
        api::webhook_endpoints::delete_endpoint,
        api::webhook_endpoints::rotate_secret,
        api::webhook_endpoints::enable_endpoint,
        api::webhook_endpoints::list_deliveries,
        api::by_reference::payments_by_reference,
        api::cancel::cancel_payment,
        api::capture::capture_payment,
        api::capture::void_payment,
        api::refunds::create_refund,
        api::refunds::list_refunds,
        api::processor_events::receive_processor_event,
        api::jwks::jwks,
    ),
    components(schemas(
        ProblemDetails,
        dto::TokenRequest,
        dto::TokenResponse,
        dto::StartPaymentRequest,
        dto::StartPaymentResponse,
        dto::PaymentLinkRequest,
        dto::PaymentLinkResponse,
        dto::PaymentStatusResponse,
        dto::CardAttemptRecord,
        dto::DisputeRecord,
        dto::EventDispute,
        dto::EventBody,
        api::processor_events::ProcessorEventReceipt,
        dto::EventPageResponse,
        dto::WebhookEndpointRequest,
        dto::WebhookEndpointResponse,
        dto::CreatedWebhookEndpointResponse,
        dto::RotatedSecretResponse,
        dto::DeliveryPageResponse,
        dto::DeliveryBody,
        dto::DeliveryAttemptBody,
        dto::RedeliveryResponse,
        dto::AmountRequest,
        dto::RefundRequest,
        dto::RefundBody,
        dto::ReversalResponse,
        dto::RefundListResponse,
        dto::ItemDto,
        dto::AdditionalChargeDto,
        dto::schemas::CurrencyCode,
        dto::schemas::Culture,
        dto::schemas::PaymentState,
        dto::schemas::PaymentStateCode,
        dto::schemas::SessionType,
        dto::schemas::LedgerStateName,
        dto::schemas::DisputeStatusName,
        dto::schemas::EventTypeName,
        dto::schemas::EventTypeFilter,
        dto::schemas::CardBrandName,
        dto::schemas::CardAttemptOutcome,
        dto::schemas::DeliveryStateName,
        dto::schemas::CircuitStateName,
    )),
    modifiers(&BearerScheme, &PublicOperations, &UniqueParameters, &ExactAmounts, &Patterns, &OptionalBodies, &SandboxServer),
    tags(
        (name = "Security", description = "Access tokens (OAuth 2.0 client credentials)"),
        (name = "Payments", description = "Payment sessions, payment links and status"),
        (name = "Events", description = "The terminal's payment events, in order: the feed to catch up with, and redelivery"),
        (name = "Webhooks", description = "Endpoints that receive the events as Standard Webhooks (signed with HMAC-SHA256), and their deliveries log"),
        (name = "Processor", description = "The card processor's own events (its signed webhooks): not for merchants"),
    )
)]
pub struct ApiDoc;

/// Adds the `bearer` JWT security scheme.
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut http = Http::new(HttpAuthScheme::Bearer);
        http.bearer_format = Some("JWT".to_owned());
        components.add_security_scheme("bearer", SecurityScheme::Http(http));
    }
}

/// The operations anyone may call, marked `security: []` (no bearer token).
const PUBLIC_OPERATIONS: [&str; 3] = [
    "/api/public/security/auth",
    "/.well-known/jwks.json",
    "/pay/api/processor-events",
];

/// Marks [`PUBLIC_OPERATIONS`] as needing no credentials.
struct PublicOperations;

impl Modify for PublicOperations {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for path in PUBLIC_OPERATIONS {
            if let Some(item) = openapi.paths.paths.get_mut(path) {
                for operation in [&mut item.get, &mut item.post].into_iter().flatten() {
                    operation.security = Some(Vec::new());
                }
            }
        }
    }
}

/// Each operation's parameters unique by name and location, the first kept: utoipa's actix
/// extras add `{checkoutSessionId}` again, undocumented, from the handler's `web::Path<String>`,
/// since they match it with a parameter written inline but not with one of an `IntoParams` type
/// such as [`params::SessionPath`].
struct UniqueParameters;

impl Modify for UniqueParameters {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.delete,
            ];
            for operation in operations.into_iter().flatten() {
                let Some(parameters) = operation.parameters.as_mut() else {
                    continue;
                };
                let mut seen: Vec<(String, ParameterIn)> = Vec::new();
                parameters.retain(|p| {
                    let key = (p.name.clone(), p.parameter_in.clone());
                    let first = !seen.contains(&key);
                    if first {
                        seen.push(key);
                    }
                    first
                });
            }
        }
    }
}

/// Amounts are exact decimals written as JSON numbers: `type: number` with no `format`
/// (`double` would tell generators to use binary floats) and no `multipleOf` (the number of
/// decimal places depends on the currency: docs/currencies.md).
struct ExactAmounts;

impl Modify for ExactAmounts {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        if let Some(components) = openapi.components.as_mut() {
            for schema in components.schemas.values_mut() {
                strip_number_formats(schema);
            }
        }
    }
}

/// Removes `format` from every `type: number` schema inside `schema`.
fn strip_number_formats(schema: &mut RefOr<Schema>) {
    let RefOr::T(schema) = schema else { return };
    match schema {
        Schema::Object(object) => {
            if object.schema_type == Type::Number.into()
                && object.format == Some(SchemaFormat::KnownFormat(KnownFormat::Double))
            {
                object.format = None;
            }
            object
                .properties
                .values_mut()
                .for_each(strip_number_formats);
        }
        Schema::Array(array) => {
            if let utoipa::openapi::schema::ArrayItems::RefOrSchema(items) = &mut array.items {
                strip_number_formats(items);
            }
        }
        Schema::AllOf(all) => all.items.iter_mut().for_each(strip_number_formats),
        Schema::OneOf(one) => one.items.iter_mut().for_each(strip_number_formats),
        Schema::AnyOf(any) => any.items.iter_mut().for_each(strip_number_formats),
        _ => {}
    }
}

/// An optional request body (`Option<T>` in `request_body`) is `required: false` with `T`'s
/// schema: utoipa also makes its schema nullable, but a JSON `null` body is a 400.
struct OptionalBodies;

impl Modify for OptionalBodies {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for operation in [&mut item.post, &mut item.put].into_iter().flatten() {
                let Some(body) = operation.request_body.as_mut() else {
                    continue;
                };
                for content in body.content.values_mut() {
                    if let Some(RefOr::T(Schema::OneOf(one))) = &content.schema {
                        let not_null = one.items.iter().find(|s| match s {
                            RefOr::T(Schema::Object(o)) => o.schema_type != Type::Null.into(),
                            _ => true,
                        });
                        if one.items.len() == 2 {
                            content.schema = not_null.cloned();
                        }
                    }
                }
            }
        }
    }
}

/// The sandbox's default address as the document's server.
struct SandboxServer;

impl Modify for SandboxServer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let mut sandbox = Server::new("http://127.0.0.1:8080");
        sandbox.description = Some(
            "The sandbox started by `checkout serve` with no configuration; a deployment \
             answers at its own public base URL"
                .to_owned(),
        );
        openapi.servers = Some(vec![sandbox]);
    }
}

/// The document as a value.
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The request parameters that several operations document alike, each written once and listed
/// by name in the operations' `params(...)`.
pub mod params {
    /// The session an operation is about, in its path.
    #[derive(utoipa::IntoParams)]
    #[into_params(parameter_in = Path)]
    pub struct SessionPath {
        /// Session identifier (returned by the create routes)
        #[param(
            rename = "checkoutSessionId",
            example = "9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60"
        )]
        pub checkout_session_id: String,
    }

    /// The merchant's operation id, which the service echoes and logs with the request.
    #[derive(utoipa::IntoParams)]
    #[into_params(parameter_in = Header)]
    pub struct OperationId {
        /// Merchant operation id for tracing (a UUID per request is recommended)
        #[param(
            rename = "X-idoperacion",
            example = "3f1c9a52-8d4e-4b7a-9e21-5c6d7e8f9a0b"
        )]
        pub x_idoperacion: Option<String>,
    }

    /// The `Idempotency-Key` of the two create routes (its pattern is set by
    /// [`Patterns`](crate::dto::patterns::Patterns)).
    #[derive(utoipa::IntoParams)]
    #[into_params(parameter_in = Header)]
    pub struct CreateIdempotencyKey {
        // One line in the document: a `///` comment would be one line per comment line.
        #[doc = "Optional (IETF httpapi idempotency-key draft): 1 to 255 visible ASCII \
            characters, bare or as a quoted string, scoped to the token's terminal. A retry \
            with the same key and the same request (method, path and exact body bytes) within \
            24 hours gets the first response again (same status and body) with \
            `Idempotent-Replayed: true`, and creates nothing; the same key with another request \
            is 422; a retry while the first still runs is 409. Successes and 4xx answers are \
            kept; a 5xx is not (the retry runs again). Without it, a repeated request is a new \
            request (a reused reference is SVC_001)."]
        #[param(
            rename = "Idempotency-Key",
            example = "8e03978e-40d5-43e8-bc93-6894a57f9324"
        )]
        pub idempotency_key: Option<String>,
    }

    /// The `Idempotency-Key` of capture, void and cancel (its pattern is set by
    /// [`Patterns`](crate::dto::patterns::Patterns)).
    #[derive(utoipa::IntoParams)]
    #[into_params(parameter_in = Header)]
    pub struct ReversalIdempotencyKey {
        // One line in the document: a `///` comment would be one line per comment line.
        #[doc = "Optional, as on the create routes (1 to 255 visible ASCII characters, scoped             to the token's terminal; the same key with another request is 422, a retry while             the first still runs is 409). The key names one operation of the session for             good: a retry never makes a second one at the processor, whatever became of the             first request. An answer the processor has settled is replayed for 24 hours with             `Idempotent-Replayed: true`; one it has not confirmed yet is not kept, so a retry             answers the operation as it stands then."]
        #[param(rename = "Idempotency-Key", example = "capture-1001-1")]
        pub idempotency_key: Option<String>,
    }
}

/// The error answers that several operations document alike, each written once and listed by
/// name in the operations' `responses(...)`.
pub mod responses {
    use crate::problem::ProblemDetails;

    /// Every operation behind the bearer token: 401 and 500.
    #[derive(utoipa::IntoResponses)]
    pub enum BearerErrors {
        /// The token is missing, expired, revoked or not the service's.
        #[response(
            status = 401,
            description = "Missing or invalid bearer token",
            content_type = "application/problem+json"
        )]
        Unauthorized(ProblemDetails),
        /// An unexpected error, logged with the `instance`.
        #[response(
            status = 500,
            description = "Unexpected error",
            content_type = "application/problem+json"
        )]
        Unexpected(ProblemDetails),
    }

    /// Every operation that reads a JSON body: 413 and 415.
    #[derive(utoipa::IntoResponses)]
    pub enum JsonBodyErrors {
        /// The body is larger than `max_body_bytes`.
        #[response(
            status = 413,
            description = "Body larger than the configured limit (64 KiB by default)",
            content_type = "application/problem+json"
        )]
        TooLarge(ProblemDetails),
        /// The body is not `application/json`.
        #[response(
            status = 415,
            description = "Body is not JSON",
            content_type = "application/problem+json"
        )]
        NotJson(ProblemDetails),
    }

    /// Every operation on one of the caller's sessions: 404 SVC_007.
    #[derive(utoipa::IntoResponses)]
    pub enum SessionNotFound {
        /// No such session, or another terminal's.
        #[response(
            status = 404,
            description = "SVC_007 payment session not found (or another terminal's)",
            content_type = "application/problem+json"
        )]
        NotFound(ProblemDetails),
    }

    /// Every operation that takes an `Idempotency-Key`: 409 while the first request runs.
    #[derive(utoipa::IntoResponses)]
    pub enum IdempotencyInProgress {
        /// The first request with the key has not finished.
        #[response(
            status = 409,
            description = "The first request with this Idempotency-Key is still running",
            content_type = "application/problem+json"
        )]
        InProgress(ProblemDetails),
    }
}
