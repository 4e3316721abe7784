//! The JSON API routes (spec 4.1–4.4), the lookup of sessions by merchant reference, the
//! event feed and webhook endpoints, the merchant's actions after a payment (cancel, capture,
//! void, refunds), payment links' QR codes, the card processor's events, the public keys, and
//! the sandbox's developer routes.

pub mod by_reference;
pub mod cancel;
pub mod capture;
pub mod events;
pub mod jwks;
mod paging;
pub mod payment_link;
pub mod processor_events;
pub mod qr;
pub mod refunds;
pub mod sandbox;
pub mod start_payment;
pub mod status;
pub mod token;
pub mod webhook_endpoints;
