//! `/metrics` on its own listener, scraped after real traffic and parsed by the Prometheus
//! project's Python parser (`prometheus_client.parser`, installed by
//! `scripts/prometheus-parser.sh`; `PROMETHEUS_PARSER_PYTHON` names its interpreter).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::payer::CardForm;
use crate::support::{Mode, TestServer};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The interpreter with prometheus_client: `PROMETHEUS_PARSER_PYTHON`, else what the install
/// script prints (the test fails when it cannot be had: CI installs it).
fn parser_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        if let Some(path) = std::env::var_os("PROMETHEUS_PARSER_PYTHON") {
            return PathBuf::from(path);
        }
        let out = Command::new(repo_root().join("scripts/prometheus-parser.sh"))
            .stdin(Stdio::null())
            .output()
            .expect("run scripts/prometheus-parser.sh");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        PathBuf::from(stdout.lines().last().expect("an interpreter").trim())
    })
}

/// The families of `text` as the Prometheus parser reads them (it fails on invalid text).
pub(crate) fn parse(text: &str) -> Vec<Value> {
    let mut child = Command::new(parser_python())
        .arg(repo_root().join("scripts/parse_metrics.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the parser");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the Prometheus parser refused the exposition: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: Value = serde_json::from_slice(&out.stdout).unwrap();
    parsed["families"].as_array().unwrap().clone()
}

/// The sum of the samples named `sample` (of any family), whatever their labels; 0 when there
/// is none.
pub(crate) fn total(families: &[Value], sample: &str) -> f64 {
    families
        .iter()
        .flat_map(|f| f["samples"].as_array().unwrap())
        .filter(|s| s["name"] == sample)
        .filter_map(|s| s["value"].as_f64())
        .sum()
}

/// The value of the sample `sample` (of any family) whose labels include every pair of
/// `labels`.
fn value(families: &[Value], sample: &str, labels: &[(&str, &str)]) -> f64 {
    families
        .iter()
        .flat_map(|f| f["samples"].as_array().unwrap())
        .filter(|s| s["name"] == sample)
        .find(|s| labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .and_then(|s| s["value"].as_f64())
        .unwrap_or_else(|| panic!("no {sample} with {labels:?}"))
}

pub(crate) async fn scrape(server: &TestServer) -> String {
    let port = server.metrics_port.expect("a metrics listener");
    let response = server
        .http
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .expect("the metrics listener answers");
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    response.text().await.unwrap()
}

#[tokio::test]
async fn every_family_is_exposed_and_requests_are_labelled_by_route_pattern() {
    let server = TestServer::start(
        "metrics",
        Mode::Sandbox,
        &[
            ("CHECKOUT__METRICS__ADDRESS", "127.0.0.1:0"),
            ("CHECKOUT__CHECKOUT__RECONCILE_SWEEP_SECONDS", "1"),
            ("CHECKOUT__WEBHOOKS__POLL_MS", "50"),
        ],
    )
    .await;
    let token = server.token().await;
    // A webhook endpoint nobody listens on: its deliveries fail and are retried.
    let endpoint = server
        .post(
            "/pay/api/webhook-endpoints",
            Some(&token),
            &serde_json::json!({ "url": "http://127.0.0.1:9/hooks" }),
        )
        .await;
    assert_eq!(endpoint.status, 201, "{}", endpoint.body);
    let paid = server.new_checkout("METRICS").await;
    server.status_record(&paid).await;
    let form = CardForm::open(&server.http, &server.base, &paid).await;
    let answer = form.submit(&server.http, "4242424242424242").await;
    assert_eq!(answer.status(), 303);
    assert_eq!(server.status_record(&paid).await["state"], "Successful");
    let declined = server.new_checkout("METRICS-DECLINED").await;
    let form = CardForm::open(&server.http, &server.base, &declined).await;
    form.submit(&server.http, "4000000000000002").await;
    assert_eq!(
        server
            .get("/no/such/route/4242424242424242", None)
            .await
            .status,
        404
    );
    // The metrics are not on the public listener.
    assert_eq!(server.get("/metrics", None).await.status, 404);
    // The reconciliation sweep runs every second and sets its gauges.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;

    let text = scrape(&server).await;
    let families = parse(&text);

    let types: Vec<(&str, &str)> = families
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
        .collect();
    for expected in [
        ("checkout_http_requests", "counter"),
        ("checkout_http_request_duration_seconds", "histogram"),
        ("checkout_processor_calls", "counter"),
        ("checkout_processor_call_duration_seconds", "histogram"),
        ("checkout_sessions_created", "counter"),
        ("checkout_sessions_settled", "counter"),
        ("checkout_db_pool_connections", "gauge"),
        ("checkout_db_pool_max_connections", "gauge"),
        ("checkout_db_pool_waiting", "gauge"),
        ("checkout_db_stalled_connections", "counter"),
        ("checkout_reconciliation_backlog", "gauge"),
        (
            "checkout_reconciliation_oldest_unresolved_age_seconds",
            "gauge",
        ),
        ("checkout_webhook_attempts", "counter"),
        ("checkout_webhook_backlog", "gauge"),
        ("checkout_webhook_oldest_due_age_seconds", "gauge"),
        ("checkout_http_requests_in_flight", "gauge"),
        ("checkout_db_statement_duration_seconds", "histogram"),
    ] {
        assert!(
            types.contains(&expected),
            "{expected:?} missing from {types:?}"
        );
    }

    // Every request above was answered: none left in flight (each counted in and out).
    assert_eq!(
        value(&families, "checkout_http_requests_in_flight", &[]),
        0.0
    );
    // The database's statements, timed by their first keyword.
    for kind in ["select", "insert", "with"] {
        assert!(
            value(
                &families,
                "checkout_db_statement_duration_seconds_count",
                &[("kind", kind)]
            ) >= 1.0,
            "no {kind} statement timed"
        );
    }

    let status_route = [
        ("method", "GET"),
        ("route", "/pay/api/payment/{checkoutSessionId}"),
        ("status", "200"),
    ];
    assert!(value(&families, "checkout_http_requests_total", &status_route) >= 2.0);
    assert!(
        value(
            &families,
            "checkout_http_request_duration_seconds_count",
            &status_route
        ) >= 2.0
    );
    assert!(
        value(
            &families,
            "checkout_http_request_duration_seconds_bucket",
            &[
                ("route", "/pay/api/payment/{checkoutSessionId}"),
                ("le", "+Inf")
            ]
        ) >= 2.0
    );
    assert_eq!(
        value(
            &families,
            "checkout_http_requests_total",
            &[
                ("method", "POST"),
                ("route", "/pay/api/start-payment"),
                ("status", "200"),
            ]
        ),
        2.0
    );
    assert!(
        value(
            &families,
            "checkout_http_requests_total",
            &[("route", "unmatched"), ("status", "404"),]
        ) >= 2.0
    );
    let calls = |call: &str, outcome: &str| {
        value(
            &families,
            "checkout_processor_calls_total",
            &[("call", call), ("outcome", outcome)],
        )
    };
    assert_eq!(calls("authorize", "captured"), 1.0);
    assert_eq!(calls("authorize", "declined"), 1.0);
    assert_eq!(calls("tokenize", "tokenized"), 2.0);
    assert_eq!(
        value(
            &families,
            "checkout_sessions_created_total",
            &[("type", "IntegratedCheckout"),]
        ),
        2.0
    );
    for state in ["Successful", "Failed"] {
        assert_eq!(
            value(
                &families,
                "checkout_sessions_settled_total",
                &[("state", state),]
            ),
            1.0,
            "{state}"
        );
    }
    assert_eq!(
        value(&families, "checkout_db_pool_max_connections", &[]),
        4.0
    );
    // Open connections, idle or lent out: the background sweeps and the webhook deliveries may
    // hold every open one at the moment of the scrape, so neither state alone is certain.
    let pool = |state| {
        value(
            &families,
            "checkout_db_pool_connections",
            &[("state", state)],
        )
    };
    let open = pool("idle") + pool("in_use");
    assert!((1.0..=4.0).contains(&open), "{open} connections open");
    assert_eq!(
        value(&families, "checkout_reconciliation_backlog", &[]),
        0.0
    );

    // The failing endpoint's attempts are counted.
    assert!(
        value(
            &families,
            "checkout_webhook_attempts_total",
            &[("outcome", "retrying")]
        ) >= 1.0
    );

    // No id, token, secret, URL or card number in any label.
    for secret in [
        paid.as_str(),
        declined.as_str(),
        token.as_str(),
        server.client_secret.as_str(),
        endpoint.str("secret"),
        endpoint.str("id"),
        "127.0.0.1:9",
        "4242424242424242",
        "4000000000000002",
    ] {
        assert!(!text.contains(secret), "{secret} appears in the metrics");
    }
    let labels: Vec<String> = families
        .iter()
        .flat_map(|f| f["samples"].as_array().unwrap().clone())
        .flat_map(|s| {
            s["labels"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        labels.iter().all(|l| !l.contains("METRICS-")),
        "a reference became a label"
    );
}

#[tokio::test]
async fn there_is_no_metrics_listener_by_default() {
    let server = TestServer::sandbox("metrics-off").await;
    assert_eq!(server.metrics_port, None);
    assert_eq!(server.get("/metrics", None).await.status, 404);
}

/// The metric names (`checkout_…`) that `text` mentions, without a histogram's sample
/// suffixes.
fn checkout_metric_names(text: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("checkout_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let name = &tail[..end];
        let name = ["_bucket", "_count", "_sum"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        // Only names preceded by no identifier character (not `scripts/check_…`).
        let before = rest[..at].chars().next_back();
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/') {
            names.insert(name.to_owned());
        }
        rest = &tail[end..];
    }
    names
}

/// Every metric an alert rule or a dashboard panel reads is one the service's code records
/// (its name is a string constant of a crate's sources), so that a renamed metric cannot leave
/// an alert that never fires.
#[test]
fn every_metric_an_alert_or_a_panel_reads_is_one_the_service_exports() {
    let root = repo_root();
    let mut exported = std::collections::BTreeSet::new();
    let mut stack = vec![root.join("crates")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("tests") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let source = std::fs::read_to_string(&path).unwrap();
                for line in source.lines().filter(|l| l.contains("pub const")) {
                    if let Some(start) = line.find("\"checkout_") {
                        let name = &line[start + 1..];
                        exported.insert(name[..name.find('"').unwrap()].to_owned());
                    }
                }
            }
        }
    }
    assert!(
        exported.contains("checkout_http_requests_total"),
        "{exported:?}"
    );
    for file in [
        "deploy/prometheus/alerts.yml",
        "deploy/grafana/checkout-dashboard.json",
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let used = checkout_metric_names(&text);
        assert!(used.len() >= 8, "{file}: {used:?}");
        let unknown: Vec<_> = used.difference(&exported).collect();
        assert!(
            unknown.is_empty(),
            "{file} reads metrics nobody exports: {unknown:?}"
        );
    }
}
