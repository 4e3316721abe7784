//! The domain's webhook ports over this crate: [`WebhookAdapter`] makes and seals secrets
//! ([`WebhookSecrets`]) and checks URLs and sends attempts ([`WebhookTransport`]).

use async_trait::async_trait;
use checkout_domain::ports::{WebhookSecrets, WebhookTransport};
use checkout_domain::webhooks::{AttemptResult, DueDelivery, RevealedSecret, SealedSecret};
use time::OffsetDateTime;
use url::Url;
use uuid::Uuid;

use crate::secret_box::SecretBox;
use crate::sender::{DeliveryOutcome, WebhookSender};
use crate::signature::WebhookSecret;

/// Webhook secrets and deliveries for the use cases.
pub struct WebhookAdapter {
    sender: WebhookSender,
    vault: SecretBox,
}

impl WebhookAdapter {
    /// Sends with `sender`; seals secrets in `vault`, each with its endpoint's id as context.
    pub fn new(sender: WebhookSender, vault: SecretBox) -> Self {
        WebhookAdapter { sender, vault }
    }
}

impl WebhookSecrets for WebhookAdapter {
    fn issue(&self, endpoint: Uuid) -> anyhow::Result<(RevealedSecret, SealedSecret)> {
        let secret = WebhookSecret::generate()?;
        let sealed = self.vault.seal(&secret, endpoint.as_bytes())?;
        Ok((
            RevealedSecret::new(secret.expose_secret()),
            SealedSecret(sealed),
        ))
    }
}

#[async_trait]
impl WebhookTransport for WebhookAdapter {
    async fn check_url(&self, url: &str) -> Result<String, String> {
        match self.sender.policy().check(url).await {
            Ok(url) => Ok(url.to_string()),
            Err(e) => Err(format!("The URL {e}.")),
        }
    }

    async fn send(&self, delivery: &DueDelivery, body: &[u8]) -> AttemptResult {
        let failed = |error: String| AttemptResult {
            attempted_at: OffsetDateTime::now_utc(),
            duration: std::time::Duration::ZERO,
            status: None,
            error: Some(error),
            response_excerpt: None,
        };
        let secrets: Result<Vec<WebhookSecret>, _> = delivery
            .secrets
            .iter()
            .map(|sealed| self.vault.open(&sealed.0, delivery.endpoint_id.as_bytes()))
            .collect();
        let Ok(secrets) = secrets else {
            return failed("not sent: the endpoint's secret cannot be opened".to_owned());
        };
        let Ok(url) = Url::parse(&delivery.url) else {
            return failed("not sent: the URL must be an absolute URL with a host".to_owned());
        };
        let report = self
            .sender
            .deliver(&url, &delivery.event.id.to_string(), body, &secrets)
            .await;
        let (status, error, response_excerpt) = match report.outcome {
            DeliveryOutcome::Responded {
                status,
                body_excerpt,
            } => (Some(status), None, body_excerpt),
            DeliveryOutcome::Failed(e) => (None, Some(e.to_string()), None),
        };
        AttemptResult {
            attempted_at: report.attempted_at,
            duration: report.duration,
            status,
            error,
            response_excerpt,
        }
    }
}
