//! Use cases: a merchant registers, lists, deletes, rotates and enables webhook endpoints,
//! reads an endpoint's deliveries log a page at a time, and asks for an event again, within
//! the limits of the policy (endpoints per terminal, redeliveries per event and per terminal).

use time::OffsetDateTime;
use uuid::Uuid;

use super::{Webhooks, MAX_DELIVERIES_LOGGED};
use crate::error::{CheckoutError, ValidationErrors};
use crate::values::TerminalNumber;
use crate::webhooks::{
    DeliveryCursor, DeliveryPage, EndpointHealth, EventFilter, Redelivered, RevealedSecret,
    WebhookEndpoint,
};

/// A new endpoint with its secret, shown this once.
#[derive(Debug, Clone)]
pub struct CreatedEndpoint {
    /// The endpoint.
    pub endpoint: WebhookEndpoint,
    /// Its signing secret.
    pub secret: RevealedSecret,
}

/// The new secret of a rotation, shown this once.
#[derive(Debug, Clone)]
pub struct RotatedSecret {
    /// The new secret.
    pub secret: RevealedSecret,
    /// Until when the previous secret still signs beside it.
    pub previous_expires_at: OffsetDateTime,
}

fn no_endpoint() -> CheckoutError {
    CheckoutError::NotFound("No webhook endpoint with this id exists for your terminal.")
}

impl Webhooks {
    /// POST /pay/api/webhook-endpoints: registers `url` for `terminal`, receiving
    /// `events` (every type when absent). A URL the policy refuses, or an unknown event type,
    /// is a validation error naming `Url` or `Events`, and nothing is saved; so is nothing
    /// when the terminal already has the policy's most endpoints (a limit reached).
    pub async fn create_endpoint(
        &self,
        terminal: &TerminalNumber,
        url: &str,
        events: Option<&[String]>,
    ) -> Result<CreatedEndpoint, CheckoutError> {
        let mut errors = ValidationErrors::new();
        let filter = EventFilter::parse(events, &mut errors);
        let url = match self.ports.transport.check_url(url).await {
            Ok(url) => Some(url),
            Err(reason) => {
                errors.add("Url", reason);
                None
            }
        };
        let url = errors.into_result(url)?.unwrap_or_default();
        let endpoint = WebhookEndpoint {
            id: self.ports.ids.webhook_endpoint_id(),
            terminal: terminal.clone(),
            url,
            events: filter,
            created_at: self.ports.clock.now(),
            health: EndpointHealth::default(),
        };
        let (secret, sealed) = self.ports.secrets.issue(endpoint.id)?;
        let max = self.policy.max_endpoints;
        if !self
            .ports
            .store
            .insert_endpoint(&endpoint, &sealed, max)
            .await?
        {
            return Err(CheckoutError::LimitReached(format!(
                "Your terminal already has {max} webhook endpoints, the most it may have. \
                 Delete one (DELETE /pay/api/webhook-endpoints/{{id}}) before registering another; \
                 one endpoint may receive every event type."
            )));
        }
        Ok(CreatedEndpoint { endpoint, secret })
    }

    /// GET /pay/api/webhook-endpoints: `terminal`'s endpoints, oldest first.
    pub async fn list_endpoints(
        &self,
        terminal: &TerminalNumber,
    ) -> Result<Vec<WebhookEndpoint>, CheckoutError> {
        Ok(self.ports.store.endpoints(terminal).await?)
    }

    /// DELETE /pay/api/webhook-endpoints/{id}: the endpoint gets nothing more (its pending
    /// deliveries are cancelled). Another terminal's endpoint is not found.
    pub async fn delete_endpoint(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
    ) -> Result<(), CheckoutError> {
        let now = self.ports.clock.now();
        if self.ports.store.delete_endpoint(terminal, id, now).await? {
            Ok(())
        } else {
            Err(no_endpoint())
        }
    }

