//! The provider as seen over HTTP: its discovery document, and its signing keys (JWKS)
//! fetched and cached, fetched again at most once per interval.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use anyhow::Context;
use checkout_domain::ports::ProviderUnavailable;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;
use tokio::sync::Mutex;

use super::config::OidcConfig;

/// Longest answer read from the provider (discovery, JWKS, token): 256 KiB.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// How the client authenticates at the token endpoint (RFC 6749 section 2.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthMethod {
    /// HTTP Basic with the form-encoded id and secret.
    Basic,
    /// `client_id` and `client_secret` in the form body.
    Post,
}

/// What the discovery document says that this adapter uses.
#[derive(Debug, Clone)]
pub(crate) struct Metadata {
    /// Where client credentials are exchanged (absent: the provider only verifies).
    pub token_endpoint: Option<String>,
    /// Where the signing keys are published.
    pub jwks_uri: String,
    /// How the client authenticates at the token endpoint.
    pub auth_method: AuthMethod,
}

#[derive(Deserialize)]
struct Discovery {
    issuer: String,
    jwks_uri: String,
    token_endpoint: Option<String>,
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

/// One verification key of the provider.
pub(crate) struct ProviderKey {
    /// The public key.
    pub key: DecodingKey,
    /// The algorithms this key may verify, by its type and curve (and its `alg`, if given).
    pub algorithms: Vec<Algorithm>,
}

/// The keys of one fetch, by key id; keys without a key id are kept apart.
pub(crate) struct KeySnapshot {
    /// The keys with a `kid`.
    pub by_kid: HashMap<String, Arc<ProviderKey>>,
    /// The keys without one.
    pub unnamed: Vec<Arc<ProviderKey>>,
    /// When they were fetched.
    pub fetched_at: Instant,
}

impl KeySnapshot {
    /// The key for a token with header `kid` and `alg`: the one with that id, or, when the
    /// token names none, the only unnamed key (or the only key) that may verify `alg`.
    pub fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<Arc<ProviderKey>> {
        match kid {
            Some(kid) => self.by_kid.get(kid).cloned(),
            None => {
                let mut fitting = self
                    .unnamed
                    .iter()
                    .chain(self.by_kid.values())
                    .filter(|k| k.algorithms.contains(&alg));
                let first = fitting.next()?;
                fitting.next().is_none().then(|| Arc::clone(first))
            }
        }
    }
}

/// What a fetch attempt left: when it was tried, and what the last good one got.
struct Fetching {
    metadata: Option<Metadata>,
    last_attempt: Option<Instant>,
}

/// The provider's metadata and keys, fetched lazily and kept.
pub(crate) struct Remote {
    http: reqwest::Client,
    config: Arc<OidcConfig>,
    keys: RwLock<Option<Arc<KeySnapshot>>>,
    /// Held while fetching, so that concurrent verifications make one fetch.
    fetching: Mutex<Fetching>,
    /// A background refresh is under way.
    refreshing: AtomicBool,
}

/// Clears [`Remote::refreshing`] when the background refresh ends, panics included.
struct RefreshingFlag(Arc<Remote>);

impl Drop for RefreshingFlag {
    fn drop(&mut self) {
        self.0.refreshing.store(false, Ordering::Release);
    }
}

/// The marker error of an unreachable provider, with what failed.
pub(crate) fn unavailable(what: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(ProviderUnavailable(what.into()))
}

impl Remote {
    /// Nothing fetched yet; every call bounded by the configured time-out, no redirect
    /// followed, the configured CA certificates trusted besides the public roots.
    pub fn new(config: Arc<OidcConfig>) -> anyhow::Result<Self> {
        let mut builder = reqwest::Client::builder()
            .timeout(config.http_timeout)
            .connect_timeout(config.http_timeout)
            .redirect(reqwest::redirect::Policy::none());
        if !config.ca_certificates_pem.is_empty() {
            let certificates = reqwest::Certificate::from_pem_bundle(&config.ca_certificates_pem)
                .context("reading the identity provider's CA certificates")?;
            if certificates.is_empty() {
                anyhow::bail!("the identity provider's CA file holds no PEM certificate");
            }
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        let http = builder
            .build()
            .context("building the identity provider's HTTP client")?;
        Ok(Remote {
            http,
            config,
            keys: RwLock::new(None),
            fetching: Mutex::new(Fetching {
                metadata: None,
                last_attempt: None,
            }),
            refreshing: AtomicBool::new(false),
        })
    }

    /// The HTTP client of every call to the provider.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The keys held now, if any were ever fetched.
    pub fn snapshot(&self) -> Option<Arc<KeySnapshot>> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The discovery document's metadata, fetched if not yet known.
    pub async fn metadata(&self) -> anyhow::Result<Metadata> {
        let mut state = self.fetching.lock().await;
        if let Some(metadata) = &state.metadata {
            return Ok(metadata.clone());
        }
        let metadata = self.discover().await?;
        state.metadata = Some(metadata.clone());
        Ok(metadata)
    }

    /// Fetches the keys again on a task of its own, unless one is under way; `seen` is the
    /// fetch time of the keys found too old (see [`refresh`](Self::refresh)). Needs a tokio
    /// runtime.
    pub fn refresh_in_background(self: &Arc<Self>, seen: Instant) {
        if self
            .refreshing
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        let flag = RefreshingFlag(Arc::clone(self));
        tokio::spawn(async move {
            if let Err(e) = flag.0.refresh(Some(seen)).await {
                tracing::warn!(
                    error = format!("{e:#}"),
                    "identity provider keys not refreshed; the cached ones keep verifying"
                );
            }
            drop(flag);
        });
    }

    /// Fetches the keys again (discovering the provider first if need be), unless a fetch was
    /// attempted less than the refetch interval ago, or other keys than those fetched at `seen` are held already (another caller
    /// fetched meanwhile). Answers the keys held afterwards.
    pub async fn refresh(&self, seen: Option<Instant>) -> anyhow::Result<Option<Arc<KeySnapshot>>> {
        let mut state = self.fetching.lock().await;
        // Another verification fetched while this one waited: use its keys.
        let current = self.snapshot();
        if let Some(current) = &current {
            if Some(current.fetched_at) != seen {
                return Ok(Some(Arc::clone(current)));
            }
        }
        let now = Instant::now();
        if let Some(last) = state.last_attempt {
            if now.saturating_duration_since(last) < self.config.key_refetch_interval {
                return Ok(current);
            }
        }
        state.last_attempt = Some(now);
        let metadata = match &state.metadata {
            Some(metadata) => metadata.clone(),
            None => {
                let metadata = self.discover().await?;
                state.metadata = Some(metadata.clone());
                metadata
            }
        };
        let snapshot = Arc::new(self.fetch_keys(&metadata.jwks_uri).await?);
        tracing::info!(
            keys = snapshot.by_kid.len() + snapshot.unnamed.len(),
            "identity provider keys fetched"
        );
        *self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::clone(&snapshot));
        Ok(Some(snapshot))
    }

