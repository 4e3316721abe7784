#![doc = include_str!("../README.md")]

pub mod adapter;
pub mod secret_box;
pub mod sender;
pub mod signature;
#[cfg(feature = "testing")]
pub mod testing;
pub mod url_policy;

pub use adapter::WebhookAdapter;
pub use checkout_domain::Environment;
pub use secret_box::{SecretBox, SecretBoxError};
pub use sender::{DeliveryError, DeliveryOutcome, DeliveryReport, WebhookSender};
pub use signature::{InvalidSecret, RandomUnavailable, SignError, WebhookHeaders, WebhookSecret};
pub use url_policy::{AddressKind, CheckedTarget, Resolve, SystemResolver, UrlError, UrlPolicy};
