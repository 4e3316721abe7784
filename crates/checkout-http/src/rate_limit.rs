//! Token buckets that limit how often one key (a client_id, a source address) may call the
//! token endpoint. In memory, per server instance: several instances each apply the limit.
//!
//! Why per instance and not in PostgreSQL: the limits protect each instance's CPU from
//! Argon2id work (one verification per request), which is a per-instance resource, and a
//! shared counter would cost a database write per token request, even a refused one. Secrets
//! are 256 random bits, so the N-fold allowance of N instances changes nothing for guessing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most keys kept before full buckets are forgotten (bounds memory under a flood of
/// distinct keys).
const MAX_KEYS: usize = 100_000;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// A limit of `per_minute` calls per key, with bursts up to the same number.
#[derive(Debug)]
pub struct RateLimiter {
    capacity: f64,
    per_second: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    /// A limiter allowing `per_minute` calls a minute per key; `0` allows everything.
    pub fn per_minute(per_minute: u32) -> Self {
        RateLimiter {
            capacity: f64::from(per_minute),
            per_second: f64::from(per_minute) / 60.0,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one call for `key` at `now`: `Ok` when allowed, else how long until the next
    /// call would be.
    pub fn check_at(&self, key: &str, now: Instant) -> Result<(), Duration> {
        if self.capacity <= 0.0 {
            return Ok(());
        }
        let mut buckets = match self.buckets.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if buckets.len() >= MAX_KEYS && !buckets.contains_key(key) {
            let (capacity, rate) = (self.capacity, self.per_second);
            buckets.retain(|_, b| refill(b, now, capacity, rate) < capacity);
        }
        let bucket = buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: self.capacity,
            updated: now,
        });
        let tokens = refill(bucket, now, self.capacity, self.per_second);
        if tokens >= 1.0 {
            bucket.tokens = tokens - 1.0;
            bucket.updated = now;
            Ok(())
        } else {
            bucket.tokens = tokens;
            bucket.updated = now;
            Err(Duration::from_secs_f64((1.0 - tokens) / self.per_second))
        }
    }

    /// [`RateLimiter::check_at`] now.
    pub fn check(&self, key: &str) -> Result<(), Duration> {
        self.check_at(key, Instant::now())
    }

    /// Whether one call for `key` would be allowed at `now`, without taking it: `Ok`, else
    /// how long until it would be.
    pub fn peek_at(&self, key: &str, now: Instant) -> Result<(), Duration> {
        if self.capacity <= 0.0 {
            return Ok(());
        }
        let buckets = match self.buckets.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let tokens = buckets.get(key).map_or(self.capacity, |b| {
            refill(b, now, self.capacity, self.per_second)
        });
        if tokens >= 1.0 {
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - tokens) / self.per_second))
        }
    }

    /// [`RateLimiter::peek_at`] now.
    pub fn peek(&self, key: &str) -> Result<(), Duration> {
        self.peek_at(key, Instant::now())
    }
}

/// What one key has of a limit at a moment, as the `RateLimit` header tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Calls allowed per window (the bucket's capacity).
    pub limit: u32,
    /// Calls the key may make now.
    pub remaining: u32,
    /// Seconds until the key's bucket is full again.
    pub reset_secs: u64,
}

impl RateLimiter {
    /// What `key` has of the limit at `now`; `None` when nothing is limited.
    pub fn quota_at(&self, key: &str, now: Instant) -> Option<Quota> {
        if self.capacity <= 0.0 {
            return None;
        }
        let buckets = match self.buckets.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let tokens = buckets.get(key).map_or(self.capacity, |b| {
            refill(b, now, self.capacity, self.per_second)
        });
        Some(Quota {
            limit: self.capacity as u32,
            remaining: tokens.floor().max(0.0) as u32,
            reset_secs: ((self.capacity - tokens) / self.per_second).ceil().max(0.0) as u64,
        })
    }

    /// [`RateLimiter::quota_at`] now.
    pub fn quota(&self, key: &str) -> Option<Quota> {
        self.quota_at(key, Instant::now())
    }
}

/// Sets the IETF httpapi ratelimit-headers draft's fields on `response`: `RateLimit-Policy`
/// (each `(name, quota, window seconds)` of `policies`) and, when `current` is given,
/// `RateLimit` (that policy's remaining calls `r` and seconds to a full quota `t`).
pub fn set_headers(
    response: &mut actix_web::HttpResponse,
    policies: &[(&str, u32, u64)],
    current: Option<(&str, Quota)>,
) {
    use actix_web::http::header::{HeaderName, HeaderValue};
    let policy = policies
        .iter()
        .filter(|(_, quota, _)| *quota > 0)
        .map(|(name, quota, window)| format!("\"{name}\";q={quota};w={window}"))
        .collect::<Vec<_>>()
        .join(", ");
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::try_from(policy) {
        if !value.is_empty() {
            headers.insert(HeaderName::from_static("ratelimit-policy"), value);
        }
    }
    if let Some((name, quota)) = current {
        let value = format!("\"{name}\";r={};t={}", quota.remaining, quota.reset_secs);
        if let Ok(value) = HeaderValue::try_from(value) {
            headers.insert(HeaderName::from_static("ratelimit"), value);
        }
    }
}

