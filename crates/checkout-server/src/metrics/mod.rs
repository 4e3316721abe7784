//! Prometheus metrics: the recorder behind the `metrics` facade, and `/metrics` in the text
//! exposition format on a listener of its own (`CHECKOUT__METRICS__ADDRESS`; off by default,
//! so that it is never public by accident).
//!
//! **Adding a metric.** Record it anywhere with the `metrics` facade
//! (`metrics::counter!("checkout_webhook_deliveries_total", "outcome" => "delivered")`,
//! `metrics::gauge!("checkout_webhook_backlog").set(n)`), with labels drawn from a small fixed
//! set (never an id, reference, URL, token, secret or card data), and give it a `# HELP` line
//! in `describe`. A gauge read from the database is refreshed by the loop that owns the
//! work (as [`refresh_reconciliation_backlog`] is by the reconciliation sweep); a gauge that is
//! cheap to read in memory can be refreshed on every scrape in `refresh_on_scrape`.
//! Histograms use [`LATENCY_BUCKETS`].

pub mod identity;
pub mod processor;

use checkout_domain::ports::Sweeps;
use std::net::TcpListener;
use std::sync::OnceLock;
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use anyhow::Context;
use checkout_postgres::PgStore;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use time::OffsetDateTime;

/// Gauge: connections of the database pool, by `state` (`in_use`, `idle`).
pub const DB_POOL_CONNECTIONS: &str = "checkout_db_pool_connections";
/// Gauge: the most connections the pool opens.
pub const DB_POOL_MAX: &str = "checkout_db_pool_max_connections";
/// Gauge: callers waiting for a database connection.
pub const DB_POOL_WAITING: &str = "checkout_db_pool_waiting";
/// Counter: pooled database connections closed because a statement had no answer within the
/// bound (a stalled network path; `docs/decisions/0018-shutdown-and-database-timeouts.md`).
pub const DB_STALLED_CONNECTIONS_TOTAL: &str = "checkout_db_stalled_connections_total";
/// Gauge: payment attempts whose outcome is not known yet (Sent or Unknown).
pub const RECONCILIATION_BACKLOG: &str = "checkout_reconciliation_backlog";
/// Gauge: age in seconds of the oldest such attempt (0 when there is none).
pub const RECONCILIATION_OLDEST_AGE: &str = "checkout_reconciliation_oldest_unresolved_age_seconds";

/// Counter: captures, voids and refunds the reconciliation sweep asked the processor about,
/// by `outcome` (`settled`, `rescheduled`: still not final, `given_up`: a refund left for
/// review past the processor's key lifetime, `failed`: not asked because of a fault).
pub const REVERSAL_RECONCILIATIONS_TOTAL: &str = "checkout_reversal_reconciliations_total";

/// Gauge: webhook deliveries due and not yet delivered.
pub const WEBHOOK_BACKLOG: &str = "checkout_webhook_backlog";
/// Gauge: seconds since the oldest of them fell due (0 when there is none).
pub const WEBHOOK_OLDEST_DUE_AGE: &str = "checkout_webhook_oldest_due_age_seconds";
/// Counter: webhook delivery attempts, by `outcome` (`delivered`, `retrying`, `failed`: the
/// schedule ran out, `stale`: the result came after the claim was lost).
pub const WEBHOOK_ATTEMPTS_TOTAL: &str = "checkout_webhook_attempts_total";
/// Counter: webhook endpoints' circuits that changed, by `change` (`opened`: failing, nothing
/// attempted for a while; `disabled`: failing for days).
pub const WEBHOOK_CIRCUIT_CHANGES_TOTAL: &str = "checkout_webhook_circuit_changes_total";

/// Histogram buckets of every latency, seconds.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The recorder is process-wide; an in-process test may build several applications.
static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the Prometheus recorder (once per process) and returns its handle.
fn install() -> anyhow::Result<PrometheusHandle> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let handle = PrometheusBuilder::new()
        .set_buckets(LATENCY_BUCKETS)
        .context("histogram buckets")?
        .install_recorder()
        .context("installing the metrics recorder")?;
    describe();
    Ok(HANDLE.get_or_init(|| handle).clone())
}

