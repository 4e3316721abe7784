//! The JSON API routes (spec 4.1–4.4) and the public keys.

pub mod events;
pub mod jwks;
pub mod payment_link;
pub mod start_payment;
pub mod status;
pub mod token;
