//! The Stripe adapter's settings, and the API key kept out of every `Debug` output.

use std::fmt;
use std::time::Duration;

use url::Url;

/// Where and how to reach Stripe (or, for tests, a stand-in or localstripe).
#[derive(Clone)]
pub struct StripeConfig {
    /// The API's base address, for example `https://api.stripe.com/` or
    /// `http://127.0.0.1:8420/`; the `/v1/...` paths are appended to it.
    pub base_url: Url,
    /// The secret API key (`sk_...`). Never logged: `Debug` prints a mask.
    pub api_key: String,
    /// The timeout of every HTTP call; a call that takes longer is a communication error.
    pub timeout: Duration,
}

impl fmt::Debug for StripeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StripeConfig")
            .field("base_url", &self.base_url.as_str())
            .field("api_key", &"***")
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The secret API key, exposed only on the line that sends it.
#[derive(Clone)]
pub(crate) struct ApiKey(String);

impl ApiKey {
    /// Checks that the key can be sent in a header.
    pub fn parse(key: String) -> anyhow::Result<Self> {
        if key.is_empty() {
            anyhow::bail!("the Stripe API key is empty");
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            anyhow::bail!("the Stripe API key contains spaces or non-ASCII characters");
        }
        Ok(ApiKey(key))
    }

    /// The key, for the `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Checks a base address: `http` or `https`, with a path the API paths can be appended to.
pub(crate) fn check_base_url(url: &Url) -> anyhow::Result<()> {
    if !matches!(url.scheme(), "http" | "https") {
        anyhow::bail!(
            "the Stripe base URL must be http or https, not {}",
            url.scheme()
        );
    }
    if url.cannot_be_a_base() || url.host().is_none() {
        anyhow::bail!("the Stripe base URL has no host");
    }
    if url.query().is_some() || url.fragment().is_some() {
        anyhow::bail!("the Stripe base URL must not have a query or a fragment");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_masks_the_key() {
        let config = StripeConfig {
            base_url: Url::parse("http://127.0.0.1:1/").unwrap(),
            api_key: "sk_test_secret_value".into(),
            timeout: Duration::from_secs(1),
        };
        let printed = format!("{config:?}");
        assert!(!printed.contains("secret_value"), "{printed}");
        assert!(printed.contains("***"));
        let key = ApiKey::parse(config.api_key.clone()).unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(ApiKey::parse(String::new()).is_err());
        assert!(ApiKey::parse("sk test".into()).is_err());
        for url in [
            "ftp://example.com/",
            "mailto:x@example.com",
            "http://h/?a=1",
        ] {
            assert!(check_base_url(&Url::parse(url).unwrap()).is_err(), "{url}");
        }
        assert!(check_base_url(&Url::parse("https://api.stripe.com").unwrap()).is_ok());
    }
}
