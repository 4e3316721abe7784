//! Use cases: a merchant registers, lists, deletes and rotates webhook endpoints, reads an
//! endpoint's deliveries log, and asks for an event again.

use time::OffsetDateTime;
use uuid::Uuid;

use super::{Webhooks, MAX_DELIVERIES_LOGGED};
use crate::error::{CheckoutError, ValidationErrors};
use crate::values::TerminalNumber;
use crate::webhooks::{DeliveryLog, EventFilter, RevealedSecret, WebhookEndpoint};

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
    /// is a validation error naming `Url` or `Events`, and nothing is saved.
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
        };
        let (secret, sealed) = self.ports.secrets.issue(endpoint.id)?;
        self.ports.store.insert_endpoint(&endpoint, &sealed).await?;
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

    /// GET /pay/api/webhook-endpoints/{id}/deliveries: the endpoint's newest deliveries with
    /// every attempt.
    pub async fn deliveries(
        &self,
        terminal: &TerminalNumber,
        endpoint: Uuid,
    ) -> Result<Vec<DeliveryLog>, CheckoutError> {
        self.ports
            .store
            .deliveries(terminal, endpoint, MAX_DELIVERIES_LOGGED)
            .await?
            .ok_or_else(no_endpoint)
    }

    /// POST /pay/api/events/{id}/redeliver: queues `terminal`'s event `event` again, due now, for
    /// every live endpoint that receives its type; returns the new deliveries. Another
    /// terminal's event is not found.
    pub async fn redeliver(
        &self,
        terminal: &TerminalNumber,
        event: Uuid,
    ) -> Result<Vec<Uuid>, CheckoutError> {
        let now = self.ports.clock.now();
        self.ports
            .store
            .redeliver(terminal, event, now)
            .await?
            .ok_or(CheckoutError::NotFound(
                "No event with this id exists for your terminal.",
            ))
    }
}
