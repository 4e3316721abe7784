//! The running service: database, adapters, use cases, HTTP server, background sweeps.

use std::io::Write;
use std::net::TcpListener;
use std::time::Duration;

use actix_web::{web, HttpServer};
use checkout_http::client_address::TrustedProxies;
use checkout_http::pages::{Pages, PagesConfig};
use checkout_http::rate_limit::AuthLimits;
use checkout_http::AppState;
use checkout_pg_cluster::LocalCluster;

use crate::health::{DatabaseReadiness, Draining};
use crate::metrics::MetricsServer;
use crate::sandbox::SandboxCredentials;
use crate::settings::{Environment, ProcessorKind, Settings};
use crate::{database, sandbox, wiring};

/// A built, bound, not yet running service.
pub struct Application {
    port: u16,
    base_url: String,
    settings: Settings,
    server: actix_web::dev::Server,
    credentials: Option<SandboxCredentials>,
    sweepers: Vec<tokio::task::JoinHandle<()>>,
    /// The webhook delivery workers; they stop when `stop` turns true.
    webhook_worker: tokio::task::JoinHandle<()>,
    stop: tokio::sync::watch::Sender<bool>,
    draining: Draining,
    signals: StopSignals,
    metrics: Option<MetricsServer>,
    _cluster: Option<LocalCluster>,
}

