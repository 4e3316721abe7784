#![doc = include_str!("../README.md")]

mod attempt_combining;
mod attempt_writes;
mod availability;
mod card_attempts;
mod card_guard;
mod clients;
mod combining;
pub mod counters;
mod events;
mod generic_plans;
mod idempotency;
mod migrations;
mod models;
mod notices;
mod pool;
mod read_combining;
mod receipts;
mod reversals;
mod review;
mod schema;
mod session_insert;
mod sessions;
pub mod statement_metrics;
mod store;
mod terminal_cache;
mod terminals;
mod tls;
mod unnest;
mod webhooks;
mod write_combining;

pub use availability::PoolStatus;
pub use migrations::{run_migrations, MIGRATIONS, MIGRATIONS_FINGERPRINT};
pub use pool::PoolSettings;
pub use review::{Recheck, RefundForReview};
pub use store::PgStore;
pub use tls::{establish, with_ca_file};
