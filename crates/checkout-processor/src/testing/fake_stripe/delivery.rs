//! Webhook delivery as Stripe does it: each event is POSTed, signed, to an endpoint; a non-2xx
//! answer or a failed connection is retried with a doubling back-off; events may arrive twice
//! and out of order.

use std::sync::Arc;
use std::time::Duration;

use ring::hmac;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinSet;
use url::Url;

use super::cards::unix_now;
use super::events::Event;
use super::server::Shared;
use super::store::random_token;
use super::DeliverySnapshot;

/// How long one send may take, connection included, before it counts as failed.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const USER_AGENT: &str = "Stripe/1.0 (+https://stripe.com/docs/webhooks)";

/// How events reach an endpoint ([`FakeStripe::deliver_events_to`](super::FakeStripe::deliver_events_to)).
#[derive(Clone, Debug)]
pub struct EventDelivery {
    /// The probability that an event is delivered twice, as two separate deliveries (each
    /// with its own delay and retries), as Stripe sometimes does. Default 0.
    pub duplicates: f64,
    /// Each delivery's first send waits a random time below this, so that events arrive out
    /// of order. Default zero (sent at once, though still concurrently, so order is not
    /// guaranteed either).
    pub reorder_window: Duration,
    /// The wait before the first retry after a non-2xx answer or a failed connection; each
    /// further retry waits twice as long as the one before. Default 100 ms.
    pub retry_base: Duration,
    /// How many sends a delivery makes at most, the first included. Default 8.
    pub max_attempts: u32,
    /// The seed of the random choices (duplicates and delays).
    pub seed: u64,
}

impl Default for EventDelivery {
    fn default() -> Self {
        EventDelivery {
            duplicates: 0.0,
            reorder_window: Duration::ZERO,
            retry_base: Duration::from_millis(100),
            max_attempts: 8,
            seed: 0,
        }
    }
}

/// Where and how events are delivered.
pub(super) struct Endpoint {
    url: Url,
    secret: hmac::Key,
    /// The key of the `v0` signature, which is not the endpoint's secret.
    legacy: hmac::Key,
    delivery: EventDelivery,
    client: reqwest::Client,
}

impl Endpoint {
    pub fn new(url: Url, secret: &str, delivery: EventDelivery) -> Endpoint {
        let client = reqwest::Client::builder()
            .timeout(SEND_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(0)
            .no_proxy()
            .user_agent(USER_AGENT)
            .build()
            .expect("an HTTP client");
        Endpoint {
            url,
            secret: hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes()),
            legacy: hmac::Key::new(hmac::HMAC_SHA256, random_token(32).as_bytes()),
            delivery,
            client,
        }
    }

    /// The `Stripe-Signature` header of `body` sent at `t` (unix seconds).
    fn signature(&self, t: i64, body: &str) -> String {
        let signed = format!("{t}.{body}");
        let v1 = hex(hmac::sign(&self.secret, signed.as_bytes()).as_ref());
        let v0 = hex(hmac::sign(&self.legacy, signed.as_bytes()).as_ref());
        format!("t={t},v1={v1},v0={v0}")
    }

    /// Sends `event` once: the status answered, `None` when there was no answer.
    async fn send(&self, event: &Event) -> Option<u16> {
        let response = self
            .client
            .post(self.url.clone())
            .header("content-type", "application/json; charset=utf-8")
            .header("stripe-signature", self.signature(unix_now(), &event.body))
            .body(event.body.clone())
            .send()
            .await
            .ok()?;
        let status = response.status().as_u16();
        // Read the answer to its end (within the timeout); what it says does not matter.
        let _ = response.bytes().await;
        Some(status)
    }
}

/// Delivers every event `events` yields to `endpoint` until aborted; aborting it aborts the
/// deliveries under way.
pub(super) async fn run(
    mut events: UnboundedReceiver<Arc<Event>>,
    endpoint: Endpoint,
    shared: Arc<Shared>,
) {
    let endpoint = Arc::new(endpoint);
    let mut random = XorShift::new(endpoint.delivery.seed);
    let mut deliveries = JoinSet::new();
    while let Some(event) = events.recv().await {
        while deliveries.try_join_next().is_some() {}
        let copies = if random.unit() < endpoint.delivery.duplicates {
            2
        } else {
            1
        };
        for _ in 0..copies {
            let wait = endpoint.delivery.reorder_window.mul_f64(random.unit());
            let (event, endpoint, shared) = (event.clone(), endpoint.clone(), shared.clone());
            deliveries.spawn(deliver(event, endpoint, wait, shared));
        }
    }
}

/// One delivery of `event`: waits `wait`, then sends until a 2xx or the last attempt.
async fn deliver(event: Arc<Event>, endpoint: Arc<Endpoint>, wait: Duration, shared: Arc<Shared>) {
    tokio::time::sleep(wait).await;
    let mut backoff = endpoint.delivery.retry_base;
    for attempt in 1..=endpoint.delivery.max_attempts.max(1) {
        let status = endpoint.send(&event).await;
        shared.deliveries().push(DeliverySnapshot {
            event_id: event.id.clone(),
            url: endpoint.url.clone(),
            attempt,
            status,
        });
        if status.is_some_and(|s| (200..300).contains(&s)) {
            return;
        }
        if attempt < endpoint.delivery.max_attempts {
            tokio::time::sleep(backoff).await;
            backoff = backoff.saturating_mul(2);
        }
    }
}

/// Lower-case hexadecimal.
pub(super) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

/// Marsaglia's xorshift64 with a multiplying output step (xorshift64*), seeded through
/// SplitMix64 so that small seeds start well apart.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        XorShift(if z == 0 { 1 } else { z })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        // The top 53 bits, exactly representable.
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lower_case_and_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }

    #[test]
    fn the_generator_is_seeded_and_uniform_enough() {
        let draws = |seed| {
            let mut random = XorShift::new(seed);
            (0..1000).map(|_| random.unit()).collect::<Vec<f64>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        let values = draws(0);
        assert!(values.iter().all(|u| (0.0..1.0).contains(u)));
        let below_half = values.iter().filter(|u| **u < 0.5).count();
        assert!((400..600).contains(&below_half), "{below_half}");
    }
}
