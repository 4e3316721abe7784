//! Integration tests of the built-in identity provider, through its public API only.

mod keys;
mod negative;
mod provider;
mod support;
