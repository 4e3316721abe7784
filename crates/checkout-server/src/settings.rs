//! Typed settings: the defaults on the fields (each section's `Default`), then an optional JSON file (`CHECKOUT_CONFIG`), then environment
//! overrides `CHECKOUT__SECTION__FIELD=value` (and `DATABASE_URL`), validated at start.

use std::path::PathBuf;

use anyhow::{bail, Context};
use secrecy::SecretString;
use serde::Deserialize;
use serde_json::{Map, Value};

pub use checkout_domain::Environment;

/// Reads `sandbox` or `production`.
fn environment<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Environment, D::Error> {
    let name = String::deserialize(d)?;
    Environment::parse(&name).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "unknown environment `{name}`, expected `sandbox` or `production`"
        ))
    })
}

/// Reads an optional absolute URL.
fn optional_url<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<url::Url>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|text| {
            url::Url::parse(&text)
                .map_err(|e| serde::de::Error::custom(format!("`{text}` is not a URL: {e}")))
        })
        .transpose()
}

/// The HTTP listener.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ServerSettings {
    /// Address to bind.
    pub host: String,
    /// Port to bind; 0 picks a free one.
    pub port: u16,
    /// Worker threads; defaults to the number of cores.
    pub workers: Option<usize>,
    /// The address payers and merchants reach the service at (links, redirects); defaults to
    /// `http://{host}:{port}`.
    pub public_base_url: Option<String>,
    /// After SIGTERM or Ctrl-C: how long readiness answers 503 while the listener still
    /// accepts and serves, so that a load balancer notices before the listener closes
    /// (milliseconds; `docs/decisions/0018-shutdown-and-database-timeouts.md`).
    pub shutdown_grace_ms: u64,
    /// After the grace period: how long requests in flight may take to finish (seconds).
    pub shutdown_timeout_seconds: u64,
}

/// The database.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DatabaseSettings {
    /// A PostgreSQL URL, which may hold a password (`Debug` prints a mask); when absent in
    /// sandbox mode a private cluster is started under `data_dir`.
    pub url: Option<SecretString>,
    /// Pool size.
    pub pool_size: usize,
    /// A PEM file of the CA certificates that sign the database server's certificate: with
    /// it, every connection uses TLS and verifies the certificate and the host name
    /// (`sslmode=verify-full`). The URL's `sslrootcert` does the same.
    pub ca_file: Option<PathBuf>,
    /// Opening one connection, at most (milliseconds). This and the settings below apply to
    /// every pooled connection whatever the URL says
    /// (`docs/decisions/0018-shutdown-and-database-timeouts.md`).
    pub connect_timeout_ms: u64,
    /// Waiting for a free pooled connection, at most (milliseconds).
    pub checkout_timeout_ms: u64,
    /// `tcp_user_timeout` in milliseconds (libpq's unit; the service converts it).
    pub tcp_user_timeout_ms: u64,
    /// TCP keepalives: idle time before the first probe (milliseconds).
    pub keepalives_idle_ms: u64,
    /// TCP keepalives: time between probes (milliseconds).
    pub keepalives_interval_ms: u64,
    /// TCP keepalives: probes unanswered before the socket is closed.
    pub keepalives_retries: u32,
    /// The `statement_timeout` of every pooled session (milliseconds).
    pub statement_timeout_ms: u64,
    /// The `idle_in_transaction_session_timeout` of every pooled session (milliseconds).
    pub idle_in_transaction_timeout_ms: u64,
    /// How long a statement may go without any answer before its connection is closed as
    /// stalled (milliseconds); longer than `statement_timeout_ms`.
    pub answer_timeout_ms: u64,
}

impl DatabaseSettings {
    /// The pool's settings.
    pub fn pool(&self) -> checkout_postgres::PoolSettings {
        let ms = std::time::Duration::from_millis;
        checkout_postgres::PoolSettings {
            max_size: self.pool_size.max(1),
            connect_timeout: ms(self.connect_timeout_ms),
            checkout_timeout: ms(self.checkout_timeout_ms),
            tcp_user_timeout: ms(self.tcp_user_timeout_ms),
            keepalives_idle: ms(self.keepalives_idle_ms),
            keepalives_interval: ms(self.keepalives_interval_ms),
            keepalives_retries: self.keepalives_retries,
            statement_timeout: ms(self.statement_timeout_ms),
            idle_in_transaction_timeout: ms(self.idle_in_transaction_timeout_ms),
            answer_timeout: ms(self.answer_timeout_ms),
        }
    }
}

/// Token issuance.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct IdentitySettings {
    /// The `iss` claim; defaults to `hosted-checkout-{environment}`.
    pub issuer: Option<String>,
    /// The `aud` claim.
    pub audience: String,
    /// Token lifetime (`expiresIn`), seconds.
    pub token_lifetime_seconds: u32,
    /// The Ed25519 signing key (PKCS#8); defaults to `{data_dir}/keys/{environment}.pk8`,
    /// created on first start. With the OpenID Connect provider it still derives the pages'
    /// CSRF secret and the webhook secrets' sealing key.
    pub key_file: Option<PathBuf>,
    /// Which identity provider issues and verifies tokens: `builtin` (the default) or `oidc`.
    pub provider: IdentityProviderKind,
    /// The external OpenID Connect provider (with `provider` = `oidc`).
    pub oidc: OidcSettings,
}

/// Which identity provider adapter to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdentityProviderKind {
    /// The service is its own provider: Argon2id client secrets, EdDSA tokens, its own JWKS.
    #[default]
    Builtin,
    /// An external OpenID Connect provider (Keycloak, Auth0, Entra ID, Okta, ZITADEL…).
    Oidc,
}

/// The external OpenID Connect provider. Lists are comma-separated.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct OidcSettings {
    /// The issuer identifier, exactly as the tokens' `iss` (discovery is read from
    /// `<issuer>/.well-known/openid-configuration`). Required with `provider` = `oidc`;
    /// `https` in production.
    pub issuer: Option<String>,
    /// The `aud` tokens must carry; defaults to the identity section's `audience`.
    pub audience: Option<String>,
    /// Claims granting roles, dotted paths.
    pub role_claims: String,
    /// The name in those claims that grants SvcTerminal.
    pub terminal_role: String,
    /// Claims naming the client, the first present wins.
    pub client_claims: String,
    /// Accepted signature algorithms (asymmetric only: HMAC names are refused).
    pub algorithms: String,
    /// Clock skew tolerated on `exp` and `nbf`, seconds.
    pub leeway_seconds: u64,
    /// Time-out of each call to the provider, milliseconds.
    pub timeout_ms: u64,
    /// A token with an unknown key id refetches the keys at most once per this many seconds.
    pub key_refetch_seconds: u64,
    /// Keys older than this are fetched again in the background, seconds (a key the
    /// provider removed stops verifying within about this long).
    pub key_refresh_seconds: u64,
    /// How long fetched keys keep verifying while the provider cannot be reached, seconds.
    pub key_max_age_seconds: u64,
    /// Extra form parameters of the token request, `name=value&…` (e.g.
    /// `audience=hosted-checkout` for Auth0, `resource=…` for a provider with resource
    /// indicators).
    pub token_params: Option<String>,
    /// A PEM file of the certificate authorities of the provider's TLS certificate, trusted
    /// besides the public web roots (a provider behind a private CA).
    pub ca_file: Option<PathBuf>,
}