impl Application {
    /// Connects (or, in a sandbox without `DATABASE_URL`, starts) the database, applies the
    /// migrations, wires the adapters, provisions the sandbox terminal, and binds the
    /// listener (port 0 picks a free port, see [`Application::port`]).
    pub async fn build(settings: Settings) -> anyhow::Result<Application> {
        let (database_url, cluster) = database::resolve(&settings).await?;
        if settings.metrics.address.is_some() {
            // Before the first connection: every connection reports its statements.
            checkout_postgres::statement_metrics::install()?;
        }
        checkout_postgres::run_migrations(&database_url).await?;
        let store =
            checkout_postgres::PgStore::connect_with(&database_url, settings.database.pool())
                .await?;
        // Before anything is served: a stop signal from now on is a graceful stop.
        let signals = StopSignals::install()?;
        let metrics = match &settings.metrics.address {
            Some(address) => Some(MetricsServer::start(address, store.clone())?),
            None => None,
        };

        let listener = TcpListener::bind((settings.server.host.as_str(), settings.server.port))?;
        let port = listener.local_addr()?.port();
        let base_url = settings.public_base_url(port);

        let wired = wiring::wire(&settings, &base_url, store.clone())?;
        let credentials = match settings.environment {
            Environment::Sandbox => Some(sandbox::provision(&settings, &store).await?),
            Environment::Production => None,
        };

        let mut sweepers = vec![
            tokio::spawn(sweep_expired(
                wired.checkout.clone(),
                Duration::from_secs(u64::from(settings.checkout.expiry_sweep_seconds.max(1))),
            )),
            tokio::spawn(sweep_unsettled(
                wired.checkout.clone(),
                store.clone(),
                Duration::from_secs(u64::from(settings.checkout.reconcile_sweep_seconds.max(1))),
            )),
        ];
        sweepers.push(tokio::spawn(watch_webhook_backlog(wired.webhooks.clone())));
        if let Some(worker) = crate::mail::receipt_worker(&settings, store.clone())? {
            sweepers.push(tokio::spawn(worker));
        }
        let (stop, stopping) = tokio::sync::watch::channel(false);
        let webhook_worker = tokio::spawn(deliver_webhooks(
            wired.webhooks.clone(),
            settings.webhooks.workers as usize,
            Duration::from_millis(settings.webhooks.poll_ms),
            stopping,
        ));
        let draining = Draining::default();
        let pages = Pages::new(PagesConfig {
            csrf_secret: wired.csrf_secret,
            public_base_url: base_url.clone(),
            own_challenge_page: settings.processor.kind == ProcessorKind::Sandbox,
            processor_origins: settings.processor_origins(),
            // As long as one card submission may wait for the processor: tokenize, the
            // authorisation and its one replay.
            processing_wait: Duration::from_millis(
                settings.processor.timeout_ms.saturating_mul(3) + 1000,
            ),
            proof_of_work: settings.guard.enabled.then(|| {
                let policy = settings.guard.policy();
                checkout_http::card_guard::ProofOfWork::new(
                    &wired.guard_secret,
                    policy.proof_max_number,
                    policy.challenge_validity,
                )
            }),
        })?;
        let state = web::Data::new(AppState {
            checkout: wired.checkout,
            webhooks: wired.webhooks,
            jwks: wired.jwks,
            pages,
            auth_limits: AuthLimits::new(
                settings.security.token_requests_per_client_per_minute,
                settings.security.token_requests_per_address_per_minute,
                settings
                    .security
                    .token_failures_per_client_address_per_minute,
            ),
            max_body_bytes: settings.security.max_body_bytes,
            readiness: std::sync::Arc::new(DatabaseReadiness::new(store.clone(), draining.clone())),
            swagger_ui: settings.swagger_ui(),
            trusted_proxies: TrustedProxies::parse(&settings.security.trusted_proxies)?,
            configured_base_url: settings
                .server
                .public_base_url
                .as_deref()
                .map(|base| base.trim_end_matches('/').to_owned()),
            sandbox_routes: settings.environment == Environment::Sandbox,
        });
        let workers = settings
            .server
            .workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        let closing = draining.clone();
        let server = HttpServer::new(move || {
            let closing = closing.clone();
            checkout_http::build_app(state.clone()).wrap_fn(move |request, service| {
                let answer = actix_web::dev::Service::call(service, request);
                let closing = closing.clone();
                async move {
                    let mut answer = answer.await?;
                    if closing.is_draining() {
                        // A keep-alive client opens its next request elsewhere.
                        answer
                            .response_mut()
                            .head_mut()
                            .set_connection_type(actix_web::http::ConnectionType::Close);
                    }
                    Ok(answer)
                }
            })
        })
        .workers(workers)
        // The stop signals are this process's (`run_until_stopped`): readiness first.
        .disable_signals()
        .shutdown_timeout(settings.server.shutdown_timeout_seconds)
        .listen(listener)?
        .run();
        tracing::info!(
            port,
            environment = settings.environment.as_str(),
            "service ready"
        );
        Ok(Application {
            port,
            base_url,
            settings,
            server,
            credentials,
            sweepers,
            webhook_worker,
            stop,
            draining,
            signals,
            metrics,
            _cluster: cluster,
        })
    }

