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
mod reversals;
mod schema;
mod session_insert;
mod sessions;
mod store;
mod terminal_cache;
mod terminals;
mod tls;
mod unnest;
mod watchdog;
mod webhooks;
mod write_combining;

pub use availability::PoolStatus;
pub use migrations::{run_migrations, MIGRATIONS, MIGRATIONS_FINGERPRINT};
pub use pool::PoolSettings;
pub use store::PgStore;
pub use tls::{establish, with_ca_file};