impl Default for OidcSettings {
    fn default() -> Self {
        OidcSettings {
            issuer: None,
            audience: None,
            role_claims: "roles,realm_access.roles,scope".into(),
            terminal_role: "SvcTerminal".into(),
            client_claims: "client_id,azp".into(),
            algorithms: "RS256,RS384,RS512,PS256,PS384,PS512,ES256,ES384,EdDSA".into(),
            leeway_seconds: 30,
            timeout_ms: 5000,
            key_refetch_seconds: 30,
            key_refresh_seconds: 300,
            key_max_age_seconds: 3600,
            token_params: None,
            ca_file: None,
        }
    }
}

/// The items of a comma-separated list, trimmed, empty ones dropped.
fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

impl OidcSettings {
    /// The accepted algorithms, refusing an unknown name or an HMAC one.
    pub fn algorithms(&self) -> anyhow::Result<Vec<checkout_identity::Algorithm>> {
        let algorithms = list(&self.algorithms)
            .iter()
            .map(|name| {
                let alg: checkout_identity::Algorithm = name
                    .parse()
                    .map_err(|_| anyhow::anyhow!("unknown algorithm {name:?}"))?;
                if name.starts_with("HS") {
                    bail!("{name} is symmetric: only asymmetric algorithms verify provider tokens");
                }
                Ok(alg)
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if algorithms.is_empty() {
            bail!("at least one algorithm is needed");
        }
        Ok(algorithms)
    }

    /// The role claims.
    pub fn role_claims(&self) -> Vec<String> {
        list(&self.role_claims)
    }

    /// The client claims.
    pub fn client_claims(&self) -> Vec<String> {
        list(&self.client_claims)
    }

    /// The extra token request parameters.
    pub fn token_params(&self) -> Vec<(String, String)> {
        self.token_params
            .as_deref()
            .map(|params| {
                url::form_urlencoded::parse(params.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Business settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct CheckoutSettings {
    /// `BaseUrlPaymentLink`: base of every payment link, ending in `/pay/link`; defaults to
    /// `{public_base_url}/pay/link`.
    pub base_url_payment_link: Option<String>,
    /// How long a payment link is payable, minutes.
    pub link_validity_minutes: u32,
    /// How long an integrated checkout session is payable, minutes.
    pub checkout_validity_minutes: u32,
    /// How often unpaid sessions past their expiry are swept, seconds.
    pub expiry_sweep_seconds: u32,
    /// How often the reconciliation sweep runs, seconds.
    pub reconcile_sweep_seconds: u32,
    /// How long after an authorisation is sent (or found unknown) reconciliation first asks
    /// the processor about it, seconds; the wait then doubles up to
    /// `reconcile_max_backoff_seconds`. Any value is safe (a replay while the request still
    /// runs gets a conflict and is rescheduled); more than a processor timeout saves calls.
    pub reconcile_after_seconds: u32,
    /// The longest wait between two reconciliation checks of one attempt, seconds.
    pub reconcile_max_backoff_seconds: u32,
    /// Attempts asked about per sweep, at most (one processor call each).
    pub reconcile_batch: u32,
    /// How long an authorisation is held uncaptured before the reconciliation sweep reads it
    /// at the processor to notice that it expired there (Stripe: 7 days), seconds; then again
    /// every `reconcile_max_backoff_seconds` while it stays held.
    pub reconcile_hold_check_after_seconds: u32,
    /// How long a running request holds its `Idempotency-Key`, seconds: a claim that neither
    /// saved nor released its key by then (the process died) lets the next request with the
    /// key run. Above the processor timeout; a money route's retry never moves money twice
    /// whatever this is (its key names one ledger row).
    pub idempotency_lease_seconds: u32,
    /// The earliest `expirationDateTime` a payment link request may ask for, minutes ahead.
    pub link_expiration_min_minutes: u32,
    /// The latest `expirationDateTime` a payment link request may ask for, minutes ahead.
    pub link_expiration_max_minutes: u32,
    /// The earliest `expirationDateTime` a start-payment request may ask for, minutes ahead.
    pub checkout_expiration_min_minutes: u32,
    /// The latest `expirationDateTime` a start-payment request may ask for, minutes ahead.
    pub checkout_expiration_max_minutes: u32,
}

/// Which card processor adapter to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessorKind {
    /// The in-process sandbox with test cards.
    #[default]
    Sandbox,
    /// Stripe's PaymentIntents API (real Stripe: localstripe refuses its `return_url`).
    Stripe,
}

/// The card processor.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ProcessorSettings {
    /// Adapter.
    pub kind: ProcessorKind,
    /// Stripe API base URL, parsed when the settings are read: a bad one is a configuration
    /// error at start.
    #[serde(deserialize_with = "optional_url")]
    pub stripe_base_url: Option<url::Url>,
    /// Stripe secret key (`Debug` prints a mask).
    pub stripe_api_key: Option<SecretString>,
    /// The signing secrets of the Stripe webhook endpoint that sends `/pay/api/processor-events`
    /// (`whsec_...`), comma-separated: the current one, and the previous one while rolling it.
    /// Unset: processor events are refused (404) and only the sweep reconciles.
    pub stripe_webhook_secrets: Option<SecretString>,
    /// How far a Stripe event signature's timestamp may be from now, seconds (default 300).
    pub stripe_webhook_tolerance_seconds: u32,
    /// Timeout of every processor call, milliseconds.
    pub timeout_ms: u64,
    /// Sandbox processor only: every call waits this long first, milliseconds (default 0).
    /// For measuring the service with a slow processor (`bench/run.sh`).
    pub sandbox_delay_ms: u64,
    /// The origins of the processor's 3DS pages, comma-separated: the card form may lead the
    /// browser there (`form-action`). Defaults, for Stripe, to `https://hooks.stripe.com`.
    pub challenge_origins: Option<String>,
}

/// The sandbox terminal and client provisioned at start in sandbox mode.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// Terminal number.
    pub terminal_number: String,
    /// Merchant name shown on the pages.
    pub merchant_name: String,
    /// OAuth client id.
    pub client_id: String,
    /// OAuth client secret; generated once and kept in the data folder when absent (`Debug`
    /// prints a mask).
    pub client_secret: Option<SecretString>,
}

/// Abuse limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct SecuritySettings {
    /// Token requests a minute per `client_id` (0: no limit).
    pub token_requests_per_client_per_minute: u32,
    /// Token requests a minute per source address (0: no limit).
    pub token_requests_per_address_per_minute: u32,
    /// Refused token requests a minute per `client_id` and source address (0: no limit):
    /// wrong secrets from one address do not lock the client out from the others.
    pub token_failures_per_client_address_per_minute: u32,
    /// Proxies (comma-separated addresses or CIDR networks) whose `X-Forwarded-For` names
    /// the client's address; empty (the default): the TCP peer is the client.
    pub trusted_proxies: String,
    /// Whether Swagger UI is served at `/swagger`; by default in the sandbox only.
    pub swagger_ui: Option<bool>,
    /// How long an instance trusts what it last read of a client's active flag when
    /// verifying its bearer tokens, milliseconds: a deactivated client's tokens stop working
    /// on every instance within this time.
    pub client_status_cache_ms: u64,
    /// The largest request body accepted, bytes (JSON API and card form alike).
    pub max_body_bytes: usize,
}

/// Merchant webhooks.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct WebhookSettings {
    /// How long one attempt waits for the answer (its status and first bytes), from the end
    /// of the host name lookup, milliseconds.
    pub timeout_ms: u64,
    /// How long one attempt may take to connect (TCP and TLS handshakes), milliseconds: a
    /// host that takes no connection is given up after this, not after `timeout_ms`.
    pub connect_timeout_ms: u64,
    /// How often the delivery workers look for due deliveries when idle, milliseconds (they
    /// also look whenever an attempt ends).
    pub poll_ms: u64,
    /// Attempts one instance makes at once (each on its own task, so that one that hangs
    /// holds only its own slot).
    pub workers: u32,
    /// The most deliveries one claim takes.
    pub batch: u32,
    /// Attempts in flight to one endpoint, counting every instance (one while its last
    /// attempt failed).
    pub endpoint_in_flight: u32,
    /// Attempts in flight to one terminal's endpoints together, counting every instance;
    /// below `workers`, so that one terminal never takes every slot of an instance.
    pub terminal_in_flight: u32,
    /// Failed attempts in a row that open an endpoint's circuit.
    pub circuit_failures: u32,
    /// How long a circuit stays open the first time in a run of failures, seconds (doubling
    /// at each later opening; multiplied by `time_scale`).
    pub circuit_open_seconds: u64,
    /// The longest a circuit stays open at once, seconds (multiplied by `time_scale`).
    pub circuit_max_open_seconds: u64,
    /// How long an endpoint may fail without a delivered attempt before it is disabled,
    /// seconds (not scaled).
    pub disable_after_seconds: u64,
    /// The most live endpoints a terminal may have.
    pub max_endpoints: u32,
    /// Redeliveries of one event a terminal may ask for in an hour.
    pub redeliveries_per_event_per_hour: u32,
    /// Redeliveries of any of its events a terminal may ask for in an hour.
    pub redeliveries_per_terminal_per_hour: u32,
    /// Whether webhook URLs may point at loopback and private addresses (plain `http` too).
    /// By default only in a sandbox served on loopback (no public base URL); it cannot be
    /// turned on for a sandbox with a public base URL, and never in production.
    pub private_targets: Option<bool>,
    /// The waits after each failed attempt, seconds, comma-separated, each more than 1.5
    /// times the one before; the default spans about three days.
    pub schedule_seconds: String,
    /// Every wait of the schedule is multiplied by this (1 in production; tests run the
    /// schedule in seconds).
    pub time_scale: f64,
    /// How long a rotated-out secret keeps signing beside the new one, seconds.
    pub secret_overlap_seconds: u32,
}

impl WebhookSettings {
    /// The retry schedule.
    pub fn schedule(&self) -> anyhow::Result<checkout_domain::webhooks::RetrySchedule> {
        retry_schedule(
            &self.schedule_seconds,
            self.time_scale,
            "CHECKOUT__WEBHOOKS__SCHEDULE_SECONDS",
        )
    }
}

/// A retry schedule from `seconds` (comma-separated waits) scaled by `time_scale`; errors
/// name the setting `name`.
pub fn retry_schedule(
    seconds: &str,
    time_scale: f64,
    name: &str,
) -> anyhow::Result<checkout_domain::webhooks::RetrySchedule> {
    let waits = seconds
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.parse::<u64>()
                .map(std::time::Duration::from_secs)
                .with_context(|| format!("{name}: {w:?}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    checkout_domain::webhooks::RetrySchedule::new(waits, time_scale)
        .with_context(|| format!("{name} or its TIME_SCALE"))
}

/// E-mail receipts (`CHECKOUT__MAIL__*`): the SMTP server they are sent through. With no
/// `smtp_host` (the default) nothing is sent: receipts stay in the outbox, which
/// `checkout mail list` shows.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct MailSettings {
    /// The SMTP server's host name; `None`: send nothing.
    pub smtp_host: Option<String>,
    /// Its port; by default that of the TLS mode (587, 465, 25).
    pub smtp_port: Option<u16>,
    /// `starttls` (the default), `tls` (implicit TLS), or `none` (plain SMTP: in production
    /// only to a relay on loopback).
    pub smtp_tls: String,
    /// The user to log in as, if the server asks for a login.
    pub smtp_user: Option<String>,
    /// Its password (masked in `Debug`, never logged); or use `smtp_password_file`.
    pub smtp_password: Option<SecretString>,
    /// A file holding the password (a trailing newline is dropped).
    pub smtp_password_file: Option<PathBuf>,
    /// The sender (`From`), such as `Receipts <receipts@pay.example>`; required in
    /// production when a host is set.
    pub from: Option<String>,
    /// How long one sending may take, milliseconds.
    pub timeout_ms: u64,
    /// How often the worker looks for due receipts, milliseconds.
    pub poll_ms: u64,
    /// The most receipts one look takes (sent one after the other).
    pub batch: u32,
    /// The waits after each failed sending, seconds, comma-separated, each more than 1.5
    /// times the one before; the default spans about 20 hours.
    pub schedule_seconds: String,
    /// Every wait is multiplied by this (1 in production; tests run in seconds).
    pub time_scale: f64,
}

impl Default for MailSettings {
    fn default() -> Self {
        MailSettings {
            smtp_host: None,
            smtp_port: None,
            smtp_tls: "starttls".into(),
            smtp_user: None,
            smtp_password: None,
            smtp_password_file: None,
            from: None,
            timeout_ms: 15_000,
            poll_ms: 2_000,
            batch: 10,
            schedule_seconds: "60,300,1800,7200,21600,43200".into(),
            time_scale: 1.0,
        }
    }
}

/// The Prometheus metrics listener.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct MetricsSettings {
    /// `host:port` to serve `GET /metrics` on, apart from the public listener (port 0: any
    /// free port); `None` (the default): no metrics listener. Keep it on loopback or a
    /// private network.
    pub address: Option<String>,
}

/// Every setting of the server.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Sandbox or production.
    #[serde(deserialize_with = "environment")]
    pub environment: Environment,
    /// Folder for the sandbox database, keys and credentials.
    pub data_dir: PathBuf,
    /// HTTP listener.
    pub server: ServerSettings,
    /// Database.
    pub database: DatabaseSettings,
    /// Tokens.
    pub identity: IdentitySettings,
    /// Business settings.
    pub checkout: CheckoutSettings,
    /// Card processor.
    pub processor: ProcessorSettings,
    /// Sandbox provisioning.
    pub sandbox: SandboxSettings,
    /// Abuse limits.
    pub security: SecuritySettings,
    /// Merchant webhooks.
    pub webhooks: WebhookSettings,
    /// Metrics.
    pub metrics: MetricsSettings,
    /// The card-testing guard.
    pub guard: GuardSettings,
    /// E-mail receipts.
    pub mail: MailSettings,
}

/// The card-testing guard (`CHECKOUT__GUARD__*`): thresholds and windows; their defaults are
/// justified in `docs/decisions/0014-card-testing-guard.md`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct GuardSettings {
    /// On by default; off only for a load test of the processor path.
    pub enabled: bool,
    /// The secret of the card fingerprints, address keys and proof-of-work signatures (at
    /// least 32 characters, the same on every instance); by default derived from the signing
    /// key (a sandbox's is generated and kept in its data folder on first start).
    pub secret: Option<SecretString>,
    /// Declines per client address are counted over this many minutes.
    pub address_window_minutes: u32,
    /// One card's declining sessions and terminals are counted over this many hours.
    pub card_window_hours: u32,
    /// A terminal's decline rate is taken over this many minutes.
    pub terminal_window_minutes: u32,
    /// Declines in one session from which its posts are challenged.
    pub session_challenge: u32,
    /// Declines from one address from which its posts are challenged.
    pub address_challenge: u32,
    /// Declines from one address from which its posts are refused (429).
    pub address_refuse: u32,
    /// Sessions (or terminals) that declined one card from which it is refused everywhere.
    pub card_refuse: u32,
    /// A terminal spikes with at least this many declines in its window ...
    pub terminal_min_declines: u32,
    /// ... making at least this percentage of its processor answers.
    pub terminal_rate_percent: u32,
    /// How long a proof-of-work challenge may be answered, seconds.
    pub challenge_validity_seconds: u32,
    /// The challenge's number range: a browser tries half of it on average.
    pub proof_max_number: u64,
}

