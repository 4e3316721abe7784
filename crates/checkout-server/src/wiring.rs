//! Builds the adapters named by the settings and hands them to the use cases.

use std::sync::Arc;

use anyhow::Context;
use checkout_domain::ports::{CardProcessor, ProcessorNotices};
use checkout_domain::ports::{ClientStore, IdentityProvider};
use checkout_domain::usecases::{
    CardGuardSetup, ExpiryBounds, IdempotencyPolicy, ReconcilePolicy, WebhookPolicy, WebhookPorts,
    Webhooks,
};
use checkout_domain::values::CallbackRule;
use checkout_domain::webhooks::{CircuitPolicy, FairShare, RedeliveryLimits};
use checkout_domain::{Checkout, CheckoutPolicy, Ports};
use checkout_http::dto::JsonEventEncoder;
use checkout_identity::{
    BuiltinIdentity, IdentityConfig, KeySet, OidcConfig, OidcIdentity, SigningKey,
};
use checkout_postgres::PgStore;
use checkout_processor::{NoEvents, SandboxProcessor, StripeConfig, StripeEvents, StripeProcessor};
use checkout_webhooks::{SecretBox, UrlPolicy, WebhookAdapter, WebhookSender};
use time::Duration;
use url::Url;

use crate::metrics::identity::MeteredIdentity;
use crate::metrics::processor::MeteredProcessor;
use crate::settings::{Environment, IdentityProviderKind, ProcessorKind, Settings};
use crate::system::{RandomIds, SystemClock};

/// The wired use cases and the public keys.
pub struct Wired {
    /// The use cases over the configured adapters.
    pub checkout: Checkout,
    /// The webhook use cases.
    pub webhooks: Webhooks,
    /// The JWKS of the signing keys (empty with an external OpenID Connect provider: the
    /// service then signs no tokens).
    pub jwks: serde_json::Value,
    /// The pages' CSRF secret, derived from the signing key so that every instance sharing
    /// the key accepts the others' forms, and a restart keeps open pages valid.
    pub csrf_secret: [u8; 32],
    /// The card-testing guard's secret (fingerprints, address keys, proof-of-work
    /// signatures): the setting's, else derived from the signing key.
    pub guard_secret: [u8; 32],
}

/// 32 bytes derived from the signing key for one `purpose` (HMAC-SHA256 keyed by the key).
fn derive_secret(key: &SigningKey, purpose: &str) -> [u8; 32] {
    let mac = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key.to_pkcs8_der());
    let tag = ring::hmac::sign(&mac, purpose.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(tag.as_ref());
    out
}

/// The signing key: a sandbox makes its own on first start; production must be given one, so
/// that a lost or mistyped path never silently rotates the key and invalidates every token.
pub fn signing_key(settings: &Settings) -> anyhow::Result<SigningKey> {
    match settings.environment {
        Environment::Sandbox => SigningKey::load_or_create(&settings.key_file()),
        Environment::Production => SigningKey::load(&settings.key_file()),
    }
    .with_context(|| format!("loading the signing key {}", settings.key_file().display()))
}

/// The webhook use cases over Postgres and the webhook adapter: secrets sealed under a key
/// derived from the signing key (every instance sharing the key opens them), URLs checked
/// by the environment's rules (loopback and private targets only in a sandbox served on
/// loopback), the fair share, circuit and limits of the settings.
pub fn wire_webhooks(
    settings: &Settings,
    key: &SigningKey,
    store: PgStore,
) -> anyhow::Result<Webhooks> {
    let vault = SecretBox::new(&derive_secret(key, "hosted-checkout webhook secrets v1"))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let w = &settings.webhooks;
    let policy = UrlPolicy::new(settings.environment)
        .with_private_targets(settings.webhook_private_targets());
    let sender = WebhookSender::new(policy, std::time::Duration::from_millis(w.timeout_ms))
        .with_connect_timeout(std::time::Duration::from_millis(w.connect_timeout_ms));
    // A claim is leased for one attempt: its lookup and answer time-outs, and a margin for
    // the database round trips.
    let lease = Duration::try_from(sender.max_attempt())
        .unwrap_or(Duration::MINUTE)
        .saturating_add(Duration::seconds(5));
    let adapter = Arc::new(WebhookAdapter::new(sender, vault));
    let scaled = |seconds: u64| Duration::seconds_f64(seconds as f64 * w.time_scale);
    Ok(Webhooks::new(
        WebhookPorts {
            store: Arc::new(store),
            secrets: adapter.clone(),
            transport: adapter,
            encoder: Arc::new(JsonEventEncoder),
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds),
        },
        WebhookPolicy {
            schedule: w.schedule()?,
            secret_overlap: Duration::seconds(i64::from(w.secret_overlap_seconds)),
            batch: w.batch,
            lease,
            share: FairShare {
                per_endpoint: w.endpoint_in_flight,
                per_terminal: w.terminal_in_flight,
            },
            circuit: CircuitPolicy {
                failures_to_open: w.circuit_failures,
                first_open: scaled(w.circuit_open_seconds),
                max_open: scaled(w.circuit_max_open_seconds),
                disable_after: Duration::seconds(
                    i64::try_from(w.disable_after_seconds).unwrap_or(i64::MAX / 4),
                ),
            },
            max_endpoints: w.max_endpoints,
            redeliveries: RedeliveryLimits {
                window: Duration::HOUR,
                per_event: w.redeliveries_per_event_per_hour,
                per_terminal: w.redeliveries_per_terminal_per_hour,
            },
        },
    ))
}

