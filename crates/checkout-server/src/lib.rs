#![doc = include_str!("../README.md")]

pub mod admin;
pub mod application;
pub mod database;
pub mod devtools;
pub mod health;
pub mod mail;
pub mod metrics;
pub mod reversal_review;
pub mod sandbox;
pub mod settings;
pub mod system;
pub mod telemetry;
pub mod wiring;

pub use application::Application;
pub use settings::Settings;