/// A whole number of a default duration's units, as the settings count them.
fn whole(n: i64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Default for GuardSettings {
    fn default() -> Self {
        let p = checkout_domain::guard::GuardPolicy::default();
        GuardSettings {
            enabled: true,
            secret: None,
            address_window_minutes: whole(p.windows.address.whole_minutes()),
            card_window_hours: whole(p.windows.card.whole_hours()),
            terminal_window_minutes: whole(p.windows.terminal.whole_minutes()),
            session_challenge: p.session_challenge,
            address_challenge: p.address_challenge,
            address_refuse: p.address_refuse,
            card_refuse: p.card_refuse,
            terminal_min_declines: p.terminal_min_declines,
            terminal_rate_percent: p.terminal_rate_percent,
            challenge_validity_seconds: whole(p.challenge_validity.whole_seconds()),
            proof_max_number: p.proof_max_number,
        }
    }
}

impl GuardSettings {
    /// The domain's policy of these settings.
    pub fn policy(&self) -> checkout_domain::guard::GuardPolicy {
        use time::Duration;
        checkout_domain::guard::GuardPolicy {
            windows: checkout_domain::guard::GuardWindows {
                address: Duration::minutes(i64::from(self.address_window_minutes)),
                card: Duration::hours(i64::from(self.card_window_hours)),
                terminal: Duration::minutes(i64::from(self.terminal_window_minutes)),
            },
            session_challenge: self.session_challenge,
            address_challenge: self.address_challenge,
            address_refuse: self.address_refuse,
            card_refuse: self.card_refuse,
            terminal_min_declines: self.terminal_min_declines,
            terminal_rate_percent: self.terminal_rate_percent,
            challenge_validity: Duration::seconds(i64::from(self.challenge_validity_seconds)),
            proof_max_number: self.proof_max_number,
        }
    }

    fn validate(&self) -> anyhow::Result<()> {
        let week_minutes = 7 * 24 * 60;
        if self.address_window_minutes == 0
            || self.terminal_window_minutes == 0
            || self.card_window_hours == 0
            || self.address_window_minutes > week_minutes
            || self.terminal_window_minutes > week_minutes
            || self.card_window_hours > 7 * 24
        {
            bail!(
                "CHECKOUT__GUARD__*_WINDOW_*: each window is between one minute (hour) and 7 days"
            );
        }
        let thresholds = [
            self.session_challenge,
            self.address_challenge,
            self.card_refuse,
            self.terminal_min_declines,
        ];
        if thresholds.contains(&0) || self.address_refuse < self.address_challenge {
            bail!("CHECKOUT__GUARD__*: thresholds are at least 1, and ADDRESS_REFUSE is at least ADDRESS_CHALLENGE");
        }
        if self.terminal_rate_percent > 100
            || self.proof_max_number == 0
            || self.challenge_validity_seconds == 0
        {
            bail!("CHECKOUT__GUARD__TERMINAL_RATE_PERCENT is at most 100; PROOF_MAX_NUMBER and CHALLENGE_VALIDITY_SECONDS are at least 1");
        }
        if let Some(secret) = &self.secret {
            if secrecy::ExposeSecret::expose_secret(secret).len() < 32 {
                bail!("CHECKOUT__GUARD__SECRET must be at least 32 characters");
            }
        }
        Ok(())
    }
}

/// Where Stripe sends payers for a 3DS challenge (`next_action.redirect_to_url`).
const STRIPE_CHALLENGE_ORIGINS: &str = "https://hooks.stripe.com";

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            host: "127.0.0.1".into(),
            port: 8080,
            workers: None,
            public_base_url: None,
            shutdown_grace_ms: 5000,
            shutdown_timeout_seconds: 30,
        }
    }
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        let pool = checkout_postgres::PoolSettings::new(16);
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        DatabaseSettings {
            url: None,
            pool_size: pool.max_size,
            ca_file: None,
            connect_timeout_ms: ms(pool.connect_timeout),
            checkout_timeout_ms: ms(pool.checkout_timeout),
            tcp_user_timeout_ms: ms(pool.tcp_user_timeout),
            keepalives_idle_ms: ms(pool.keepalives_idle),
            keepalives_interval_ms: ms(pool.keepalives_interval),
            keepalives_retries: pool.keepalives_retries,
            statement_timeout_ms: ms(pool.statement_timeout),
            idle_in_transaction_timeout_ms: ms(pool.idle_in_transaction_timeout),
            answer_timeout_ms: ms(pool.answer_timeout),
        }
    }
}