/// The configured identity provider over `clients`, and the JWKS the service publishes: the
/// built-in provider signing with `keys`, or the external OpenID Connect provider (the
/// service signs nothing then, and publishes an empty key set).
pub fn identity(
    settings: &Settings,
    keys: KeySet,
    clients: Arc<dyn ClientStore>,
) -> anyhow::Result<(Arc<dyn IdentityProvider>, serde_json::Value)> {
    let client_status_ttl =
        std::time::Duration::from_millis(settings.security.client_status_cache_ms);
    match settings.identity.provider {
        IdentityProviderKind::Builtin => {
            let jwks = keys.jwks();
            let identity = BuiltinIdentity::new(
                IdentityConfig {
                    issuer: settings.issuer(),
                    audience: settings.identity.audience.clone(),
                    environment: settings.environment,
                    token_lifetime: Duration::seconds(i64::from(
                        settings.identity.token_lifetime_seconds,
                    )),
                },
                keys,
                clients,
            )
            .with_client_status_ttl(client_status_ttl);
            Ok((Arc::new(identity), jwks))
        }
        IdentityProviderKind::Oidc => {
            let oidc = &settings.identity.oidc;
            // Present: `Settings::validate` requires it for the oidc provider.
            let issuer = oidc
                .issuer
                .clone()
                .context("CHECKOUT__IDENTITY__OIDC__ISSUER")?;
            let mut config = OidcConfig::new(
                issuer,
                oidc.audience
                    .clone()
                    .unwrap_or_else(|| settings.identity.audience.clone()),
            );
            config.role_claims = oidc.role_claims();
            config.terminal_role = oidc.terminal_role.clone();
            config.client_claims = oidc.client_claims();
            config.algorithms = oidc.algorithms()?;
            config.leeway_secs = oidc.leeway_seconds;
            config.http_timeout = std::time::Duration::from_millis(oidc.timeout_ms);
            config.key_refetch_interval = std::time::Duration::from_secs(oidc.key_refetch_seconds);
            config.key_refresh_interval = std::time::Duration::from_secs(oidc.key_refresh_seconds);
            config.key_max_age = std::time::Duration::from_secs(oidc.key_max_age_seconds);
            config.token_params = oidc.token_params();
            if let Some(file) = &oidc.ca_file {
                config.ca_certificates_pem = std::fs::read(file).with_context(|| {
                    format!(
                        "reading CHECKOUT__IDENTITY__OIDC__CA_FILE {}",
                        file.display()
                    )
                })?;
            }
            let identity =
                OidcIdentity::new(config, clients)?.with_client_status_ttl(client_status_ttl);
            Ok((Arc::new(identity), serde_json::json!({ "keys": [] })))
        }
    }
}

