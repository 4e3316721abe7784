//! Webhooks: endpoint and delivery storage, secrets, the sending of one attempt, and the
//! event body.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::events::PaymentEvent;
use crate::values::TerminalNumber;
use crate::webhooks::{
    AttemptResult, DeliveryCursor, DeliveryPage, DueDelivery, EndpointHealth, FairShare, NextStep,
    Redelivered, RedeliveryLimits, RevealedSecret, SealedSecret, WebhookBacklog, WebhookEndpoint,
};

/// Endpoints, their deliveries and the attempt log.
///
/// An implementation MUST queue one delivery per live, enabled endpoint of the event's
/// terminal that admits the event's type, in the same transaction as the event itself (so
/// that an event never misses an endpoint that existed when it was written), and MUST keep
/// deliveries and their log through restarts: a delivery is pending until an attempt's result
/// says otherwise. Endpoints carry their [`EndpointHealth`], read with them.
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Saves a new endpoint with its sealed secret, healthy, unless `terminal` already has
    /// `max_per_terminal` live endpoints: then saves nothing and returns false. MUST decide
    /// the count and the insert atomically, so that racing creates never pass the limit.
    async fn insert_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        secret: &SealedSecret,
        max_per_terminal: u32,
    ) -> anyhow::Result<bool>;

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
    /// leasing them until `lease_until` under a new claim, fairly:
    ///
    /// - MUST skip deliveries another worker holds (`FOR UPDATE SKIP LOCKED` or equivalent),
    ///   so that two workers never attempt one delivery at once while a lease lasts;
    /// - MUST NOT claim a delivery of a deleted or disabled endpoint, or of one whose circuit
    ///   is open at `now` ([`EndpointHealth::circuit_open_until`] later than `now`);
    /// - MUST keep, counting every live lease of every worker and instance, at most
    ///   `share.per_endpoint` deliveries of one endpoint in flight (at most one while the
    ///   endpoint's last attempt failed: [`EndpointHealth::consecutive_failures`] above 0) and
    ///   at most `share.per_terminal` of one terminal's endpoints together; claims racing on
    ///   other connections MUST NOT together pass these bounds;
    /// - MUST take the deliveries in turns: each endpoint's oldest due first, one delivery per
    ///   terminal and per endpoint in each turn, and within a turn the endpoint whose
    ///   deliveries were claimed longest ago (or never) first; so a backlog of one endpoint or
    ///   terminal never comes before another's first due delivery.
    ///
    /// The secrets are the endpoint's current one and, until its `previous_until` has
    /// passed, the previous one; the health is the endpoint's as claimed.
    async fn claim_due(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
        share: FairShare,
    ) -> anyhow::Result<Vec<DueDelivery>>;

    /// The health of the live endpoint `endpoint` (of any terminal); `None` when it was
    /// deleted.
    async fn endpoint_health(&self, endpoint: Uuid) -> anyhow::Result<Option<EndpointHealth>>;

    /// Replaces the health of the live endpoint `endpoint` with `new`, only while it still is
    /// `expected` (a compare-and-set: an attempt that ended meanwhile wins, and the caller
    /// reads the health again); returns whether it was replaced. When `new` disables the
    /// endpoint, MUST cancel its pending deliveries in the same transaction (an attempt on
    /// its way may still end, changing nothing).
    async fn set_endpoint_health(
        &self,
        endpoint: Uuid,
        expected: &EndpointHealth,
        new: &EndpointHealth,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Enables the live endpoint `id` of `terminal` with a healthy, closed circuit (whether
    /// it was disabled, open or failing) and returns it; `None` when there is no such
    /// endpoint (another terminal's included). Deliveries the endpoint missed while disabled
    /// are not queued again.
    async fn enable_endpoint(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
    ) -> anyhow::Result<Option<WebhookEndpoint>>;

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

    /// Ends the lease of `delivery`'s claim without logging an attempt (a worker stopping
    /// gives back what it claimed): MUST change the delivery only while `delivery.claim` still
    /// holds it and it is pending, and MUST leave it due as it was, so that another worker
    /// may claim it at once. Returns whether it changed.
    async fn release_claim(&self, delivery: &DueDelivery) -> anyhow::Result<bool>;

    /// One page of the deliveries of the live endpoint `endpoint` of `terminal`: at most
    /// `limit`, newest first (in the order they were queued), after `after` (a cursor this
    /// method returned: the deliveries queued before it) or from the newest, each with its
    /// attempts; `None` when there is no such endpoint. `has_more` MUST be true exactly when
    /// older deliveries follow the page; a delivery queued while a merchant pages never
    /// shifts the pages that follow.
    async fn deliveries(
        &self,
        terminal: &TerminalNumber,
        endpoint: Uuid,
        after: Option<DeliveryCursor>,
        limit: u32,
    ) -> anyhow::Result<Option<DeliveryPage>>;

    /// Queues event `event` of `terminal` again, due at `now`, for every live, enabled
    /// endpoint that admits its type, and records the request, unless `limits` refuses it:
    /// when `limits.per_event` requests for this event, or `limits.per_terminal` requests
    /// of the terminal, were recorded in the window before `now`, queues and records nothing
    /// and reports the oldest request counted against each limit reached. MUST count and
    /// record atomically, so that racing requests never pass a limit. Requests that queued
    /// no delivery (no endpoint admits the type) count too.
    async fn redeliver(
        &self,
        terminal: &TerminalNumber,
        event: Uuid,
        now: OffsetDateTime,
        limits: &RedeliveryLimits,
    ) -> anyhow::Result<Redelivered>;

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
    /// not resolve to a loopback, private or link-local address; so MUST any deployment
    /// whose setting does not allow loopback and private targets (a sandbox with a public
    /// base URL).
    async fn check_url(&self, url: &str) -> Result<String, String>;

    /// Posts `body`, exactly these bytes, to `delivery.url` with the Standard Webhooks
    /// headers (`webhook-id` the event id, one `v1,` signature per secret of
    /// `delivery.secrets`) and reports the attempt. MUST check the URL again before
    /// connecting, MUST NOT follow redirects, MUST give up connecting after its connect
    /// time-out and waiting for the answer after its answer time-out (counted from the end of
    /// the host name lookup, which has its own), MUST NOT put a secret
    /// in the result, and MUST NOT keep any of the answer's body when the address it
    /// connected to is loopback or private.
    async fn send(&self, delivery: &DueDelivery, body: &[u8]) -> AttemptResult;
}

/// The body of an event: the same bytes for every delivery of it.
pub trait EventEncoder: Send + Sync {
    /// `{"id", "type", "timestamp", "data"}` with `data` the session's status record as of
    /// the event. MUST be a function of the event alone.
    fn encode(&self, event: &PaymentEvent) -> Vec<u8>;
}
