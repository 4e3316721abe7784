//! Use cases of merchant webhooks: endpoint management, the deliveries log and redelivery
//! ([`endpoints`]), and the delivery worker's run ([`deliver`]).

mod deliver;
mod endpoints;

pub use deliver::DeliveryRun;
pub use endpoints::{CreatedEndpoint, RotatedSecret};

use std::sync::Arc;

use time::Duration;

use crate::ports::{
    Clock, EventEncoder, IdGenerator, WebhookSecrets, WebhookStore, WebhookTransport,
};
use crate::webhooks::RetrySchedule;

/// The adapters the webhook use cases run over.
#[derive(Clone)]
pub struct WebhookPorts {
    /// Endpoints, deliveries and their log.
    pub store: Arc<dyn WebhookStore>,
    /// Signing secrets.
    pub secrets: Arc<dyn WebhookSecrets>,
    /// URL checks and sending.
    pub transport: Arc<dyn WebhookTransport>,
    /// Event bodies.
    pub encoder: Arc<dyn EventEncoder>,
    /// Clock.
    pub clock: Arc<dyn Clock>,
    /// Id generator.
    pub ids: Arc<dyn IdGenerator>,
}

/// Webhook settings.
#[derive(Debug, Clone)]
pub struct WebhookPolicy {
    /// The waits between attempts.
    pub schedule: RetrySchedule,
    /// How long a rotated-out secret still signs beside the new one.
    pub secret_overlap: Duration,
    /// Deliveries one worker claims at a time.
    pub batch: u32,
    /// How long a claim lasts: longer than `batch` attempts that each time out, so that no
    /// other worker takes a delivery while its attempt may still run.
    pub lease: Duration,
}

impl Default for WebhookPolicy {
    fn default() -> Self {
        WebhookPolicy {
            schedule: RetrySchedule::standard(),
            secret_overlap: Duration::hours(24),
            batch: 4,
            lease: Duration::seconds(90),
        }
    }
}

/// The most deliveries the log shows for one endpoint.
pub const MAX_DELIVERIES_LOGGED: u32 = 100;

/// Merchant webhooks over their ports.
#[derive(Clone)]
pub struct Webhooks {
    ports: WebhookPorts,
    policy: WebhookPolicy,
}

impl Webhooks {
    /// Wires the webhook use cases to their adapters.
    pub fn new(ports: WebhookPorts, policy: WebhookPolicy) -> Self {
        Webhooks { ports, policy }
    }

    /// The settings.
    pub fn policy(&self) -> &WebhookPolicy {
        &self.policy
    }
}