/// Wires every port: Postgres storage, the configured identity provider (metered), the configured card
/// processor (metered), the webhook adapter, the system clock and random ids.
pub fn wire(settings: &Settings, base_url: &str, store: PgStore) -> anyhow::Result<Wired> {
    let key = signing_key(settings)?;
    let webhooks = wire_webhooks(settings, &key, store.clone())?;
    let csrf_secret = derive_secret(&key, "hosted-checkout pages csrf v1");
    let guard_secret = match &settings.guard.secret {
        Some(secret) => {
            let digest = ring::digest::digest(
                &ring::digest::SHA256,
                secrecy::ExposeSecret::expose_secret(secret).as_bytes(),
            );
            let mut out = [0u8; 32];
            out.copy_from_slice(digest.as_ref());
            out
        }
        None => derive_secret(&key, "hosted-checkout card guard v1"),
    };
    let keys = KeySet::new(key);
    let (identity, jwks) = identity(settings, keys, Arc::new(store.clone()))?;
    let identity: Arc<dyn IdentityProvider> = Arc::new(MeteredIdentity::new(identity));

    let timeout = std::time::Duration::from_millis(settings.processor.timeout_ms);
    let processor: Arc<dyn CardProcessor> = match settings.processor.kind {
        ProcessorKind::Sandbox => Arc::new(SandboxProcessor::new().with_delay(
            std::time::Duration::from_millis(settings.processor.sandbox_delay_ms),
        )),
        ProcessorKind::Stripe => {
            // Present: `Settings::validate` requires it for the stripe processor.
            let base_url = settings
                .processor
                .stripe_base_url
                .clone()
                .context("CHECKOUT__PROCESSOR__STRIPE_BASE_URL")?;
            Arc::new(StripeProcessor::new(StripeConfig {
                base_url,
                api_key: settings
                    .processor
                    .stripe_api_key
                    .as_ref()
                    .map(|key| secrecy::ExposeSecret::expose_secret(key).to_owned())
                    .unwrap_or_default(),
                timeout,
            })?)
        }
    };

    let processor: Arc<dyn CardProcessor> = Arc::new(MeteredProcessor::new(processor));
    let processor_events = processor_events(settings)?;

    let link_base = settings
        .checkout
        .base_url_payment_link
        .clone()
        .unwrap_or_else(|| format!("{base_url}/pay/link"));
    let policy = CheckoutPolicy::new(
        Duration::minutes(i64::from(settings.checkout.link_validity_minutes)),
        Duration::minutes(i64::from(settings.checkout.checkout_validity_minutes)),
        Url::parse(&link_base).context("BaseUrlPaymentLink is not a URL")?,
    )
    .context("BaseUrlPaymentLink")?
    .with_callback_rule(match settings.environment {
        Environment::Sandbox => CallbackRule::HttpsOrLoopbackHttp,
        Environment::Production => CallbackRule::HttpsOnly,
    })
    .with_processor_return_base(
        Url::parse(&format!("{base_url}/pay/return")).context("the public base URL")?,
    )
    .with_reconcile(ReconcilePolicy {
        first_check_after: Duration::seconds(i64::from(settings.checkout.reconcile_after_seconds)),
        max_backoff: Duration::seconds(i64::from(settings.checkout.reconcile_max_backoff_seconds)),
        batch: settings.checkout.reconcile_batch,
        hold_check_after: Duration::seconds(i64::from(
            settings.checkout.reconcile_hold_check_after_seconds,
        )),
        // Long enough for a whole batch of calls that each time out.
        lease: Duration::milliseconds(
            i64::try_from(settings.processor.timeout_ms).unwrap_or(i64::MAX / 4)
                * (i64::from(settings.checkout.reconcile_batch) + 1),
        ),
        ..ReconcilePolicy::default()
    })
    .with_idempotency(IdempotencyPolicy {
        lease: Duration::seconds(i64::from(settings.checkout.idempotency_lease_seconds)),
        ..IdempotencyPolicy::default()
    })
    .with_expiry_bounds(ExpiryBounds {
        link_min: minutes(settings.checkout.link_expiration_min_minutes),
        link_max: minutes(settings.checkout.link_expiration_max_minutes),
        checkout_min: minutes(settings.checkout.checkout_expiration_min_minutes),
        checkout_max: minutes(settings.checkout.checkout_expiration_max_minutes),
    });

    let store = Arc::new(store);
    let mut checkout = Checkout::new(
        Ports {
            sessions: store.clone(),
            attempts: store.clone(),
            sweeps: store.clone(),
            reversals: store.clone(),
            events: store.clone(),
            terminals: store.clone(),
            idempotency: store.clone(),
            processor,
            identity,
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds),
            processor_events,
            notices: store.clone(),
            disputes: store.clone(),
        },
        policy,
    );
    if settings.guard.enabled {
        checkout = checkout.with_card_guard(CardGuardSetup {
            store: store.clone(),
            keys: Arc::new(checkout_http::card_guard::HmacGuardKeys::new(&guard_secret)),
            policy: settings.guard.policy(),
        });
    }
    Ok(Wired {
        checkout,
        webhooks,
        jwks,
        csrf_secret,
        guard_secret,
    })
}

/// Stripe's webhooks, verified with the configured signing secrets; none when the processor
/// is the sandbox or no secret is configured.
fn processor_events(settings: &Settings) -> anyhow::Result<Arc<dyn ProcessorNotices>> {
    let secrets = match (
        &settings.processor.kind,
        &settings.processor.stripe_webhook_secrets,
    ) {
        (ProcessorKind::Stripe, Some(secrets)) => secrets,
        _ => return Ok(Arc::new(NoEvents)),
    };
    let secrets: Vec<&str> = secrecy::ExposeSecret::expose_secret(secrets)
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if secrets.len() > 2 {
        anyhow::bail!(
            "CHECKOUT__PROCESSOR__STRIPE_WEBHOOK_SECRETS holds at most two secrets (the current \
             and the previous one)"
        );
    }
    let tolerance = Duration::seconds(i64::from(
        settings.processor.stripe_webhook_tolerance_seconds,
    ));
    let events = StripeEvents::new(&secrets, tolerance)
        .context("CHECKOUT__PROCESSOR__STRIPE_WEBHOOK_SECRETS")?;
    Ok(Arc::new(events))
}

/// `n` minutes.
fn minutes(n: u32) -> Duration {
    Duration::minutes(i64::from(n))
}