    /// POST /pay/api/webhook-endpoints/{id}/rotate-secret: a new secret; the previous one
    /// keeps signing beside it for the policy's overlap.
    pub async fn rotate_secret(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
    ) -> Result<RotatedSecret, CheckoutError> {
        if self.ports.store.endpoint(terminal, id).await?.is_none() {
            return Err(no_endpoint());
        }
        let (secret, sealed) = self.ports.secrets.issue(id)?;
        let previous_expires_at = self.ports.clock.now() + self.policy.secret_overlap;
        let rotated = self
            .ports
            .store
            .rotate_secret(terminal, id, &sealed, previous_expires_at)
            .await?;
        if !rotated {
            return Err(no_endpoint());
        }
        Ok(RotatedSecret {
            secret,
            previous_expires_at,
        })
    }

    /// POST /pay/api/webhook-endpoints/{id}/enable: the endpoint is enabled again with a
    /// closed circuit (whether it was disabled after days of failures, its circuit open, or
    /// failing), so that its next due delivery goes out at once. Another terminal's endpoint
    /// is not found.
    pub async fn enable_endpoint(
        &self,
        terminal: &TerminalNumber,
        id: Uuid,
    ) -> Result<WebhookEndpoint, CheckoutError> {
        self.ports
            .store
            .enable_endpoint(terminal, id)
            .await?
            .ok_or_else(no_endpoint)
    }

    /// GET /pay/api/webhook-endpoints/{id}/deliveries: one page of the endpoint's deliveries,
    /// newest first, with every attempt, after `after` (from the newest when absent); at most
    /// `limit` (capped at [`MAX_DELIVERIES_LOGGED`]), and the endpoint itself (its circuit and
    /// whether it is disabled).
    pub async fn deliveries(
        &self,
        terminal: &TerminalNumber,
        endpoint: Uuid,
        after: Option<DeliveryCursor>,
        limit: u32,
    ) -> Result<(WebhookEndpoint, DeliveryPage), CheckoutError> {
        let found = self
            .ports
            .store
            .endpoint(terminal, endpoint)
            .await?
            .ok_or_else(no_endpoint)?;
        let limit = limit.clamp(1, MAX_DELIVERIES_LOGGED);
        let page = self
            .ports
            .store
            .deliveries(terminal, endpoint, after, limit)
            .await?
            .ok_or_else(no_endpoint)?;
        Ok((found, page))
    }

    /// POST /pay/api/events/{id}/redeliver: queues `terminal`'s event `event` again, due now, for
    /// every enabled endpoint that receives its type; returns the new deliveries. Another
    /// terminal's event is not found. Past the policy's limits (requests for one event, and
    /// for the terminal's events, within the window), nothing is queued and the caller is
    /// told when it may ask again.
    pub async fn redeliver(
        &self,
        terminal: &TerminalNumber,
        event: Uuid,
    ) -> Result<Vec<Uuid>, CheckoutError> {
        let now = self.ports.clock.now();
        let limits = &self.policy.redeliveries;
        match self
            .ports
            .store
            .redeliver(terminal, event, now, limits)
            .await?
        {
            Redelivered::Queued(deliveries) => Ok(deliveries),
            Redelivered::UnknownEvent => Err(CheckoutError::NotFound(
                "No event with this id exists for your terminal.",
            )),
            Redelivered::OverLimit {
                event_oldest,
                terminal_oldest,
            } => {
                let retry_at = limits.retry_at(event_oldest, terminal_oldest, now);
                let wait = (retry_at - now).as_seconds_f64().ceil().max(1.0);
                let minutes = limits.window.whole_minutes();
                let which = match (event_oldest, terminal_oldest) {
                    (Some(_), None) => format!(
                        "This event was redelivered {} times in the last {minutes} minutes, the most allowed.",
                        limits.per_event
                    ),
                    _ => format!(
                        "Your terminal asked for {} redeliveries in the last {minutes} minutes, the most allowed.",
                        limits.per_terminal
                    ),
                };
                Err(CheckoutError::TooManyRequests {
                    detail: format!(
                        "{which} Retry after the time in Retry-After, or read the events you \
                         missed from GET /pay/api/events."
                    ),
                    retry_after_secs: wait as u64,
                })
            }
        }
    }
}
