//! Merchant webhooks: the endpoints a terminal registers, the deliveries of its events to
//! them, the retry schedule, each endpoint's circuit, and the limits that keep one merchant
//! from taking the delivery workers from the others. The ports are
//! [`WebhookStore`](crate::ports::WebhookStore), [`WebhookSecrets`](crate::ports::WebhookSecrets),
//! [`WebhookTransport`](crate::ports::WebhookTransport) and
//! [`EventEncoder`](crate::ports::EventEncoder); the use cases are
//! [`Webhooks`](crate::usecases::Webhooks).

mod circuit;
mod delivery;
mod endpoint;
mod limits;
mod schedule;

pub use circuit::{
    AttemptSummary, CircuitEvent, CircuitPolicy, CircuitState, Disabled, EndpointHealth,
};
pub use delivery::{
    AttemptOutcome, AttemptReport, AttemptResult, DeliveryCursor, DeliveryLog, DeliveryPage,
    DeliveryState, DueDelivery, InvalidDeliveryCursor, LoggedAttempt, NextStep, WebhookBacklog,
};
pub use endpoint::{EventFilter, RevealedSecret, SealedSecret, WebhookEndpoint};
pub use limits::{FairShare, Redelivered, RedeliveryLimits};
pub use schedule::{RetrySchedule, ScheduleError};