impl Default for IdentitySettings {
    fn default() -> Self {
        IdentitySettings {
            issuer: None,
            audience: "hosted-checkout".into(),
            token_lifetime_seconds: 3600,
            key_file: None,
            provider: IdentityProviderKind::Builtin,
            oidc: OidcSettings::default(),
        }
    }
}

impl Default for CheckoutSettings {
    fn default() -> Self {
        CheckoutSettings {
            base_url_payment_link: None,
            link_validity_minutes: 1440,
            checkout_validity_minutes: 60,
            expiry_sweep_seconds: 60,
            reconcile_sweep_seconds: 15,
            reconcile_after_seconds: 30,
            reconcile_max_backoff_seconds: 3600,
            reconcile_batch: 50,
            reconcile_hold_check_after_seconds: 7 * 24 * 3600,
            idempotency_lease_seconds: 60,
            link_expiration_min_minutes: 5,
            link_expiration_max_minutes: 43_200,
            checkout_expiration_min_minutes: 5,
            checkout_expiration_max_minutes: 1440,
        }
    }
}

impl Default for ProcessorSettings {
    fn default() -> Self {
        ProcessorSettings {
            kind: ProcessorKind::Sandbox,
            stripe_base_url: None,
            stripe_api_key: None,
            stripe_webhook_secrets: None,
            stripe_webhook_tolerance_seconds: 300,
            timeout_ms: 10_000,
            sandbox_delay_ms: 0,
            challenge_origins: None,
        }
    }
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            terminal_number: "SANDBOX-001".into(),
            merchant_name: "Sandbox Merchant".into(),
            client_id: "sandbox-client".into(),
            client_secret: None,
        }
    }
}