    /// The port the service listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port of the metrics listener, when there is one.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics.as_ref().map(|m| m.address.port())
    }

    /// The public base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Prints where the service is and, in sandbox mode, the terminal's credentials and the
    /// variables that pin them for scripts.
    pub fn print_banner(&self) {
        let mut out = std::io::stdout().lock();
        if let Some(metrics) = &self.metrics {
            // Before the "listening on" line, which tells a reader the banner's start is over.
            let _ = writeln!(
                out,
                "Metrics (Prometheus) on http://{}/metrics",
                metrics.address
            );
        }
        let _ = writeln!(
            out,
            "Hosted checkout service ({}) listening on http://{}:{}",
            self.settings.environment.as_str(),
            self.settings.server.host,
            self.port
        );
        if self.settings.server.public_base_url.is_some() {
            let _ = writeln!(out, "  Public address: {}", self.base_url);
        }
        if self.settings.swagger_ui() {
            let _ = writeln!(out, "  API explorer:   {}/swagger", self.base_url);
        }
        if let Some(c) = &self.credentials {
            let _ = writeln!(out, "  Sandbox terminal: {}", c.terminal_number);
            let _ = writeln!(out, "  client_id:        {}", c.client_id);
            let _ = writeln!(out, "  client_secret:    {}", c.client_secret);
            let _ = writeln!(out, "  Pin them for scripts with:");
            let _ = writeln!(out, "    CHECKOUT__SERVER__PORT={} CHECKOUT__SANDBOX__CLIENT_ID={} CHECKOUT__SANDBOX__CLIENT_SECRET={}",
                self.port, c.client_id, c.client_secret);
        }
        let _ = out.flush();
    }

    /// Serves until SIGTERM or SIGINT (Ctrl-C), then stops gracefully
    /// (`docs/decisions/0018-shutdown-and-database-timeouts.md`): readiness answers 503 at
    /// once and the webhook workers stop claiming; the listener keeps accepting and serving
    /// for the grace period (answers ask keep-alive clients to close their connections);
    /// then it closes and requests in flight finish (`shutdown_timeout_seconds` at most); then
    /// the webhook attempts still running are stopped and their claims given back, the sweeps
    /// stop, and the process exits.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let handle = self.server.handle();
        let mut server = tokio::spawn(self.server);
        let mut signals = self.signals;
        let ended = tokio::select! {
            ended = &mut server => Some(ended),
            signal = signals.next() => {
                let grace = Duration::from_millis(self.settings.server.shutdown_grace_ms);
                self.draining.start();
                let _ = self.stop.send(true);
                tracing::info!(
                    signal,
                    grace_ms = self.settings.server.shutdown_grace_ms,
                    "stop signal: readiness answers 503; serving on through the grace period"
                );
                tokio::time::sleep(grace).await;
                tracing::info!("grace period over: the listener closes; requests in flight finish");
                None
            }
        };
        let ended = match ended {
            Some(ended) => ended,
            None => {
                handle.stop(true).await;
                server.await
            }
        };
        let _ = self.stop.send(true);
        drop(self.stop);
        if let Err(e) = self.webhook_worker.await {
            tracing::warn!(error = %e, "the webhook workers ended badly");
        }
        for sweeper in &self.sweepers {
            sweeper.abort();
        }
        if let Some(metrics) = self.metrics {
            metrics.stop().await;
        }
        tracing::info!("service stopped");
        Ok(ended??)
    }
}

/// SIGTERM and SIGINT, installed before the service listens.
struct StopSignals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn install() -> anyhow::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(StopSignals {
                terminate: signal(SignalKind::terminate())?,
                interrupt: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(StopSignals {})
        }
    }

    /// The next stop signal's name.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.terminate.recv() => "SIGTERM",
                _ = self.interrupt.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }
}

/// Expires unpaid sessions past their expiry, every `every` (a session waiting for a
/// challenge after the processor confirmed the cancel), forgets the idempotency keys whose
/// 24-hour replay window is over and old processor event ids, and sweeps the card-testing
/// guard (lowering the alerts of terminals that calmed down).
async fn sweep_expired(checkout: checkout_domain::Checkout, every: Duration) {
    let mut ticker = tokio::time::interval(every);
    loop {
        ticker.tick().await;
        match checkout.expire_due_sessions().await {
            Ok(r) if r.expired == 0 && r.challenges_examined == 0 => {}
            Ok(r) => tracing::info!(
                expired = r.expired,
                challenges_examined = r.challenges_examined,
                challenges_expired = r.challenges_expired,
                challenges_settled = r.challenges_settled,
                "expired unpaid sessions"
            ),
            Err(e) => tracing::warn!(error = %e, "expiry sweep failed"),
        }
        match checkout.forget_idempotency_keys().await {
            Ok(0) => {}
            Ok(forgotten) => tracing::info!(forgotten, "forgot idempotency keys past 24 hours"),
            Err(e) => tracing::warn!(error = %e, "idempotency key sweep failed"),
        }
        match checkout.forget_processor_notices().await {
            Ok(0) => {}
            Ok(forgotten) => tracing::info!(forgotten, "forgot processor event ids past 30 days"),
            Err(e) => tracing::warn!(error = %e, "processor event id sweep failed"),
        }
        match checkout.sweep_card_guard().await {
            Ok(r) if r == checkout_domain::usecases::GuardSweep::default() => {}
            Ok(r) => tracing::info!(
                alerts_ended = r.alerts_ended,
                answers_forgotten = r.answers_forgotten,
                "card-testing guard sweep"
            ),
            Err(e) => tracing::warn!(error = %e, "card-testing guard sweep failed"),
        }
    }
}