/// The bucket's tokens at `now`, refilled since its last use, at most `capacity`.
fn refill(bucket: &Bucket, now: Instant, capacity: f64, per_second: f64) -> f64 {
    let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
    (bucket.tokens + elapsed * per_second).min(capacity)
}

/// The limits of `POST /api/public/security/auth`.
///
/// Refusals are counted per client *and* source address, and the per-client limit counts
/// tokens issued only: a stranger who knows a `client_id` and sends wrong secrets exhausts
/// their own bucket, never the merchant's.
#[derive(Debug)]
pub struct AuthLimits {
    /// Tokens issued per `client_id` (checked before, taken on success).
    pub per_client: RateLimiter,
    /// Every request per source address.
    pub per_address: RateLimiter,
    /// Refused credentials per `client_id` and source address (checked before, taken on a
    /// refusal).
    pub failures_per_client_address: RateLimiter,
}

impl AuthLimits {
    /// Limits of `per_client` tokens, `per_address` requests and `failures` refusals per
    /// client and address, a minute each (`0`: no limit).
    pub fn new(per_client: u32, per_address: u32, failures: u32) -> Self {
        AuthLimits {
            per_client: RateLimiter::per_minute(per_client),
            per_address: RateLimiter::per_minute(per_address),
            failures_per_client_address: RateLimiter::per_minute(failures),
        }
    }

    /// The token route's `RateLimit-Policy` and `RateLimit` on `response`: the per-address
    /// and per-client quotas, and what `address` has left (the limit every request counts
    /// against).
    pub fn set_headers(&self, response: &mut actix_web::HttpResponse, address: &str) {
        let policies = [
            ("address", self.per_address.capacity as u32, 60),
            ("client", self.per_client.capacity as u32, 60),
        ];
        let current = self.per_address.quota(address).map(|q| ("address", q));
        set_headers(response, &policies, current);
    }

    /// The key of `client_id` asking from `address` in
    /// [`failures_per_client_address`](Self::failures_per_client_address).
    pub fn client_address_key(client_id: &str, address: &str) -> String {
        format!("{address} {client_id}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_up_to_the_limit_passes_then_waits_for_refill() {
        let limiter = RateLimiter::per_minute(6);
        let t0 = Instant::now();
        for _ in 0..6 {
            assert!(limiter.check_at("a", t0).is_ok());
        }
        let wait = limiter.check_at("a", t0).unwrap_err();
        assert!(
            wait > Duration::from_secs(9) && wait <= Duration::from_secs(10),
            "{wait:?}"
        );
        // Another key has its own bucket.
        assert!(limiter.check_at("b", t0).is_ok());
        // Ten seconds later one call is allowed again, and only one.
        let t1 = t0 + Duration::from_secs(10);
        assert!(limiter.check_at("a", t1).is_ok());
        assert!(limiter.check_at("a", t1).is_err());
    }

    #[test]
    fn peeking_takes_nothing() {
        let limiter = RateLimiter::per_minute(2);
        let t0 = Instant::now();
        for _ in 0..10 {
            assert!(limiter.peek_at("a", t0).is_ok());
        }
        assert!(limiter.check_at("a", t0).is_ok());
        assert!(limiter.check_at("a", t0).is_ok());
        assert!(limiter.peek_at("a", t0).is_err());
        assert!(limiter.peek_at("b", t0).is_ok());
    }

    #[test]
    fn the_quota_counts_down_and_tells_when_it_is_full_again() {
        let limiter = RateLimiter::per_minute(3);
        let now = Instant::now();
        assert_eq!(
            limiter.quota_at("k", now),
            Some(Quota {
                limit: 3,
                remaining: 3,
                reset_secs: 0
            })
        );
        limiter.check_at("k", now).unwrap();
        limiter.check_at("k", now).unwrap();
        // Two calls taken, one refilled every 20 s: full in 40 s.
        assert_eq!(
            limiter.quota_at("k", now),
            Some(Quota {
                limit: 3,
                remaining: 1,
                reset_secs: 40
            })
        );
        assert_eq!(RateLimiter::per_minute(0).quota_at("k", now), None);
    }

    #[test]
    fn zero_means_no_limit() {
        let limiter = RateLimiter::per_minute(0);
        let now = Instant::now();
        for _ in 0..10_000 {
            assert!(limiter.check_at("a", now).is_ok());
        }
    }
}
