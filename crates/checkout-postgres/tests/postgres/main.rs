//! Tests of the PostgreSQL adapter against a real server, through the `testing` harness:
//! every test has a database of its own, so they run in parallel.

// Helpers outside `#[test]` functions too: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;
mod contract;
mod events;
mod harness;
mod hot_updates;
mod idempotency;
mod identity;
mod references;
mod sessions;
mod support;
mod tls;
mod webhooks;
