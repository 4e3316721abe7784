//! The OpenAPI 3.1 document around the route table's operations ([`crate::routes`]): its
//! info, schemas, security schemes, servers and webhooks, and the parameters and error
//! answers the handlers' `#[utoipa::path]` share. A leaf: it names no handler.

use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::schema::{KnownFormat, Schema, SchemaFormat, Type};
use utoipa::openapi::security::{
    ClientCredentials, Flow, Http, HttpAuthScheme, OAuth2, Scopes, SecurityRequirement,
    SecurityScheme,
};
use utoipa::openapi::{RefOr, Server};
use utoipa::{Modify, OpenApi};

use crate::dto;
use crate::dto::patterns::Patterns;
use crate::problem::ProblemDetails;

/// The API description served at `/openapi.json`.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Hosted Checkout API",
        contact(name = "Hosted checkout support (cite checkoutSessionId, transactionReferenceNumber, internalTransactionReferenceNumber and X-idoperacion)"),
        description = "Create payment sessions for a hosted checkout page or shareable payment links, and read their state (by id, or by merchant reference); withdraw unpaid sessions; capture, void and refund payments. Every error is a ProblemDetails body; service codes SVC_001..SVC_011. Every answer carries the API's version in `API-Version` (this document's `info.version`); what may change within a version and how a breaking change is introduced: docs/compatibility.md; every change: CHANGELOG.md."
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
        dto::ProcessorEventReceipt,
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
    tags(
        (name = "Security", description = "Access tokens (OAuth 2.0 client credentials)"),
        (name = "Payments", description = "Payment sessions, payment links and status"),
        (name = "Events", description = "The terminal's payment events, in order: the feed to catch up with, and redelivery"),
        (name = "Webhooks", description = "Endpoints that receive the events as Standard Webhooks (signed with HMAC-SHA256), and their deliveries log"),
        (name = "Processor", description = "The card processor's own events (its signed webhooks): not for merchants"),
        (name = "Sandbox", description = "Developer tools of the sandbox: pay with a test card, answer a 3DS challenge, expire a session or settle it now. Sandbox only: every one answers 404 in production"),
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

/// The token route as an OAuth 2.0 client-credentials flow (`oauth2`), which every operation
/// behind the bearer token also accepts: Swagger UI, Postman and OAuth libraries then fetch
/// and renew tokens by themselves. The token URL is absolute with a configured public base
/// URL, else relative to the document.
fn client_credentials_flow(doc: &mut utoipa::openapi::OpenApi, public_base_url: Option<&str>) {
    let token_url = format!(
        "{}{}",
        public_base_url.unwrap_or_default().trim_end_matches('/'),
        PUBLIC_OPERATIONS[0]
    );
    let mut oauth2 = OAuth2::new([Flow::ClientCredentials(ClientCredentials::new(
        token_url,
        Scopes::new(),
    ))]);
    oauth2.description = Some(
        "OAuth 2.0 client credentials (RFC 6749 section 4.4) at the token route; the token \
         it issues is the bearer token"
            .to_owned(),
    );
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme("oauth2", SecurityScheme::OAuth2(oauth2));
    for operation in operations_mut(doc) {
        let Some(security) = operation.security.as_mut() else {
            continue;
        };
        if !security.is_empty() {
            security.push(SecurityRequirement::new("oauth2", Vec::<String>::new()));
        }
    }
}

/// Every operation of the document.
fn operations_mut(
    doc: &mut utoipa::openapi::OpenApi,
) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    doc.paths.paths.values_mut().flat_map(|item| {
        [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
    })
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
        for operation in operations_mut(openapi) {
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

/// The API's version: the release's (the workspace's crate version). It is `info.version` and
/// every answer's [`VERSION_HEADER`]; docs/compatibility.md says how it moves.
pub const API_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The header that carries [`API_VERSION`] on every answer.
pub const VERSION_HEADER: &str = "API-Version";

/// The document's servers: the configured public base URL, else the address the document was
/// read from (`/`, relative: Swagger UI's "Try it out" then works on any host and port).
fn servers(public_base_url: Option<&str>) -> Vec<Server> {
    let server = match public_base_url {
        Some(base) => {
            let mut server = Server::new(base.trim_end_matches('/'));
            server.description = Some("This deployment's public base URL".to_owned());
            server
        }
        None => {
            let mut server = Server::new("/");
            server.description = Some(
                "The address this document was read from (no public base URL is configured; \
                 the sandbox of `checkout serve` answers at http://127.0.0.1:8080)"
                    .to_owned(),
            );
            server
        }
    };
    vec![server]
}

/// The whole document: [`ApiDoc`] around `routes` (the route table's operations), with the
/// shared modifications applied, the servers for `public_base_url`, and the webhooks.
pub fn document(
    routes: utoipa::openapi::OpenApi,
    public_base_url: Option<&str>,
) -> serde_json::Value {
    let mut doc = ApiDoc::openapi();
    doc.merge(routes);
    doc.info.version = API_VERSION.to_owned();
    let modifiers: [&dyn Modify; 6] = [
        &BearerScheme,
        &PublicOperations,
        &UniqueParameters,
        &ExactAmounts,
        &Patterns,
        &OptionalBodies,
    ];
    for modifier in modifiers {
        modifier.modify(&mut doc);
    }
    client_credentials_flow(&mut doc, public_base_url);
    doc.servers = Some(servers(public_base_url));
    let mut value = serde_json::to_value(&doc).unwrap_or_default();
    value["webhooks"] = crate::dto::webhook_requests();
    value
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