impl Default for SecuritySettings {
    fn default() -> Self {
        SecuritySettings {
            token_requests_per_client_per_minute: 20,
            token_requests_per_address_per_minute: 120,
            token_failures_per_client_address_per_minute: 10,
            trusted_proxies: String::new(),
            swagger_ui: None,
            client_status_cache_ms: 1000,
            max_body_bytes: 65_536,
        }
    }
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            timeout_ms: 15_000,
            connect_timeout_ms: 3_000,
            poll_ms: 1000,
            workers: 16,
            batch: 8,
            endpoint_in_flight: 4,
            terminal_in_flight: 8,
            circuit_failures: 5,
            circuit_open_seconds: 60,
            circuit_max_open_seconds: 3600,
            disable_after_seconds: 5 * 86_400,
            max_endpoints: 16,
            redeliveries_per_event_per_hour: 5,
            redeliveries_per_terminal_per_hour: 100,
            private_targets: None,
            schedule_seconds: "5,30,120,600,1800,3600,7200,14400,28800,57600,115200".into(),
            time_scale: 1.0,
            secret_overlap_seconds: 86_400,
        }
    }
}

impl Default for Settings {
    /// A sandbox on 127.0.0.1:8080 with its data in `.data`.
    fn default() -> Self {
        Settings {
            environment: Environment::Sandbox,
            data_dir: PathBuf::from(".data"),
            server: ServerSettings::default(),
            database: DatabaseSettings::default(),
            identity: IdentitySettings::default(),
            checkout: CheckoutSettings::default(),
            processor: ProcessorSettings::default(),
            sandbox: SandboxSettings::default(),
            security: SecuritySettings::default(),
            webhooks: WebhookSettings::default(),
            metrics: MetricsSettings::default(),
            guard: GuardSettings::default(),
            mail: MailSettings::default(),
        }
    }
}

fn merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o,
    }
}

/// An override value: JSON when it parses as a number, boolean or null, else a string.
fn env_value(raw: &str) -> Value {
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ (Value::Number(_) | Value::Bool(_) | Value::Null)) => v,
        _ => Value::String(raw.to_owned()),
    }
}

impl Settings {
    /// Loads from the process environment.
    pub fn load() -> anyhow::Result<Settings> {
        Settings::from_sources(std::env::vars())
    }

