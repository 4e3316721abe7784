//! Integration tests of the identity adapters, through their public API only: the built-in
//! provider, and the OpenID Connect adapter against a real provider (the npm `oidc-provider`
//! package, installed by `scripts/oidc-provider.sh` and started by the tests).

mod contract;
mod keys;
mod negative;
mod node_provider;
mod oidc;
mod provider;
mod support;
