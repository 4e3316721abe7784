//! Merchant callback URLs for the integrated checkout redirects.

use std::fmt;

use url::Url;

/// An absolute `http` or `https` URL with a host, without user credentials,
/// at most 2048 characters.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CallbackUrl(Url);

/// Why a string is not an acceptable callback URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidUrl {
    /// Not an absolute `http` or `https` URL with a host, or too long.
    #[error("must be an absolute http or https URL")]
    Malformed,
    /// Carries a user name or password.
    #[error("must not contain a user name or password")]
    Credentials,
    /// Plain `http` where the environment's [`CallbackRule`] wants `https`.
    #[error("must use https")]
    NotHttps,
}

/// Which callback URLs an environment accepts, beyond their shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackRule {
    /// Production: `https` only.
    HttpsOnly,
    /// Sandbox: `https`, or plain `http` to the merchant's own machine (`localhost`,
    /// `127.0.0.1`, `[::1]`), for local development.
    HttpsOrLoopbackHttp,
}

impl CallbackRule {
    /// Checks `url` against the rule.
    pub fn check(self, url: &CallbackUrl) -> Result<(), InvalidUrl> {
        if url.0.scheme() == "https" {
            return Ok(());
        }
        let loopback = match url.0.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        match self {
            CallbackRule::HttpsOrLoopbackHttp if loopback => Ok(()),
            _ => Err(InvalidUrl::NotHttps),
        }
    }
}

impl CallbackUrl {
    /// The longest URL accepted.
    pub const MAX_LEN: usize = 2048;

    /// Parses and checks a URL's shape (the scheme rule of an environment is
    /// [`CallbackRule::check`]).
    pub fn parse(s: &str) -> Result<Self, InvalidUrl> {
        let s = s.trim();
        if s.len() > Self::MAX_LEN {
            return Err(InvalidUrl::Malformed);
        }
        let url = Url::parse(s).map_err(|_| InvalidUrl::Malformed)?;
        let scheme_ok = matches!(url.scheme(), "http" | "https");
        let has_host = url.host_str().is_some_and(|h| !h.is_empty());
        if !(scheme_ok && has_host) {
            return Err(InvalidUrl::Malformed);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(InvalidUrl::Credentials);
        }
        Ok(CallbackUrl(url))
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

/// A terminal's allowlist of the hosts its callback URLs may point to: lower-case host names
/// or IP addresses, matched exactly (a subdomain is another host), at most
/// [`CallbackHosts::MAX_HOSTS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackHosts(Vec<String>);

/// Why a host cannot be in a callback allowlist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a host name or IP address")]
pub struct InvalidHost(pub String);

impl CallbackHosts {
    /// The most hosts one terminal may list.
    pub const MAX_HOSTS: usize = 64;

    /// Checks and normalises each host (as a URL parser reads it: lower case, IDNA for
    /// international names); an empty list, duplicates aside, is refused with an empty host.
    pub fn parse<'a>(hosts: impl IntoIterator<Item = &'a str>) -> Result<Self, InvalidHost> {
        let mut out: Vec<String> = Vec::new();
        for raw in hosts {
            let raw = raw.trim();
            let host = url::Host::parse(raw)
                .ok()
                .filter(|_| !raw.is_empty() && !raw.contains(['/', '@', '*']))
                .ok_or_else(|| InvalidHost(raw.to_owned()))?;
            let host = host.to_string();
            if !out.contains(&host) {
                out.push(host);
            }
        }
        if out.is_empty() || out.len() > Self::MAX_HOSTS {
            return Err(InvalidHost(String::new()));
        }
        Ok(CallbackHosts(out))
    }

    /// Whether `url` points to one of the hosts.
    pub fn allows(&self, url: &CallbackUrl) -> bool {
        url.0
            .host()
            .map(|h| h.to_string())
            .is_some_and(|host| self.0.contains(&host))
    }

    /// The hosts, normalised.
    pub fn hosts(&self) -> &[String] {
        &self.0
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