    /// Loads from the given environment variables (for tests).
    pub fn from_sources(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> anyhow::Result<Settings> {
        // What no source sets takes the default on its field (`Default` of each section).
        let mut value = Value::Object(Map::new());
        let vars: Vec<(String, String)> = vars.into_iter().collect();
        if let Some((_, path)) = vars.iter().find(|(k, _)| k == "CHECKOUT_CONFIG") {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
            let file: Value =
                serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
            merge(&mut value, file);
        }
        for (key, raw) in &vars {
            let path: Vec<String> = match key.strip_prefix("CHECKOUT__") {
                Some(rest) => rest.split("__").map(str::to_ascii_lowercase).collect(),
                None if key == "DATABASE_URL" => vec!["database".into(), "url".into()],
                None => continue,
            };
            let mut overlay = env_value(raw);
            for segment in path.iter().rev() {
                let mut map = Map::new();
                map.insert(segment.clone(), overlay);
                overlay = Value::Object(map);
            }
            merge(&mut value, overlay);
        }
        let settings: Settings = serde_json::from_value(value).context("invalid settings")?;
        settings.validate()?;
        Ok(settings)
    }

    fn validate(&self) -> anyhow::Result<()> {
        self.guard.validate()?;
        self.mail.smtp(self.environment)?;
        if self.environment == Environment::Production {
            if self.database.url.is_none() {
                bail!("production needs DATABASE_URL (or CHECKOUT__DATABASE__URL)");
            }
            if self.identity.key_file.is_none() {
                bail!("production needs CHECKOUT__IDENTITY__KEY_FILE");
            }
            if self.server.public_base_url.is_none() {
                bail!("production needs CHECKOUT__SERVER__PUBLIC_BASE_URL");
            }
            if self.processor.kind == ProcessorKind::Sandbox {
                bail!("production cannot use the sandbox card processor");
            }
        }
        if self.processor.kind == ProcessorKind::Stripe
            && (self.processor.stripe_base_url.is_none() || self.processor.stripe_api_key.is_none())
        {
            bail!("the stripe processor needs CHECKOUT__PROCESSOR__STRIPE_BASE_URL and CHECKOUT__PROCESSOR__STRIPE_API_KEY");
        }
        if self.checkout.reconcile_batch == 0 || self.checkout.reconcile_max_backoff_seconds == 0 {
            bail!("reconcile_batch and reconcile_max_backoff_seconds must be positive");
        }
        if self.checkout.idempotency_lease_seconds == 0 {
            bail!("idempotency_lease_seconds must be positive");
        }
        self.webhooks.schedule()?;
        let w = &self.webhooks;
        if [
            w.workers,
            w.batch,
            w.endpoint_in_flight,
            w.terminal_in_flight,
            w.circuit_failures,
            w.max_endpoints,
            w.redeliveries_per_event_per_hour,
            w.redeliveries_per_terminal_per_hour,
        ]
        .contains(&0)
            || [w.poll_ms, w.timeout_ms, w.connect_timeout_ms].contains(&0)
        {
            bail!("every CHECKOUT__WEBHOOKS__ count, limit and time-out must be positive");
        }
        if w.terminal_in_flight >= w.workers {
            bail!(
                "CHECKOUT__WEBHOOKS__TERMINAL_IN_FLIGHT must be below CHECKOUT__WEBHOOKS__WORKERS, \
                 so that one terminal never takes every attempt slot of an instance"
            );
        }
        if w.circuit_open_seconds > w.circuit_max_open_seconds {
            bail!("CHECKOUT__WEBHOOKS__CIRCUIT_OPEN_SECONDS must be at most __CIRCUIT_MAX_OPEN_SECONDS");
        }
        if w.private_targets == Some(true) && !self.served_on_loopback() {
            bail!(
                "CHECKOUT__WEBHOOKS__PRIVATE_TARGETS can be on only in a sandbox served on loopback \
                 (no public base URL): a hosted sandbox must not post to its own network"
            );
        }
        let c = &self.checkout;
        if c.link_expiration_min_minutes > c.link_expiration_max_minutes
            || c.checkout_expiration_min_minutes > c.checkout_expiration_max_minutes
        {
            bail!("each *_expiration_min_minutes must be at most its *_expiration_max_minutes");
        }
        checkout_http::client_address::TrustedProxies::parse(&self.security.trusted_proxies)
            .context("CHECKOUT__SECURITY__TRUSTED_PROXIES")?;
        if self.security.max_body_bytes < 1024 {
            bail!("CHECKOUT__SECURITY__MAX_BODY_BYTES must be at least 1024");
        }
        if let Some(address) = &self.metrics.address {
            if address.parse::<std::net::SocketAddr>().is_err() {
                bail!("CHECKOUT__METRICS__ADDRESS must be an IP address and port, such as 127.0.0.1:9464");
            }
        }
        if self.identity.provider == IdentityProviderKind::Oidc {
            let oidc = &self.identity.oidc;
            let Some(issuer) = &oidc.issuer else {
                bail!("the oidc identity provider needs CHECKOUT__IDENTITY__OIDC__ISSUER");
            };
            let url = url::Url::parse(issuer).context("CHECKOUT__IDENTITY__OIDC__ISSUER")?;
            if self.environment == Environment::Production && url.scheme() != "https" {
                bail!("production needs an https CHECKOUT__IDENTITY__OIDC__ISSUER");
            }
            oidc.algorithms()
                .context("CHECKOUT__IDENTITY__OIDC__ALGORITHMS")?;
            if oidc.client_claims().is_empty() || oidc.role_claims().is_empty() {
                bail!("CHECKOUT__IDENTITY__OIDC__CLIENT_CLAIMS and __ROLE_CLAIMS must name claims");
            }
            if oidc.timeout_ms == 0 || oidc.key_max_age_seconds == 0 {
                bail!("CHECKOUT__IDENTITY__OIDC__TIMEOUT_MS and __KEY_MAX_AGE_SECONDS must be positive");
            }
        }
        if self.database.pool_size == 0 || self.identity.token_lifetime_seconds == 0 {
            bail!("pool_size and token_lifetime_seconds must be positive");
        }
        let d = &self.database;
        if [
            d.connect_timeout_ms,
            d.checkout_timeout_ms,
            d.tcp_user_timeout_ms,
            d.keepalives_idle_ms,
            d.keepalives_interval_ms,
            d.statement_timeout_ms,
            d.idle_in_transaction_timeout_ms,
        ]
        .contains(&0)
            || d.keepalives_retries == 0
            || d.answer_timeout_ms <= d.statement_timeout_ms
        {
            bail!(
                "CHECKOUT__DATABASE__*_MS and KEEPALIVES_RETRIES must be positive, and \
                 ANSWER_TIMEOUT_MS longer than STATEMENT_TIMEOUT_MS"
            );
        }
        Ok(())
    }

    /// The origins the card form may send the browser to besides the merchant's: the
    /// processor's API origin and its 3DS pages (Stripe's by default).
    pub fn processor_origins(&self) -> Vec<String> {
        if self.processor.kind != ProcessorKind::Stripe {
            return Vec::new();
        }
        let mut origins: Vec<String> = self
            .processor
            .stripe_base_url
            .iter()
            .map(|u| u.origin().ascii_serialization())
            .collect();
        let configured = self
            .processor
            .challenge_origins
            .as_deref()
            .unwrap_or(STRIPE_CHALLENGE_ORIGINS);
        for origin in configured
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
        {
            if !origins.iter().any(|known| known == origin) {
                origins.push(origin.to_owned());
            }
        }
        origins
    }

    /// The public base URL, given the port actually bound.
    pub fn public_base_url(&self, bound_port: u16) -> String {
        self.server
            .public_base_url
            .clone()
            .unwrap_or_else(|| format!("http://{}:{}", self.server.host, bound_port))
            .trim_end_matches('/')
            .to_owned()
    }

    /// Whether Swagger UI is served: as set, else in the sandbox only.
    pub fn swagger_ui(&self) -> bool {
        self.security
            .swagger_ui
            .unwrap_or(self.environment == Environment::Sandbox)
    }

    /// True for a sandbox that only its own machine reaches: it listens on a loopback
    /// address, and its public base URL (if set) names a loopback host.
    pub fn served_on_loopback(&self) -> bool {
        fn loopback(host: &str) -> bool {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host.eq_ignore_ascii_case("localhost")
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        let base_is_loopback = match &self.server.public_base_url {
            None => true,
            Some(base) => url::Url::parse(base)
                .ok()
                .and_then(|u| u.host_str().map(loopback))
                .unwrap_or(false),
        };
        self.environment == Environment::Sandbox && loopback(&self.server.host) && base_is_loopback
    }

    /// Whether webhook URLs may point at loopback and private addresses: as set, else in a
    /// sandbox served on loopback; never elsewhere (`validate` refuses it on).
    pub fn webhook_private_targets(&self) -> bool {
        self.served_on_loopback() && self.webhooks.private_targets.unwrap_or(true)
    }

    /// The token issuer.
    pub fn issuer(&self) -> String {
        self.identity
            .issuer
            .clone()
            .unwrap_or_else(|| format!("hosted-checkout-{}", self.environment.as_str()))
    }

    /// The signing key file.
    pub fn key_file(&self) -> PathBuf {
        self.identity.key_file.clone().unwrap_or_else(|| {
            self.data_dir
                .join("keys")
                .join(format!("{}.pk8", self.environment.as_str()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_settings_default_to_the_domains_policy() {
        assert_eq!(
            GuardSettings::default().policy(),
            checkout_domain::guard::GuardPolicy::default()
        );
    }

    #[test]
    fn the_database_bounds_default_to_the_pools_and_are_checked() {
        assert_eq!(
            DatabaseSettings::default().pool(),
            checkout_postgres::PoolSettings::new(16)
        );
        let s = Settings::from_sources(vars(&[
            ("CHECKOUT__DATABASE__TCP_USER_TIMEOUT_MS", "2500"),
            ("CHECKOUT__DATABASE__STATEMENT_TIMEOUT_MS", "3000"),
            ("CHECKOUT__DATABASE__ANSWER_TIMEOUT_MS", "4000"),
        ]))
        .unwrap();
        let pool = s.database.pool();
        assert_eq!(
            pool.tcp_user_timeout,
            std::time::Duration::from_millis(2500)
        );
        assert_eq!(pool.answer_timeout, std::time::Duration::from_secs(4));
        // An answer bound at or below the statement time-out would close live connections.
        let err =
            Settings::from_sources(vars(&[("CHECKOUT__DATABASE__ANSWER_TIMEOUT_MS", "5000")]))
                .unwrap_err();
        assert!(err.to_string().contains("ANSWER_TIMEOUT_MS"), "{err}");
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_builtin_provider_is_the_default_and_oidc_is_chosen_and_checked() {
        let default = Settings::from_sources(vars(&[])).unwrap();
        assert_eq!(default.identity.provider, IdentityProviderKind::Builtin);
        let oidc = Settings::from_sources(vars(&[
            ("CHECKOUT__IDENTITY__PROVIDER", "oidc"),
            ("CHECKOUT__IDENTITY__OIDC__ISSUER", "http://127.0.0.1:9999"),
            (
                "CHECKOUT__IDENTITY__OIDC__ROLE_CLAIMS",
                "realm_access.roles, scope",
            ),
            ("CHECKOUT__IDENTITY__OIDC__ALGORITHMS", "RS256,ES256"),
            (
                "CHECKOUT__IDENTITY__OIDC__TOKEN_PARAMS",
                "audience=hosted-checkout&scope=a+b",
            ),
        ]))
        .unwrap();
        assert_eq!(oidc.identity.provider, IdentityProviderKind::Oidc);
        assert_eq!(
            oidc.identity.oidc.role_claims(),
            vec!["realm_access.roles", "scope"]
        );
        assert_eq!(oidc.identity.oidc.algorithms().unwrap().len(), 2);
        assert_eq!(
            oidc.identity.oidc.token_params(),
            vec![
                ("audience".to_owned(), "hosted-checkout".to_owned()),
                ("scope".to_owned(), "a b".to_owned())
            ]
        );
        for bad in [
            vec![("CHECKOUT__IDENTITY__PROVIDER", "oidc")],
            vec![
                ("CHECKOUT__IDENTITY__PROVIDER", "oidc"),
                ("CHECKOUT__IDENTITY__OIDC__ISSUER", "http://127.0.0.1:9999"),
                ("CHECKOUT__IDENTITY__OIDC__ALGORITHMS", "RS256,HS256"),
            ],
            vec![
                ("CHECKOUT__IDENTITY__PROVIDER", "oidc"),
                ("CHECKOUT__IDENTITY__OIDC__ISSUER", "http://127.0.0.1:9999"),
                ("CHECKOUT__IDENTITY__OIDC__ALGORITHMS", "none"),
            ],
            vec![("CHECKOUT__IDENTITY__PROVIDER", "keycloak")],
        ] {
            assert!(Settings::from_sources(vars(&bad)).is_err(), "{bad:?}");
        }
        // Production takes an https issuer only.
        let production = |issuer: &'static str| {
            vars(&[
                ("CHECKOUT__ENVIRONMENT", "production"),
                ("DATABASE_URL", "postgres://db/checkout"),
                ("CHECKOUT__IDENTITY__KEY_FILE", "/etc/checkout/key.pem"),
                ("CHECKOUT__SERVER__PUBLIC_BASE_URL", "https://pay.example"),
                ("CHECKOUT__PROCESSOR__KIND", "stripe"),
                (
                    "CHECKOUT__PROCESSOR__STRIPE_BASE_URL",
                    "https://api.stripe.com",
                ),
                ("CHECKOUT__PROCESSOR__STRIPE_API_KEY", "sk_live_x"),
                ("CHECKOUT__IDENTITY__PROVIDER", "oidc"),
                ("CHECKOUT__IDENTITY__OIDC__ISSUER", issuer),
            ])
        };
        assert!(Settings::from_sources(production("https://sso.example/realms/payments")).is_ok());
        assert!(Settings::from_sources(production("http://sso.example/realms/payments")).is_err());
    }

    #[test]
    fn defaults_are_a_sandbox_on_8080() {
        let s = Settings::from_sources(vars(&[])).unwrap();
        assert_eq!(s.environment, Environment::Sandbox);
        assert_eq!(s.server.port, 8080);
        assert!(s.database.url.is_none());
        assert_eq!(s.public_base_url(8080), "http://127.0.0.1:8080");
    }

    #[test]
    fn a_section_set_in_part_keeps_the_defaults_of_its_other_fields() {
        let s = Settings::from_sources(vars(&[("CHECKOUT__WEBHOOKS__WORKERS", "20")])).unwrap();
        assert_eq!((s.webhooks.workers, s.webhooks.batch), (20, 8));
        assert_eq!(
            s.webhooks.schedule().unwrap(),
            WebhookSettings::default().schedule().unwrap()
        );
        assert_eq!(s.checkout.reconcile_batch, 50);
        assert_eq!(s.security.max_body_bytes, 65_536);
    }

    #[test]
    fn environment_overrides_nested_fields() {
        let s = Settings::from_sources(vars(&[
            ("CHECKOUT__SERVER__PORT", "0"),
            ("DATABASE_URL", "postgres://x@/db"),
            ("CHECKOUT__SANDBOX__CLIENT_SECRET", "s3cret"),
        ]))
        .unwrap();
        assert_eq!(s.server.port, 0);
        assert_eq!(
            s.database
                .url
                .as_ref()
                .map(secrecy::ExposeSecret::expose_secret),
            Some("postgres://x@/db")
        );
        assert_eq!(
            s.sandbox
                .client_secret
                .as_ref()
                .map(secrecy::ExposeSecret::expose_secret),
            Some("s3cret")
        );
        // Secrets never appear in the settings' Debug output.
        assert!(!format!("{s:?}").contains("s3cret"));
        assert!(!format!("{s:?}").contains("postgres://x@/db"));
    }

    #[test]
    fn production_refuses_missing_database_and_sandbox_processor() {
        let err =
            Settings::from_sources(vars(&[("CHECKOUT__ENVIRONMENT", "production")])).unwrap_err();
        assert!(err.to_string().contains("DATABASE_URL"));
        let err = Settings::from_sources(vars(&[
            ("CHECKOUT__ENVIRONMENT", "production"),
            ("DATABASE_URL", "postgres://x@/db"),
            ("CHECKOUT__IDENTITY__KEY_FILE", "/k"),
            ("CHECKOUT__SERVER__PUBLIC_BASE_URL", "https://pay.example"),
        ]))
        .unwrap_err();
        assert!(err.to_string().contains("sandbox card processor"));
    }

    #[test]
    fn one_terminal_never_takes_every_webhook_slot_of_an_instance() {
        let s = Settings::from_sources(vars(&[])).unwrap();
        assert!(s.webhooks.terminal_in_flight < s.webhooks.workers);
        let err =
            Settings::from_sources(vars(&[("CHECKOUT__WEBHOOKS__WORKERS", "8")])).unwrap_err();
        assert!(err.to_string().contains("TERMINAL_IN_FLIGHT"), "{err}");
        assert!(
            Settings::from_sources(vars(&[("CHECKOUT__WEBHOOKS__MAX_ENDPOINTS", "0")])).is_err()
        );
    }

    #[test]
    fn private_webhook_targets_only_in_a_sandbox_served_on_loopback() {
        let on = |pairs: &[(&str, &str)]| {
            Settings::from_sources(vars(pairs))
                .unwrap()
                .webhook_private_targets()
        };
        // The sandbox the README starts.
        assert!(on(&[]));
        assert!(on(&[(
            "CHECKOUT__SERVER__PUBLIC_BASE_URL",
            "http://localhost:8080"
        )]));
        assert!(on(&[("CHECKOUT__SERVER__HOST", "::1")]));
        // Turned off by hand.
        assert!(!on(&[("CHECKOUT__WEBHOOKS__PRIVATE_TARGETS", "false")]));
        // A hosted sandbox: off, and it cannot be turned on.
        for hosted in [
            vec![(
                "CHECKOUT__SERVER__PUBLIC_BASE_URL",
                "https://sandbox.pay.example",
            )],
            vec![("CHECKOUT__SERVER__HOST", "0.0.0.0")],
        ] {
            assert!(!on(&hosted), "{hosted:?}");
            let mut forced = hosted.clone();
            forced.push(("CHECKOUT__WEBHOOKS__PRIVATE_TARGETS", "true"));
            let err = Settings::from_sources(vars(&forced)).unwrap_err();
            assert!(err.to_string().contains("PRIVATE_TARGETS"), "{err}");
        }
        // Production: never.
        let production = vars(&[
            ("CHECKOUT__ENVIRONMENT", "production"),
            ("DATABASE_URL", "postgres://db/checkout"),
            ("CHECKOUT__IDENTITY__KEY_FILE", "/etc/checkout/key.pem"),
            ("CHECKOUT__SERVER__PUBLIC_BASE_URL", "http://127.0.0.1:8080"),
            ("CHECKOUT__PROCESSOR__KIND", "stripe"),
            (
                "CHECKOUT__PROCESSOR__STRIPE_BASE_URL",
                "https://api.stripe.com",
            ),
            ("CHECKOUT__PROCESSOR__STRIPE_API_KEY", "sk_live_x"),
        ]);
        assert!(!Settings::from_sources(production.clone())
            .unwrap()
            .webhook_private_targets());
        let mut forced = production;
        forced.push(("CHECKOUT__WEBHOOKS__PRIVATE_TARGETS".into(), "true".into()));
        assert!(Settings::from_sources(forced).is_err());
    }

    #[test]
    fn metrics_are_off_unless_given_an_address() {
        let s = Settings::from_sources(vars(&[])).unwrap();
        assert!(s.metrics.address.is_none());
        let s =
            Settings::from_sources(vars(&[("CHECKOUT__METRICS__ADDRESS", "127.0.0.1:0")])).unwrap();
        assert_eq!(s.metrics.address.as_deref(), Some("127.0.0.1:0"));
        assert!(
            Settings::from_sources(vars(&[("CHECKOUT__METRICS__ADDRESS", "localhost")])).is_err()
        );
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(Settings::from_sources(vars(&[("CHECKOUT__SERVER__PORT", "eighty")])).is_err());
        assert!(Settings::from_sources(vars(&[("CHECKOUT__ENVIRONMENT", "staging")])).is_err());
    }

    #[test]
    fn the_stripe_url_is_parsed_once_when_read() {
        let stripe = |url: &'static str| {
            Settings::from_sources(vars(&[
                ("CHECKOUT__PROCESSOR__KIND", "stripe"),
                ("CHECKOUT__PROCESSOR__STRIPE_BASE_URL", url),
                ("CHECKOUT__PROCESSOR__STRIPE_API_KEY", "sk_test_x"),
            ]))
        };
        // A bad URL is an error at start, not an origin silently left out of the CSP.
        let err = stripe("not a url").unwrap_err();
        assert!(format!("{err:#}").contains("not a URL"), "{err:#}");
        let s = stripe("http://127.0.0.1:8420/").unwrap();
        assert_eq!(s.processor_origins()[0], "http://127.0.0.1:8420");
    }
}
