//! Merchant callback URLs for the integrated checkout redirects.

use std::fmt;

use url::Url;

/// An absolute `http` or `https` URL with a host, without user credentials,
/// at most 2048 characters.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CallbackUrl(Url);

/// A string that is not an acceptable callback URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be an absolute http or https URL")]
pub struct InvalidUrl;

impl CallbackUrl {
    /// The longest URL accepted.
    pub const MAX_LEN: usize = 2048;

    /// Parses and checks a URL.
    pub fn parse(s: &str) -> Result<Self, InvalidUrl> {
        let s = s.trim();
        if s.len() > Self::MAX_LEN {
            return Err(InvalidUrl);
        }
        let url = Url::parse(s).map_err(|_| InvalidUrl)?;
        let scheme_ok = matches!(url.scheme(), "http" | "https");
        let has_host = url.host_str().is_some_and(|h| !h.is_empty());
        let no_credentials = url.username().is_empty() && url.password().is_none();
        if scheme_ok && has_host && no_credentials {
            Ok(CallbackUrl(url))
        } else {
            Err(InvalidUrl)
        }
    }

    /// The URL.
    pub fn url(&self) -> &Url {
        &self.0
    }

    /// The URL as text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for CallbackUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

impl fmt::Debug for CallbackUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CallbackUrl({})", self.0)
    }
}
