//! Request and response bodies of the JSON API, exactly as the spec names their fields.
//! They convert to and from domain types here; no business rule lives in them.

mod decimal;
mod events;
pub mod patterns;
mod processor;
mod reversal;
pub mod schemas;
mod session;
mod status;
mod token;
mod webhooks;

pub use decimal::JsonDecimal;
pub use events::{webhook_requests, EventBody, EventDispute, EventPageResponse, JsonEventEncoder};
pub use processor::ProcessorEventReceipt;
pub use reversal::{
    AmountRequest, RefundBody, RefundListResponse, RefundRequest, ReversalResponse,
};
pub use session::{
    AdditionalChargeDto, ItemDto, PaymentLinkRequest, PaymentLinkResponse, StartPaymentRequest,
    StartPaymentResponse,
};
pub use status::{CardAttemptRecord, DisputeRecord, PaymentStatusResponse};
pub use token::{TokenForm, TokenRequest, TokenResponse, BEARER, CLIENT_CREDENTIALS};
pub use webhooks::{
    CreatedWebhookEndpointResponse, DeliveryAttemptBody, DeliveryBody, DeliveryPageResponse,
    RedeliveryResponse, RotatedSecretResponse, WebhookEndpointRequest, WebhookEndpointResponse,
};

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// An instant as ISO 8601 in UTC with a `Z`, to the second.
pub fn utc_timestamp(at: OffsetDateTime) -> String {
    let at = at
        .to_offset(time::UtcOffset::UTC)
        .replace_nanosecond(0)
        .unwrap_or(at);
    at.format(&Rfc3339).unwrap_or_default()
}