/// The `# HELP` text of every metric.
fn describe() {
    use checkout_http::metrics as http;
    use checkout_postgres::counters as store;
    metrics::describe_counter!(
        http::REQUESTS_TOTAL,
        "HTTP requests answered, by method, route pattern and status."
    );
    metrics::describe_histogram!(
        http::REQUEST_DURATION,
        metrics::Unit::Seconds,
        "HTTP request latency, by method, route pattern and status."
    );
    metrics::describe_gauge!(
        http::REQUESTS_IN_FLIGHT,
        "HTTP requests received and not answered yet."
    );
    metrics::describe_histogram!(
        checkout_postgres::statement_metrics::STATEMENT_DURATION,
        metrics::Unit::Seconds,
        "Database statement latency, by kind (its first SQL keyword)."
    );
    metrics::describe_counter!(
        checkout_postgres::statement_metrics::ERRORS_TOTAL,
        "Database statements and connection attempts that failed, by kind."
    );
    metrics::describe_counter!(
        http::CARD_GUARD_DECISIONS_TOTAL,
        "Card posts screened by the card-testing guard, by rule and outcome."
    );
    metrics::describe_counter!(
        processor::CALLS_TOTAL,
        "Card processor calls, by call and outcome."
    );
    metrics::describe_histogram!(
        processor::CALL_DURATION,
        metrics::Unit::Seconds,
        "Card processor call latency, by call and outcome."
    );
    metrics::describe_counter!(
        identity::CALLS_TOTAL,
        "Identity provider calls (issue_token, verify), by call and outcome."
    );
    metrics::describe_histogram!(
        identity::ISSUE_DURATION,
        metrics::Unit::Seconds,
        "Token issuance latency, by outcome."
    );
    metrics::describe_counter!(
        store::SESSIONS_CREATED,
        "Payment sessions created, by type."
    );
    metrics::describe_counter!(
        store::SESSIONS_SETTLED,
        "Payment sessions moved into a final state, by state."
    );
    metrics::describe_gauge!(
        DB_POOL_CONNECTIONS,
        "Database pool connections, by state (in_use, idle)."
    );
    metrics::describe_gauge!(DB_POOL_MAX, "The most connections the database pool opens.");
    metrics::describe_gauge!(
        DB_POOL_WAITING,
        "Callers waiting for a database connection."
    );
    metrics::describe_counter!(
        DB_STALLED_CONNECTIONS_TOTAL,
        "Database connections closed because a statement had no answer within the bound."
    );
    metrics::describe_gauge!(
        RECONCILIATION_BACKLOG,
        "Payment attempts whose outcome is not known yet (Sent or Unknown)."
    );
    metrics::describe_gauge!(
        RECONCILIATION_OLDEST_AGE,
        metrics::Unit::Seconds,
        "Age of the oldest payment attempt whose outcome is not known yet."
    );
    metrics::describe_gauge!(
        WEBHOOK_BACKLOG,
        "Webhook deliveries due and not yet delivered."
    );
    metrics::describe_gauge!(
        WEBHOOK_OLDEST_DUE_AGE,
        metrics::Unit::Seconds,
        "Seconds since the oldest due webhook delivery fell due."
    );
    metrics::describe_counter!(
        WEBHOOK_ATTEMPTS_TOTAL,
        "Webhook delivery attempts, by outcome."
    );
    metrics::describe_counter!(
        WEBHOOK_CIRCUIT_CHANGES_TOTAL,
        "Webhook endpoints whose circuit opened or that were disabled, by change."
    );
    metrics::describe_counter!(
        REVERSAL_RECONCILIATIONS_TOTAL,
        "Captures, voids and refunds the reconciliation sweep asked the processor about, by outcome."
    );
    metrics::describe_counter!(
        checkout_http::metrics::PROCESSOR_EVENTS_TOTAL,
        "Card-processor events received, by outcome (refusals included)."
    );
}

/// Counts what a reconciliation sweep did with the reversal ledger.
pub fn count_reversal_reconciliations(report: &checkout_domain::usecases::ReconcileReport) {
    for (outcome, n) in [
        ("settled", report.reversals_settled),
        ("rescheduled", report.reversals_rescheduled),
        ("given_up", report.reversals_given_up),
        ("failed", report.reversals_failed),
    ] {
        if n > 0 {
            metrics::counter!(REVERSAL_RECONCILIATIONS_TOTAL, "outcome" => outcome)
                .increment(n as u64);
        }
    }
}

