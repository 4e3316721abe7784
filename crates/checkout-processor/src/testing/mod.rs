//! Test support for this crate's tests and the server's: a fault-injecting HTTP stand-in for
//! a Stripe-compatible processor. Only with the `testing` feature; never in a release build.

// Test support: a failed set-up should panic the test that uses it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod stand_in;
