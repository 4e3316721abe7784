//! HTTP calls to the Stripe API and the classification of what comes back: an answer, a
//! decline (402), a refusal (another 4xx) or no usable answer at all.

use std::time::Duration;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;
use url::Url;

use super::api::{ApiError, ErrorBody};
use super::config::ApiKey;

/// The Stripe API version the adapter is written against.
const STRIPE_VERSION: &str = "2024-06-20";

/// Why a call gave no usable answer.
pub(crate) enum CallError {
    /// 402: the card was declined.
    Declined(ApiError),
    /// Another 4xx: the request was refused and nothing was done.
    Refused {
        /// The call refused.
        call: &'static str,
        /// The HTTP status.
        status: StatusCode,
        /// The error body (empty when it could not be read).
        error: ApiError,
    },
    /// Timeout, connection failure, 5xx, 409, 429 or an unreadable answer: what the processor
    /// did is unknown. The text names the call and the cause, never request data.
    Unreachable(String),
}

/// Form fields of a POST, card fields included: held only for the call.
pub(crate) type Form = Vec<(&'static str, String)>;

/// The Stripe HTTP API at one base address, with one key and one timeout.
pub(crate) struct Client {
    http: reqwest::Client,
    base_url: Url,
    api_key: ApiKey,
    timeout: Duration,
}

impl Client {
    /// A client whose every call times out after `timeout`.
    pub fn new(base_url: Url, api_key: ApiKey, timeout: Duration) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("hosted-checkout/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Client {
            http,
            base_url,
            api_key,
            timeout,
        })
    }

    /// The base address.
    pub fn base_url(&self) -> &Url {
        &self.base_url
    }

    /// `base_url` followed by `segments` (each one percent-encoded).
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base_url.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    /// `POST` a form to `segments`, with an `Idempotency-Key` when given (a call that is
    /// idempotent by nature, such as a cancel, goes without: a saved answer would be stale).
    pub async fn post<T: DeserializeOwned>(
        &self,
        call: &'static str,
        segments: &[&str],
        idempotency_key: Option<&str>,
        form: &Form,
    ) -> Result<T, CallError> {
        let mut request = self.request(Method::POST, segments).form(form);
        if let Some(key) = idempotency_key {
            request = request.header("Idempotency-Key", key);
        }
        self.execute(call, request).await
    }

    /// `GET` `segments` with a query.
    pub async fn get<T: DeserializeOwned>(
        &self,
        call: &'static str,
        segments: &[&str],
        query: &[(&str, &str)],
    ) -> Result<T, CallError> {
        let request = self.request(Method::GET, segments).query(query);
        self.execute(call, request).await
    }

    fn request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        self.http
            .request(method, self.url(segments))
            .bearer_auth(self.api_key.expose())
            .header("Stripe-Version", STRIPE_VERSION)
    }

    async fn execute<T: DeserializeOwned>(
        &self,
        call: &'static str,
        request: RequestBuilder,
    ) -> Result<T, CallError> {
        let response = request
            .send()
            .await
            .map_err(|e| self.transport_error(call, &e))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| self.transport_error(call, &e))?;
        tracing::debug!(call, status = status.as_u16(), "stripe answered");

        if status.is_success() {
            // serde's own text may quote the body: only its position is kept.
            return serde_json::from_slice(&body).map_err(|e| {
                CallError::Unreachable(format!(
                    "{call}: unreadable answer ({:?} error at line {} column {})",
                    e.classify(),
                    e.line(),
                    e.column()
                ))
            });
        }
        // A refusal whose body cannot be read might name an intent: that is doubt.
        let Ok(ErrorBody { error }) = serde_json::from_slice::<ErrorBody>(&body) else {
            return Err(CallError::Unreachable(format!(
                "{call}: HTTP {} with an unreadable error body",
                status.as_u16()
            )));
        };
        Err(match status {
            StatusCode::PAYMENT_REQUIRED => CallError::Declined(error),
            // A concurrent request with the same idempotency key, or one that reused it with
            // other parameters: a charge may exist, so the outcome is unknown.
            StatusCode::CONFLICT => CallError::Unreachable(format!("{call}: HTTP 409 conflict")),
            _ if error.kind.as_deref() == Some("idempotency_error") => {
                CallError::Unreachable(format!("{call}: idempotency key reused"))
            }
            StatusCode::TOO_MANY_REQUESTS => {
                CallError::Unreachable(format!("{call}: HTTP 429 rate limited"))
            }
            StatusCode::REQUEST_TIMEOUT => {
                CallError::Unreachable(format!("{call}: HTTP 408 request timeout"))
            }
            s if s.is_client_error() => CallError::Refused {
                call,
                status,
                error,
            },
            s => CallError::Unreachable(format!("{call}: HTTP {}", s.as_u16())),
        })
    }

    fn transport_error(&self, call: &str, error: &reqwest::Error) -> CallError {
        if error.is_timeout() {
            return CallError::Unreachable(format!(
                "{call}: timed out after {} ms",
                self.timeout.as_millis()
            ));
        }
        let what = if error.is_connect() {
            "could not connect"
        } else {
            "connection failed"
        };
        // The innermost cause ("connection refused", "connection closed before message
        // completed"); reqwest's own text would add the URL.
        let mut cause: &dyn std::error::Error = error;
        while let Some(inner) = cause.source() {
            cause = inner;
        }
        CallError::Unreachable(format!("{call}: {what}: {cause}"))
    }
}
