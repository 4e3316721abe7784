//! Merchant webhooks: the endpoints a terminal registers, the deliveries of its events to
//! them, and the retry schedule. The ports are
//! [`WebhookStore`](crate::ports::WebhookStore), [`WebhookSecrets`](crate::ports::WebhookSecrets),
//! [`WebhookTransport`](crate::ports::WebhookTransport) and
//! [`EventEncoder`](crate::ports::EventEncoder); the use cases are
//! [`Webhooks`](crate::usecases::Webhooks).

mod delivery;
mod endpoint;
mod schedule;

pub use delivery::{
    AttemptResult, DeliveryLog, DeliveryState, DueDelivery, LoggedAttempt, NextStep, WebhookBacklog,
};
pub use endpoint::{EventFilter, RevealedSecret, SealedSecret, WebhookEndpoint};
pub use schedule::{RetrySchedule, ScheduleError};
