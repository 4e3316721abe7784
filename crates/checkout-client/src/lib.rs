#![doc = include_str!("../README.md")]

mod api;
mod client;
mod error;
mod events;
mod money;
mod retry;
mod types;
pub mod webhooks;
mod wire_enum;

#[cfg(test)]
mod openapi_sync;

pub use api::WithOptions;
pub use client::{
    CallOptions, Client, ClientBuilder, IDEMPOTENCY_KEY_HEADER, OPERATION_ID_HEADER,
    REPLAYED_HEADER,
};
pub use error::{
    ApiError, DecodeError, Error, InvalidRequest, NetworkError, Problem, SvcCode,
    IDEMPOTENCY_KEY_REUSED_TYPE, VALIDATION_TYPE,
};
pub use events::EventFeed;
pub use money::{AmountError, Currency, Money, UnknownCurrency};
pub use retry::RetryPolicy;
pub use types::{
    AdditionalCharge, AttemptOutcome, CaptureMethod, CardAttempt, CardBrand, CircuitState,
    CreatedWebhookEndpoint, Culture, Delivery, DeliveryAttempt, DeliveryPage, DeliveryState,
    Dispute, DisputeStatus, Event, EventDispute, EventPage, EventType, Item, PaymentLinkRequest,
    PaymentLinkResponse, PaymentState, PaymentStatus, Redelivery, Refund, RefundList, RefundState,
    Reversal, RotatedSecret, SessionType, StartPaymentRequest, StartPaymentResponse,
    WebhookEndpoint,
};
pub use webhooks::{WebhookError, WebhookHeaders, WebhookVerifier};

/// The decimal type of every amount ([`rust_decimal::Decimal`]).
pub use rust_decimal::Decimal;