/// Counts the attempts of one delivery run by outcome.
pub fn count_delivery_run(run: &checkout_domain::usecases::DeliveryRun) {
    for (outcome, n) in [
        ("delivered", run.delivered),
        ("retrying", run.retrying),
        ("failed", run.failed),
        ("stale", run.stale),
    ] {
        if n > 0 {
            metrics::counter!(WEBHOOK_ATTEMPTS_TOTAL, "outcome" => outcome).increment(u64::from(n));
        }
    }
    for (change, n) in [("opened", run.circuits_opened), ("disabled", run.disabled)] {
        if n > 0 {
            metrics::counter!(WEBHOOK_CIRCUIT_CHANGES_TOTAL, "change" => change)
                .increment(u64::from(n));
        }
    }
}

/// Reads the webhook backlog and sets its gauges. A failed read leaves them as they were.
pub async fn refresh_webhook_backlog(webhooks: &checkout_domain::usecases::Webhooks) {
    match webhooks.backlog().await {
        Ok(backlog) => {
            let age = backlog.oldest_due_at.map_or(0.0, |due| {
                (OffsetDateTime::now_utc() - due).as_seconds_f64().max(0.0)
            });
            metrics::gauge!(WEBHOOK_BACKLOG).set(backlog.due as f64);
            metrics::gauge!(WEBHOOK_OLDEST_DUE_AGE).set(age);
        }
        Err(e) => tracing::warn!(error = format!("{e:#}"), "reading the webhook backlog"),
    }
}

/// Sets the gauges that are read from memory on every scrape: the database pool's.
fn refresh_on_scrape(store: &PgStore) {
    let pool = store.pool_status();
    metrics::gauge!(DB_POOL_CONNECTIONS, "state" => "in_use").set(pool.in_use as f64);
    metrics::gauge!(DB_POOL_CONNECTIONS, "state" => "idle")
        .set(pool.open.saturating_sub(pool.in_use) as f64);
    metrics::gauge!(DB_POOL_MAX).set(pool.max_size as f64);
    metrics::gauge!(DB_POOL_WAITING).set(pool.waiting as f64);
    metrics::counter!(DB_STALLED_CONNECTIONS_TOTAL).absolute(store.stalled_connections_closed());
}

/// Reads the reconciliation backlog from the store and sets its gauges (called by the
/// reconciliation sweep after each run). A failed read leaves them as they were.
pub async fn refresh_reconciliation_backlog(store: &PgStore) {
    match store.unresolved_attempts().await {
        Ok((count, oldest)) => {
            let age = oldest.map_or(0.0, |created| {
                (OffsetDateTime::now_utc() - created)
                    .as_seconds_f64()
                    .max(0.0)
            });
            metrics::gauge!(RECONCILIATION_BACKLOG).set(count as f64);
            metrics::gauge!(RECONCILIATION_OLDEST_AGE).set(age);
        }
        Err(e) => tracing::warn!(
            error = format!("{e:#}"),
            "reading the reconciliation backlog"
        ),
    }
}

struct Scrape {
    handle: PrometheusHandle,
    store: PgStore,
}

async fn scrape(scrape: web::Data<Scrape>) -> HttpResponse {
    refresh_on_scrape(&scrape.store);
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(scrape.handle.render())
}

/// The metrics listener: `GET /metrics` and nothing else.
pub struct MetricsServer {
    /// The bound address, `host:port`.
    pub address: std::net::SocketAddr,
    server: actix_web::dev::ServerHandle,
    upkeep: tokio::task::JoinHandle<()>,
}

impl MetricsServer {
    /// Installs the recorder and binds `address` (port 0: any free port). One worker; it
    /// ignores signals and is stopped by [`MetricsServer::stop`].
    pub fn start(address: &str, store: PgStore) -> anyhow::Result<MetricsServer> {
        let handle = install()?;
        let listener = TcpListener::bind(address)
            .with_context(|| format!("binding the metrics listener {address}"))?;
        let address = listener.local_addr()?;
        if !address.ip().is_loopback() {
            tracing::warn!(%address, "metrics are served on a non-loopback address: keep it off the public network");
        }
        let upkeep = {
            let handle = handle.clone();
            tokio::spawn(async move {
                let mut ticker = tokio::time::interval(Duration::from_secs(5));
                loop {
                    ticker.tick().await;
                    handle.run_upkeep();
                }
            })
        };
        let data = web::Data::new(Scrape { handle, store });
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/metrics", web::get().to(scrape))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)?
        .run();
        let handle = server.handle();
        tokio::spawn(server);
        Ok(MetricsServer {
            address,
            server: handle,
            upkeep,
        })
    }

    /// Stops the listener.
    pub async fn stop(self) {
        self.upkeep.abort();
        self.server.stop(true).await;
    }
}
