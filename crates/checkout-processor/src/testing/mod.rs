//! Test support for this crate's tests and the server's: HTTP stand-ins for a Stripe-compatible
//! processor, a scripted one ([`stand_in`]) and one that behaves like Stripe's PaymentIntents
//! API ([`fake_stripe`]), both fault-injecting, and the Stripe adapter in localstripe's dialect
//! ([`localstripe`]). Only with the `testing` feature; never in a release build.

// Test support: a failed set-up should panic the test that uses it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod fake_stripe;
pub mod localstripe;
pub mod stand_in;
pub mod wire;
