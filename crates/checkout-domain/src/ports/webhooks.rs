//! Webhooks: endpoint and delivery storage, secrets, the sending of one attempt, and the
//! event body.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::events::PaymentEvent;
use crate::values::TerminalNumber;
use crate::webhooks::{
    AttemptResult, DeliveryLog, DueDelivery, NextStep, RevealedSecret, SealedSecret,
    WebhookBacklog, WebhookEndpoint,
};

/// Endpoints, their deliveries and the attempt log.
///
/// An implementation MUST queue one delivery per live endpoint of the event's terminal that
/// admits the event's type, in the same transaction as the event itself (so that an event
/// never misses an endpoint that existed when it was written), and MUST keep deliveries and
/// their log through restarts: a delivery is pending until an attempt's result says
/// otherwise.
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Saves a new endpoint with its sealed secret.
    async fn insert_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        secret: &SealedSecret,
    ) -> anyhow::Result<()>;

    /// The live (not deleted) endpoints of `terminal`, oldest first.
    async fn endpoints(&self, terminal: &TerminalNumber) -> anyhow::Result<Vec<WebhookEndpoint>>;

    /// The live endpoint `id` of `terminal`; MUST be `None` for another terminal's.
    async fn endpoint(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
    ) -> anyhow::Result<Option<WebhookEndpoint>>;

    /// Deletes the live endpoint `id` of `terminal` at `now`; false when there is none. MUST
    /// cancel its pending deliveries in the same transaction, so it gets nothing more.
    async fn delete_endpoint(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Replaces the secret of the live endpoint `id` of `terminal` with `secret`, keeping the
    /// one it replaces as the previous secret until `previous_until` (a previous secret of an
    /// earlier rotation is dropped); false when there is no such endpoint.
    async fn rotate_secret(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
        secret: &SealedSecret,
        previous_until: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Claims at most `limit` pending deliveries due at `now` and not claimed by a live lease,
    /// leasing them until `lease_until` under a new claim. MUST skip deliveries another
    /// worker holds (`FOR UPDATE SKIP LOCKED` or equivalent), so that two workers never
    /// attempt one delivery at once while a lease lasts. The secrets are the endpoint's
    /// current one and, until its `previous_until` has passed, the previous one.
    async fn claim_due(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<DueDelivery>>;

    /// Logs the attempt on `delivery` and applies `next`: MUST log the attempt whatever
    /// happens, and MUST change the delivery only while `delivery.claim` still holds it
    /// and it is pending (a result that comes after the lease was lost, or after the endpoint
    /// was deleted, changes nothing). Returns whether the delivery changed.
    async fn record_attempt(
        &self,
        delivery: &DueDelivery,
        result: &AttemptResult,
        next: NextStep,
    ) -> anyhow::Result<bool>;

    /// The newest `limit` deliveries of the live endpoint `endpoint` of `terminal`, newest
    /// first, with their attempts; `None` when there is no such endpoint.
    async fn deliveries(
        &self,
        terminal: &TerminalNumber,
        endpoint: Uuid,
        limit: u32,
    ) -> anyhow::Result<Option<Vec<DeliveryLog>>>;

    /// Queues event `event` of `terminal` again, due now, for every live endpoint that admits
    /// its type; returns the new deliveries' ids, or `None` when `terminal` has no such event.
    async fn redeliver(
        &self,
        terminal: &TerminalNumber,
        event: Uuid,
        now: OffsetDateTime,
    ) -> anyhow::Result<Option<Vec<Uuid>>>;

    /// How many pending deliveries are due at `now`, and since when the oldest.
    async fn backlog(&self, now: OffsetDateTime) -> anyhow::Result<WebhookBacklog>;
}

/// Makes and seals signing secrets.
pub trait WebhookSecrets: Send + Sync {
    /// A new random secret for endpoint `endpoint`: in clear (shown once) and sealed (stored).
    /// MUST carry at least 24 random bytes from a cryptographically secure source; the sealed
    /// form MUST NOT reveal the secret without the adapter's key.
    fn issue(&self, endpoint: Uuid) -> anyhow::Result<(RevealedSecret, SealedSecret)>;
}

/// Checks webhook URLs and sends one attempt.
#[async_trait]
pub trait WebhookTransport: Send + Sync {
    /// Checks `url` for a new endpoint and returns it normalised, or why it is refused (a
    /// sentence for the merchant). Production MUST accept only `https` URLs whose host does
    /// not resolve to a loopback, private or link-local address.
    async fn check_url(&self, url: &str) -> Result<String, String>;

    /// Posts `body`, exactly these bytes, to `delivery.url` with the Standard Webhooks
    /// headers (`webhook-id` the event id, one `v1,` signature per secret of
    /// `delivery.secrets`) and reports the attempt. MUST check the URL again before
    /// connecting, MUST NOT follow redirects, MUST end within its timeout, and MUST NOT put a
    /// secret in the result.
    async fn send(&self, delivery: &DueDelivery, body: &[u8]) -> AttemptResult;
}

/// The body of an event: the same bytes for every delivery of it.
pub trait EventEncoder: Send + Sync {
    /// `{"id", "type", "timestamp", "data"}` with `data` the session's status record as of
    /// the event. MUST be a function of the event alone.
    fn encode(&self, event: &PaymentEvent) -> Vec<u8>;
}
