//! Use cases of merchant webhooks: endpoint management, the deliveries log and redelivery
//! ([`endpoints`]), and the delivery workers' claims and attempts ([`deliver`]).

mod deliver;
mod endpoints;

pub use deliver::DeliveryRun;
pub use endpoints::{CreatedEndpoint, RotatedSecret};

use std::sync::Arc;

use time::Duration;

use crate::ports::{
    Clock, EventEncoder, IdGenerator, WebhookSecrets, WebhookStore, WebhookTransport,
};
use crate::webhooks::{CircuitPolicy, FairShare, RedeliveryLimits, RetrySchedule};

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
    /// The most deliveries one claim takes.
    pub batch: u32,
    /// How long a claimed delivery is leased: longer than one attempt may take (its lookup and
    /// answer time-outs together), so that no other worker takes a delivery while its attempt
    /// may still run.
    pub lease: Duration,
    /// How many attempts one endpoint, and one terminal, may have in flight at once.
    pub share: FairShare,
    /// When a failing endpoint's circuit opens, and when it is disabled.
    pub circuit: CircuitPolicy,
    /// The most live endpoints a terminal may have.
    pub max_endpoints: u32,
    /// How many redeliveries a terminal may ask for.
    pub redeliveries: RedeliveryLimits,
}

impl Default for WebhookPolicy {
    fn default() -> Self {
        WebhookPolicy {
            schedule: RetrySchedule::standard(),
            secret_overlap: Duration::hours(24),
            batch: 8,
            lease: Duration::seconds(30),
            share: FairShare::default(),
            circuit: CircuitPolicy::default(),
            max_endpoints: MAX_ENDPOINTS_PER_TERMINAL,
            redeliveries: RedeliveryLimits::default(),
        }
    }
}

/// The most deliveries one page of an endpoint's log shows.
pub const MAX_DELIVERIES_LOGGED: u32 = 100;

/// The endpoints a terminal may have by default: 16, as Stripe allows an account.
pub const MAX_ENDPOINTS_PER_TERMINAL: u32 = 16;

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