    async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        what: &str,
    ) -> anyhow::Result<T> {
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| unavailable(format!("{what}: {}", transport_error(&e))))?;
        let status = response.status();
        if !status.is_success() {
            return Err(unavailable(format!("{what}: HTTP {}", status.as_u16())));
        }
        let body = read_limited(response)
            .await
            .map_err(|e| unavailable(format!("{what}: {e}")))?;
        serde_json::from_slice(&body).with_context(|| format!("{what} is not the expected JSON"))
    }

    async fn discover(&self) -> anyhow::Result<Metadata> {
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.config.issuer.trim_end_matches('/')
        );
        let doc: Discovery = self.get_json(&url, "discovery document").await?;
        if doc.issuer != self.config.issuer {
            anyhow::bail!(
                "the discovery document names the issuer {:?}, not the configured {:?}",
                doc.issuer,
                self.config.issuer
            );
        }
        // RFC 8414: without the list, client_secret_basic is the default.
        let methods = doc
            .token_endpoint_auth_methods_supported
            .unwrap_or_else(|| vec!["client_secret_basic".to_owned()]);
        let auth_method = if methods.iter().any(|m| m == "client_secret_basic") {
            AuthMethod::Basic
        } else if methods.iter().any(|m| m == "client_secret_post") {
            AuthMethod::Post
        } else {
            anyhow::bail!("the provider's token endpoint takes neither client_secret_basic nor client_secret_post");
        };
        Ok(Metadata {
            token_endpoint: doc.token_endpoint,
            jwks_uri: doc.jwks_uri,
            auth_method,
        })
    }

    async fn fetch_keys(&self, jwks_uri: &str) -> anyhow::Result<KeySnapshot> {
        let set: serde_json::Value = self.get_json(jwks_uri, "JWKS").await?;
        let keys = set
            .get("keys")
            .and_then(serde_json::Value::as_array)
            .context("the JWKS has no keys array")?;
        let allowed = self.config.asymmetric_algorithms();
        let mut snapshot = KeySnapshot {
            by_kid: HashMap::new(),
            unnamed: Vec::new(),
            fetched_at: Instant::now(),
        };
        for value in keys {
            // A key this adapter cannot use (encryption, symmetric, unknown type) is skipped.
            let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else {
                continue;
            };
            let Some(key) = usable_key(&jwk, &allowed) else {
                continue;
            };
            match jwk.common.key_id {
                Some(kid) => {
                    snapshot.by_kid.insert(kid, Arc::new(key));
                }
                None => snapshot.unnamed.push(Arc::new(key)),
            }
        }
        Ok(snapshot)
    }
}

/// The key and the algorithms it may verify, or `None` for a key that may verify none of
/// `allowed` (an encryption key, a symmetric key, a curve not supported).
fn usable_key(jwk: &Jwk, allowed: &[Algorithm]) -> Option<ProviderKey> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let by_type: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            _ => &[],
        },
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            &[Algorithm::EdDSA]
        }
        // Symmetric keys never verify a token here: HMAC is not accepted.
        _ => &[],
    };
    let named: Option<Algorithm> = match jwk.common.key_algorithm {
        Some(alg) => Some(alg.to_string().parse().ok()?),
        None => None,
    };
    let algorithms: Vec<Algorithm> = by_type
        .iter()
        .copied()
        .filter(|alg| allowed.contains(alg) && named.is_none_or(|named| named == *alg))
        .collect();
    if algorithms.is_empty() {
        return None;
    }
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(ProviderKey { key, algorithms })
}

/// A transport error's kind, without its URL's query or anything sent.
pub(crate) fn transport_error(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    }
}

/// The body, refused when longer than [`MAX_ANSWER_BYTES`].
pub(crate) async fn read_limited(mut response: reqwest::Response) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| anyhow::anyhow!("reading the answer: {}", transport_error(&e)))?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            anyhow::bail!("the answer is longer than {MAX_ANSWER_BYTES} bytes");
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