/// Every `every`, asks the processor about the attempts whose answer was lost and that are
/// due (a timeout, a process killed mid-payment), by replaying the same request with the same
/// idempotency key, and records what it says; then refreshes the backlog's gauges.
async fn sweep_unsettled(
    checkout: checkout_domain::Checkout,
    store: checkout_postgres::PgStore,
    every: Duration,
) {
    let mut ticker = tokio::time::interval(every);
    loop {
        ticker.tick().await;
        reconcile_once(&checkout).await;
        crate::metrics::refresh_reconciliation_backlog(&store).await;
    }
}

/// One reconciliation sweep, logged.
async fn reconcile_once(checkout: &checkout_domain::Checkout) {
    match checkout.reconcile_due().await {
        Ok(r) if r.examined == 0 && r.reversals_examined == 0 => {}
        Ok(r) => {
            crate::metrics::count_reversal_reconciliations(&r);
            tracing::info!(
                examined = r.examined,
                processor_calls = r.processor_calls,
                settled = r.settled,
                rescheduled = r.rescheduled,
                given_up = r.given_up,
                reversals_examined = r.reversals_examined,
                reversals_settled = r.reversals_settled,
                reversals_rescheduled = r.reversals_rescheduled,
                reversals_given_up = r.reversals_given_up,
                "reconciled attempts whose answer was lost, and unsettled captures, voids and refunds"
            );
            if let Some(error) = &r.first_reversal_error {
                tracing::warn!(
                    failed = r.reversals_failed,
                    error = %error,
                    "captures, voids or refunds could not be asked about; asked again after \
                     their lease"
                );
            }
            if r.reversals_given_up > 0 {
                tracing::error!(
                    given_up = r.reversals_given_up,
                    "refunds still unknown past the processor's idempotency window, never \
                     replayed: review them at the processor"
                );
            }
            if r.given_up > 0 {
                tracing::error!(
                    given_up = r.given_up,
                    "attempts still unknown past the processor's idempotency window: \
                     review them at the processor"
                );
            }
        }
        Err(e) => tracing::warn!(error = %e, "reconciliation sweep failed"),
    }
}

