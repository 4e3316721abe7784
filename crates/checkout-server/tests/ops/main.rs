//! What an operator watches and relies on, against the real `checkout` binary: the health
//! endpoints, the Prometheus metrics (parsed by the Prometheus project's own Python parser),
//! and a database outage answered with clean 503s and recovered from without a restart.

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

#[path = "../support/mod.rs"]
mod support;

mod db_proxy;
mod health;
mod metrics;
mod outage;
mod partition;
mod shutdown;

/// Asserts a ProblemDetails body of `status`.
pub fn assert_problem(reply: &support::server::Reply, status: u16) {
    assert_eq!(reply.status.as_u16(), status, "status of {}", reply.body);
    assert_eq!(reply.content_type(), "application/problem+json");
    assert_eq!(reply.body["status"], status, "{}", reply.body);
    assert!(reply.body["type"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(reply.body["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(reply.body["detail"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(reply.body["instance"]
        .as_str()
        .is_some_and(|t| t.len() == 36));
}
