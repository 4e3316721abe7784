#![doc = include_str!("../README.md")]

mod cache;
mod config;
mod files;
mod hashing;
mod jwks;
mod keys;
mod oidc;
mod provider;
mod revocation;
mod secrets;
mod tokens;

pub use cache::DEFAULT_TOKEN_CACHE_CAPACITY;
pub use checkout_domain::Environment;
pub use config::IdentityConfig;
pub use files::{create_private_dir, private_file_options};
pub use jsonwebtoken::Algorithm;
pub use keys::{KeySet, SigningKey, VerifyingKey};
pub use oidc::{OidcConfig, OidcIdentity, DEFAULT_ALGORITHMS as DEFAULT_OIDC_ALGORITHMS};
pub use provider::BuiltinIdentity;
pub use revocation::DEFAULT_CLIENT_STATUS_TTL;
pub use secrets::{
    generate_client_id, generate_secret, hash_secret, try_generate_client_id, try_generate_secret,
    verify_secret, verify_secret_with_memory, HashingMemory,
};
pub use tokens::CLOCK_LEEWAY_SECS;
