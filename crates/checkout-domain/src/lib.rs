#![doc = include_str!("../README.md")]

pub mod auth;
pub mod card;
pub mod environment;
pub mod error;
pub mod events;
pub mod guard;
pub mod ports;
pub mod receipts;
pub mod session;
pub mod terminal;
pub mod usecases;
pub mod values;
pub mod webhooks;

#[cfg(feature = "testing")]
pub mod testing;

pub use environment::Environment;
pub use error::{
    is_unreachable, AuthFailure, CheckoutError, IdempotencyConflict, SvcCode, SvcSpec, Unreachable,
    ValidationErrors,
};
pub use usecases::{Checkout, CheckoutPolicy, Ports};
