//! Creating sessions and links, reading them, and their expiry.

mod events;
mod expiry_sweep;
mod hosted_pages;
mod idempotency;
mod lookup_by_reference;
mod payment_links;
mod payment_status;
mod unique_reference;
mod validation;
