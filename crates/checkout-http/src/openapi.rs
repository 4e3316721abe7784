//! The OpenAPI 3.1 document, generated from the handlers, and the Swagger UI.

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::api;
use crate::dto;
use crate::problem::ProblemDetails;

/// The API description served at `/openapi.json`.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Hosted Checkout API",
        version = "1.0.0",
        description = "Create payment sessions for a hosted checkout page or shareable payment links, and read their state (by id, or by merchant reference); withdraw unpaid sessions; capture, void and refund payments. Every error is a ProblemDetails body; service codes SVC_001..SVC_011."
    ),
    paths(
        api::token::issue_token,
        api::start_payment::start_payment,
        api::payment_link::generate_payment_link,
        api::status::payment_status,
        api::events::list_events,
        api::events::redeliver_event,
        api::webhook_endpoints::create_endpoint,
        api::webhook_endpoints::list_endpoints,
        api::webhook_endpoints::delete_endpoint,
        api::webhook_endpoints::rotate_secret,
        api::webhook_endpoints::list_deliveries,
        api::by_reference::payments_by_reference,
        api::cancel::cancel_payment,
        api::capture::capture_payment,
        api::capture::void_payment,
        api::refunds::create_refund,
        api::refunds::list_refunds,
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
        dto::EventBody,
        dto::EventPageResponse,
        dto::WebhookEndpointRequest,
        dto::WebhookEndpointResponse,
        dto::CreatedWebhookEndpointResponse,
        dto::RotatedSecretResponse,
        dto::DeliveryBody,
        dto::DeliveryAttemptBody,
        dto::RedeliveryResponse,
        dto::AmountRequest,
        dto::RefundBody,
        dto::ReversalResponse,
        dto::RefundListResponse,
        dto::ItemDto,
        dto::AdditionalChargeDto,
    )),
    modifiers(&BearerScheme),
    tags(
        (name = "Security", description = "Access tokens (OAuth 2.0 client credentials)"),
        (name = "Payments", description = "Payment sessions, payment links and status"),
        (name = "Events", description = "The terminal's payment events, in order: the feed to catch up with, and redelivery"),
        (name = "Webhooks", description = "Endpoints that receive the events as Standard Webhooks (signed with HMAC-SHA256), and their deliveries log"),
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

/// The document as a value.
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
