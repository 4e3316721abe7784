//! The identity provider's hot paths: verifying a bearer token (every authenticated request)
//! and checking a client secret against its Argon2id hash (every token request):
//! `cargo bench -p checkout-identity --bench tokens`.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use checkout_domain::auth::{ClientCredentials, OAuthClient, Role, Secret};
use checkout_domain::ports::{ClientStore, IdentityProvider};
use checkout_domain::values::TerminalNumber;
use checkout_identity::{
    hash_secret, verify_secret, verify_secret_with_memory, BuiltinIdentity, Environment,
    HashingMemory, IdentityConfig, KeySet, SigningKey,
};
use criterion::{criterion_group, criterion_main, Criterion};

const CLIENT_ID: &str = "bench-client";
const SECRET: &str = "a-client-secret-of-43-characters-like-ours";

/// One active client with a real Argon2id hash of [`SECRET`].
struct OneClient(OAuthClient);

#[async_trait]
impl ClientStore for OneClient {
    async fn get_client(&self, client_id: &str) -> anyhow::Result<Option<OAuthClient>> {
        Ok((client_id == self.0.client_id).then(|| self.0.clone()))
    }
}

/// What the benchmarks need.
struct Setup {
    runtime: tokio::runtime::Runtime,
    /// A provider without the cache of verified tokens.
    identity: BuiltinIdentity,
    /// A provider with the default cache.
    cached: BuiltinIdentity,
    /// A token of `identity`.
    token: String,
    /// A token of `cached`.
    cached_token: String,
    /// The Argon2id hash of the client secret.
    hash: String,
}

/// Two sandbox providers with fresh keys (one without the token cache), a token each, and
/// the secret's hash.
fn setup() -> anyhow::Result<Setup> {
    let hash = hash_secret(SECRET)?;
    let client = OAuthClient {
        client_id: CLIENT_ID.to_owned(),
        secret_hash: hash.clone(),
        terminal: TerminalNumber::parse("BENCH-001").map_err(|e| anyhow::anyhow!("{e}"))?,
        roles: vec![Role::SvcTerminal],
        active: true,
    };
    let config = IdentityConfig {
        issuer: "hosted-checkout-sandbox".to_owned(),
        audience: "hosted-checkout".to_owned(),
        environment: Environment::Sandbox,
        token_lifetime: time::Duration::hours(1),
    };
    // Without the cache of verified tokens: every call checks the signature.
    let identity = BuiltinIdentity::new(
        config.clone(),
        KeySet::new(SigningKey::generate()?),
        Arc::new(OneClient(client)),
    )
    .with_token_cache_capacity(0);
    // Issuing runs Argon2 on tokio's blocking pool: it needs a runtime.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let issued = runtime.block_on(identity.issue_token(&ClientCredentials {
        client_id: CLIENT_ID.to_owned(),
        client_secret: Secret::new(SECRET),
    }))?;
    let token = issued.token.expose().to_owned();
    // A provider with the default cache of verified tokens (its own key: verifying the
    // other provider's token would be refused).
    let cached = BuiltinIdentity::new(
        config,
        KeySet::new(SigningKey::generate()?),
        Arc::new(OneClient(OAuthClient {
            client_id: CLIENT_ID.to_owned(),
            secret_hash: hash.clone(),
            terminal: TerminalNumber::parse("BENCH-001").map_err(|e| anyhow::anyhow!("{e}"))?,
            roles: vec![Role::SvcTerminal],
            active: true,
        })),
    );
    let cached_token = runtime
        .block_on(cached.issue_token(&ClientCredentials {
            client_id: CLIENT_ID.to_owned(),
            client_secret: Secret::new(SECRET),
        }))?
        .token
        .expose()
        .to_owned();
    Ok(Setup {
        runtime,
        identity,
        cached,
        token,
        cached_token,
        hash,
    })
}

fn tokens(c: &mut Criterion) {
    let Setup {
        runtime,
        identity,
        cached,
        token,
        cached_token,
        hash,
    } = match setup() {
        Ok(setup) => setup,
        Err(e) => panic!("benchmark setup failed: {e:#}"),
    };
    // The same token with one signature character changed, well inside the signature (the
    // last character also carries padding bits, which the decoder refuses before any
    // signature check): a refusal by the signature check itself.
    let mut bytes = token.clone().into_bytes();
    let at = bytes.len() - 10;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap_or_default();
    assert!(runtime.block_on(identity.verify(&token)).is_ok());
    assert!(runtime.block_on(identity.verify(&tampered)).is_err());

    // `verify` is async only through the port's signature: it never awaits anything, so
    // block_on on a current-thread runtime adds next to nothing.
    c.bench_function("verify_token/valid", |b| {
        b.iter(|| runtime.block_on(identity.verify(black_box(&token))))
    });
    c.bench_function("verify_token/tampered_signature", |b| {
        b.iter(|| runtime.block_on(identity.verify(black_box(&tampered))))
    });
    // The same token again and again, as a merchant reusing it: SHA-256 and a cache hit.
    assert!(runtime.block_on(cached.verify(&cached_token)).is_ok());
    c.bench_function("verify_token/valid_cached", |b| {
        b.iter(|| runtime.block_on(cached.verify(black_box(&cached_token))))
    });

    // Argon2id with the crate's defaults (19 MiB, 2 passes): tens of milliseconds a run.
    let mut group = c.benchmark_group("verify_secret");
    group.sample_size(10);
    group.bench_function("argon2id", |b| {
        b.iter(|| verify_secret(black_box(&hash), black_box(SECRET)))
    });
    // In memory kept from one verification to the next (what the provider does).
    let mut memory = HashingMemory::new();
    assert!(verify_secret_with_memory(&hash, SECRET, &mut memory));
    group.bench_function("argon2id_kept_memory", |b| {
        b.iter(|| verify_secret_with_memory(black_box(&hash), black_box(SECRET), &mut memory))
    });
    group.finish();
}

// criterion_group! defines an undocumented `pub fn benches`.
#[allow(missing_docs)]
mod group {
    use super::*;
    criterion_group!(benches, tokens);
}
criterion_main!(group::benches);
