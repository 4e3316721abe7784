//! Helpers shared by the test binaries: cards and payments, and localstripe (the
//! fault-injecting stand-in is `checkout_processor::testing`).
//!
//! A payment goes through the port as the service sends it: `tokenize` turns the card into a
//! payment-method reference, then `authorize` asks for the money with that reference (the card
//! itself never travels with the authorisation).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod localstripe;

// The domain's shared builders, under the names these tests use; each test binary uses a
// part of them.
#[allow(unused_imports)]
pub use checkout_domain::testing::builders::{
    card, card_with, random_bytes as unique_bytes, Payment, TEST_CVV as CVV,
};
