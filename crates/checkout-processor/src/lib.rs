#![doc = include_str!("../README.md")]

mod redact;
pub mod sandbox;
pub mod stripe;
#[cfg(feature = "testing")]
pub mod testing;

pub use sandbox::SandboxProcessor;
pub use stripe::{StripeConfig, StripeProcessor};