/// The delivery workers of this instance: `slots` attempts at once, each on its own task, so
/// that an attempt that hangs until its time-out holds its own slot and no other. Claims as
/// many due deliveries as there are free slots (fairly across endpoints and terminals, which
/// the claim decides), looks again at once while a claim fills the free slots, and otherwise
/// when an attempt ends or after `idle`.
///
/// When `stop` turns true it claims no more, and lets the attempts under way go on until the
/// sender is dropped (the HTTP side has drained); then it stops those still running and gives
/// their claims back, so that another instance delivers them at once instead of after the
/// lease.
async fn deliver_webhooks(
    webhooks: checkout_domain::usecases::Webhooks,
    slots: usize,
    idle: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    use checkout_domain::webhooks::DueDelivery;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, PoisonError};

    let free = Arc::new(tokio::sync::Semaphore::new(slots.max(1)));
    let ended = Arc::new(tokio::sync::Notify::new());
    let running: Arc<Mutex<HashMap<uuid::Uuid, DueDelivery>>> = Arc::default();
    let mut attempts = tokio::task::JoinSet::new();
    while !*stop.borrow_and_update() {
        while attempts.try_join_next().is_some() {}
        let available = free.available_permits();
        let mut filled = false;
        if available > 0 {
            let wanted = u32::try_from(available).unwrap_or(u32::MAX);
            match webhooks.claim_due(wanted).await {
                Ok(claimed) => {
                    filled = !claimed.is_empty()
                        && u32::try_from(claimed.len()).unwrap_or(u32::MAX)
                            >= wanted.min(webhooks.policy().batch);
                    for delivery in claimed {
                        let Ok(permit) = free.clone().try_acquire_owned() else {
                            // Cannot happen (only this loop takes permits); the lease lapses.
                            break;
                        };
                        running
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .insert(delivery.id, delivery.clone());
                        let (webhooks, ended, running) =
                            (webhooks.clone(), ended.clone(), running.clone());
                        attempts.spawn(async move {
                            match webhooks.attempt(&delivery).await {
                                Ok(report) => log_attempt(&report),
                                Err(e) => tracing::warn!(
                                    error = format!("{e:#}"),
                                    delivery = %delivery.id,
                                    "webhook attempt not recorded"
                                ),
                            }
                            running
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .remove(&delivery.id);
                            drop(permit);
                            ended.notify_one();
                        });
                    }
                }
                Err(e) => tracing::warn!(
                    error = format!("{e:#}"),
                    "claiming webhook deliveries failed"
                ),
            }
        }
        if filled && free.available_permits() > 0 {
            continue;
        }
        tokio::select! {
            () = ended.notified() => {}
            () = tokio::time::sleep(idle) => {}
            _ = stop.changed() => {}
        }
    }
    // Stopping: the attempts under way go on while the HTTP side drains (until the sender
    // is dropped).
    tokio::select! {
        () = async { while attempts.join_next().await.is_some() {} } => {}
        () = async { while stop.changed().await.is_ok() {} } => {}
    }
    attempts.shutdown().await;
    let unfinished: Vec<DueDelivery> = running
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain()
        .map(|(_, delivery)| delivery)
        .collect();
    for delivery in unfinished {
        match webhooks.release(&delivery).await {
            Ok(released) => tracing::info!(
                delivery = %delivery.id,
                released,
                "webhook delivery given back unattempted: another instance may claim it now"
            ),
            Err(e) => tracing::warn!(
                error = format!("{e:#}"),
                delivery = %delivery.id,
                "could not give back a webhook delivery: its lease runs out instead"
            ),
        }
    }
}

/// Counts one attempt and logs what it did to its endpoint's circuit.
fn log_attempt(report: &checkout_domain::webhooks::AttemptReport) {
    use checkout_domain::webhooks::{AttemptOutcome, CircuitEvent};
    let mut run = checkout_domain::usecases::DeliveryRun::default();
    run.add(report);
    crate::metrics::count_delivery_run(&run);
    if report.outcome == AttemptOutcome::Failed {
        tracing::warn!(delivery = %report.delivery, endpoint = %report.endpoint, "webhook delivery failed for good");
    }
    match &report.circuit {
        Some(CircuitEvent::Opened { until }) => tracing::info!(
            endpoint = %report.endpoint,
            until = %until,
            "webhook endpoint keeps failing: its circuit is open"
        ),
        Some(CircuitEvent::Recovered) => {
            tracing::info!(endpoint = %report.endpoint, "webhook endpoint answers again")
        }
        Some(CircuitEvent::Disabled) => tracing::warn!(
            endpoint = %report.endpoint,
            "webhook endpoint disabled after failing for days"
        ),
        None => {}
    }
}

/// Every five seconds, sets the webhook backlog gauges.
async fn watch_webhook_backlog(webhooks: checkout_domain::usecases::Webhooks) {
    let mut ticker = tokio::time::interval(Duration::from_secs(5));
    loop {
        ticker.tick().await;
        crate::metrics::refresh_webhook_backlog(&webhooks).await;
    }
}
