#![doc = include_str!("../README.md")]

mod no_events;
mod redact;
pub mod sandbox;
pub mod stripe;
#[cfg(feature = "testing")]
pub mod testing;

pub use no_events::NoEvents;
pub use sandbox::SandboxProcessor;
pub use stripe::{StripeConfig, StripeEvents, StripeProcessor};
