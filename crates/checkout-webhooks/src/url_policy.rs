//! Which webhook URLs the service posts to: the shape of the URL, its scheme, and every address
//! its host resolves to. Checked when a URL is saved ([`UrlPolicy::check`]) and again on every
//! delivery ([`UrlPolicy::resolve`], whose addresses the sender then connects to, and only
//! them), so that a host that later resolves somewhere internal is refused then.
//!
//! Only public addresses are allowed, over `https`, unless the policy allows private targets
//! ([`UrlPolicy::with_private_targets`]): a sandbox served on loopback, for a developer's own
//! receiver, may also post to loopback and private addresses (plain `http` too, to `localhost`
//! or such an address). Production never does, whatever it is told.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use checkout_domain::Environment;
use url::{Host, Url};

/// What kind of address an IP address is, as far as webhooks care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressKind {
    /// Globally routable: webhooks may go there.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), unique-local `fc00::/7`, site-local
    /// `fec0::/10`.
    Private,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// `0.0.0.0`, `::`.
    Unspecified,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// Carrier-grade NAT, `100.64/10` (RFC 6598).
    SharedAddressSpace,
    /// Any other special-purpose range: `0/8`, `192.0.0/24`, the documentation and benchmarking
    /// ranges, `240/4` and the broadcast address; IPv4-compatible `::/96`, discard-only
    /// `100::/64`, Teredo `2001::/32`, documentation `2001:db8::/32`, local-use NAT64
    /// `64:ff9b:1::/48`.
    Reserved,
}

impl AddressKind {
    /// The kind of `ip`. An IPv6 address that carries an IPv4 address (IPv4-mapped
    /// `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is of the kind of the IPv4
    /// address it leads to.
    pub fn of(ip: IpAddr) -> AddressKind {
        match ip {
            IpAddr::V4(v4) => kind_v4(v4),
            IpAddr::V6(v6) => kind_v6(v6),
        }
    }

    fn article_name(self) -> &'static str {
        match self {
            AddressKind::Public => "a public",
            AddressKind::Loopback => "a loopback",
            AddressKind::Private => "a private",
            AddressKind::LinkLocal => "a link-local",
            AddressKind::Unspecified => "an unspecified",
            AddressKind::Multicast => "a multicast",
            AddressKind::SharedAddressSpace => "a carrier-grade NAT",
            AddressKind::Reserved => "a reserved",
        }
    }
}

impl fmt::Display for AddressKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // "a private address"
        write!(f, "{} address", self.article_name())
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    u128::from(ip) & mask == u128::from(Ipv6Addr::from(net)) & mask
}

fn kind_v4(ip: Ipv4Addr) -> AddressKind {
    if ip.is_unspecified() {
        AddressKind::Unspecified
    } else if ip.is_loopback() {
        AddressKind::Loopback
    } else if ip.is_private() {
        AddressKind::Private
    } else if ip.is_link_local() {
        AddressKind::LinkLocal
    } else if ip.is_multicast() {
        AddressKind::Multicast
    } else if in_v4(ip, [100, 64, 0, 0], 10) {
        AddressKind::SharedAddressSpace
    } else if in_v4(ip, [0, 0, 0, 0], 8)
        || in_v4(ip, [192, 0, 0, 0], 24)
        || in_v4(ip, [192, 0, 2, 0], 24)
        || in_v4(ip, [198, 18, 0, 0], 15)
        || in_v4(ip, [198, 51, 100, 0], 24)
        || in_v4(ip, [203, 0, 113, 0], 24)
        || in_v4(ip, [240, 0, 0, 0], 4)
    {
        // 240/4 includes the broadcast address 255.255.255.255.
        AddressKind::Reserved
    } else {
        AddressKind::Public
    }
}

fn kind_v6(ip: Ipv6Addr) -> AddressKind {
    let octets = ip.octets();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return kind_v4(v4);
    }
    if in_v6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        return kind_v4(Ipv4Addr::new(
            octets[12], octets[13], octets[14], octets[15],
        ));
    }
    if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        return kind_v4(Ipv4Addr::new(octets[2], octets[3], octets[4], octets[5]));
    }
    if ip.is_unspecified() {
        AddressKind::Unspecified
    } else if ip.is_loopback() {
        AddressKind::Loopback
    } else if in_v6(ip, [0xfc00, 0, 0, 0, 0, 0, 0, 0], 7)
        || in_v6(ip, [0xfec0, 0, 0, 0, 0, 0, 0, 0], 10)
    {
        AddressKind::Private
    } else if in_v6(ip, [0xfe80, 0, 0, 0, 0, 0, 0, 0], 10) {
        AddressKind::LinkLocal
    } else if ip.is_multicast() {
        AddressKind::Multicast
    } else if in_v6(ip, [0, 0, 0, 0, 0, 0, 0, 0], 96)
        || in_v6(ip, [0x100, 0, 0, 0, 0, 0, 0, 0], 64)
        || in_v6(ip, [0x2001, 0, 0, 0, 0, 0, 0, 0], 32)
        || in_v6(ip, [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32)
        || in_v6(ip, [0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48)
    {
        AddressKind::Reserved
    } else {
        AddressKind::Public
    }
}

/// Why a webhook URL is refused. The message names the problem and is fit for the merchant (it
/// never holds a resolved address; [`UrlError::ForbiddenAddress`] keeps it for logs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Longer than [`UrlPolicy::MAX_LEN`].
    #[error("must be at most 2048 characters")]
    TooLong,
    /// Not an absolute URL with a host.
    #[error("must be an absolute URL with a host")]
    NotAbsolute,
    /// A scheme other than `http` and `https`.
    #[error("must be an https URL")]
    Scheme,
    /// Plain `http` where the environment wants `https`.
    #[error("must use https")]
    NotHttps,
    /// Plain `http` to a host that is not loopback or private, where those are allowed.
    #[error(
        "must use https (plain http is accepted only to localhost or a private address, in a sandbox served on loopback)"
    )]
    HttpNotLoopback,
    /// Carries a user name or password.
    #[error("must not contain a user name or password")]
    Credentials,
    /// Carries a `#fragment`.
    #[error("must not contain a fragment")]
    Fragment,
    /// The host name resolves to no address (or not in time).
    #[error("must have a host that resolves")]
    Unresolvable,
    /// The host is, or resolves to, an address webhooks may not go to.
    #[error("must not point to {kind}")]
    ForbiddenAddress {
        /// The refused address (for logs; not in the message).
        address: IpAddr,
        /// What kind of address it is.
        kind: AddressKind,
    },
}

/// Looks host names up. The system's resolver ([`SystemResolver`]) in production; tests give
/// their own.
pub trait Resolve: Send + Sync {
    /// Every address of `host` (a domain name, never an IP literal).
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;
}

/// The operating system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host, 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// Where a delivery connects: a URL that passed the policy and the addresses checked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedTarget {
    /// The URL.
    pub url: Url,
    /// The host name and its checked addresses, when the host is a name (the connection must
    /// go to one of these, never to a fresh lookup); `None` when the host is an IP literal
    /// (checked itself).
    pub pinned: Option<(String, Vec<IpAddr>)>,
}

impl CheckedTarget {
    /// True when the connection may go to a loopback or private address (one of the host's
    /// addresses is, or the host is such a literal): what it answers is the host's own
    /// network's, and its body is never kept.
    pub fn internal(&self) -> bool {
        match &self.pinned {
            Some((_, addresses)) => addresses.iter().any(|ip| is_internal(*ip)),
            None => match self.url.host() {
                Some(Host::Ipv4(ip)) => is_internal(IpAddr::V4(ip)),
                Some(Host::Ipv6(ip)) => is_internal(IpAddr::V6(ip)),
                _ => false,
            },
        }
    }
}

/// The webhook URL rules of one environment.
#[derive(Clone)]
pub struct UrlPolicy {
    environment: Environment,
    private_targets: bool,
    resolver: Arc<dyn Resolve>,
    lookup_timeout: Duration,
}

impl fmt::Debug for UrlPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UrlPolicy")
            .field("environment", &self.environment)
            .field("private_targets", &self.private_targets)
            .field("lookup_timeout", &self.lookup_timeout)
            .finish_non_exhaustive()
    }
}

impl UrlPolicy {
    /// The longest URL accepted.
    pub const MAX_LEN: usize = 2048;
    /// How long a host name lookup may take by default.
    pub const DEFAULT_LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

    /// The rules of `environment`, with the system's resolver: the sandbox allows loopback and
    /// private targets (as a sandbox served on loopback does), production does not.
    pub fn new(environment: Environment) -> UrlPolicy {
        UrlPolicy {
            environment,
            private_targets: environment == Environment::Sandbox,
            resolver: Arc::new(SystemResolver),
            lookup_timeout: Self::DEFAULT_LOOKUP_TIMEOUT,
        }
    }

    /// The same rules allowing, or not, loopback and private targets (and plain `http` to
    /// them). Production never allows them: `allowed` is ignored there.
    pub fn with_private_targets(mut self, allowed: bool) -> UrlPolicy {
        self.private_targets = allowed && self.environment == Environment::Sandbox;
        self
    }

    /// Whether loopback and private targets are allowed.
    pub fn private_targets(&self) -> bool {
        self.private_targets
    }

    /// How long a host name lookup may take.
    pub fn lookup_timeout(&self) -> Duration {
        self.lookup_timeout
    }

    /// The same rules with another resolver.
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolve>) -> UrlPolicy {
        self.resolver = resolver;
        self
    }

    /// The same rules with another lookup timeout.
    pub fn with_lookup_timeout(mut self, timeout: Duration) -> UrlPolicy {
        self.lookup_timeout = timeout;
        self
    }

    /// The environment.
    pub fn environment(&self) -> Environment {
        self.environment
    }

    /// Parses `text` and checks everything but DNS: absolute `http`/`https` URL with a host,
    /// no credentials, no fragment, the scheme rule, and an IP literal host's address.
    pub fn parse(&self, text: &str) -> Result<Url, UrlError> {
        if text.len() > Self::MAX_LEN {
            return Err(UrlError::TooLong);
        }
        let url = Url::parse(text).map_err(|_| UrlError::NotAbsolute)?;
        self.check_syntax(&url)?;
        Ok(url)
    }

    /// [`UrlPolicy::parse`]'s checks on a parsed URL.
    pub fn check_syntax(&self, url: &Url) -> Result<(), UrlError> {
        if url.as_str().len() > Self::MAX_LEN {
            return Err(UrlError::TooLong);
        }
        let plain_http = match url.scheme() {
            "https" => false,
            "http" => true,
            _ if url.cannot_be_a_base() => return Err(UrlError::NotAbsolute),
            _ => return Err(UrlError::Scheme),
        };
        let host = url.host().ok_or(UrlError::NotAbsolute)?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Credentials);
        }
        if url.fragment().is_some() {
            return Err(UrlError::Fragment);
        }
        if plain_http {
            if !self.private_targets {
                return Err(UrlError::NotHttps);
            }
            if !is_internal_host(&host) {
                return Err(UrlError::HttpNotLoopback);
            }
        }
        match host {
            Host::Ipv4(ip) => self.check_address(plain_http, IpAddr::V4(ip)),
            Host::Ipv6(ip) => self.check_address(plain_http, IpAddr::V6(ip)),
            Host::Domain(_) => Ok(()),
        }
    }

    /// Whether a connection may go to `ip`: a public address; also loopback and private ones
    /// where private targets are allowed. For plain `http` (allowed only with private targets)
    /// the address must be loopback or private.
    pub fn check_address(&self, plain_http: bool, ip: IpAddr) -> Result<(), UrlError> {
        let kind = AddressKind::of(ip);
        let allowed = match kind {
            AddressKind::Loopback | AddressKind::Private => self.private_targets,
            AddressKind::Public if plain_http => return Err(UrlError::HttpNotLoopback),
            AddressKind::Public => true,
            _ => false,
        };
        if allowed {
            Ok(())
        } else {
            Err(UrlError::ForbiddenAddress { address: ip, kind })
        }
    }

    /// Every check, DNS included: use it when a URL is saved.
    pub async fn check(&self, text: &str) -> Result<Url, UrlError> {
        let url = self.parse(text)?;
        self.resolve(&url).await?;
        Ok(url)
    }

    /// Checks `url` and resolves its host (once), checking every address: use it on every
    /// delivery, and connect only to the addresses returned.
    pub async fn resolve(&self, url: &Url) -> Result<CheckedTarget, UrlError> {
        self.check_syntax(url)?;
        let plain_http = url.scheme() == "http";
        let Some(Host::Domain(name)) = url.host() else {
            // An IP literal, checked by check_syntax.
            return Ok(CheckedTarget {
                url: url.clone(),
                pinned: None,
            });
        };
        let addresses = tokio::time::timeout(self.lookup_timeout, self.resolver.lookup(name))
            .await
            .map_err(|_| UrlError::Unresolvable)?
            .map_err(|_| UrlError::Unresolvable)?;
        if addresses.is_empty() {
            return Err(UrlError::Unresolvable);
        }
        for ip in &addresses {
            self.check_address(plain_http, *ip)?;
        }
        Ok(CheckedTarget {
            url: url.clone(),
            pinned: Some((name.to_owned(), addresses)),
        })
    }
}

/// `localhost` (and names under it, RFC 6761), or a loopback or private IP literal.
fn is_internal_host(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => {
            let name = name.trim_end_matches('.');
            name.eq_ignore_ascii_case("localhost")
                || name.to_ascii_lowercase().ends_with(".localhost")
        }
        Host::Ipv4(ip) => is_internal(IpAddr::V4(*ip)),
        Host::Ipv6(ip) => is_internal(IpAddr::V6(*ip)),
    }
}

/// A loopback or private address.
fn is_internal(ip: IpAddr) -> bool {
    matches!(
        AddressKind::of(ip),
        AddressKind::Loopback | AddressKind::Private
    )
}

/// A resolver that answers from a fixed table, for tests: a name it does not know does not
/// resolve, and every lookup is counted.
#[cfg(any(test, feature = "testing"))]
#[derive(Debug, Default)]
pub struct StaticResolver {
    table: std::collections::HashMap<String, Vec<IpAddr>>,
    lookups: std::sync::atomic::AtomicUsize,
}

#[cfg(any(test, feature = "testing"))]
impl StaticResolver {
    /// An empty table.
    pub fn new() -> StaticResolver {
        StaticResolver::default()
    }

    /// The table with `host` resolving to `addresses`.
    pub fn with(mut self, host: &str, addresses: &[IpAddr]) -> StaticResolver {
        self.table
            .insert(host.to_ascii_lowercase(), addresses.to_vec());
        self
    }

    /// How many lookups were made.
    pub fn lookups(&self) -> usize {
        self.lookups.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[cfg(any(test, feature = "testing"))]
impl Resolve for StaticResolver {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>> {
        self.lookups
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let answer = self
            .table
            .get(&host.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "unknown host"));
        Box::pin(std::future::ready(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn production() -> UrlPolicy {
        UrlPolicy::new(Environment::Production)
    }

    fn sandbox() -> UrlPolicy {
        UrlPolicy::new(Environment::Sandbox)
    }

    #[test]
    fn address_kinds() {
        for (addr, kind) in [
            ("8.8.8.8", AddressKind::Public),
            ("1.1.1.1", AddressKind::Public),
            ("2606:4700:4700::1111", AddressKind::Public),
            ("127.0.0.1", AddressKind::Loopback),
            ("127.255.255.254", AddressKind::Loopback),
            ("::1", AddressKind::Loopback),
            ("10.0.0.1", AddressKind::Private),
            ("172.16.0.1", AddressKind::Private),
            ("172.31.255.255", AddressKind::Private),
            ("192.168.1.1", AddressKind::Private),
            ("fc00::1", AddressKind::Private),
            ("fd12:3456::1", AddressKind::Private),
            ("fec0::1", AddressKind::Private),
            ("169.254.169.254", AddressKind::LinkLocal),
            ("fe80::1", AddressKind::LinkLocal),
            ("febf::1", AddressKind::LinkLocal),
            ("0.0.0.0", AddressKind::Unspecified),
            ("::", AddressKind::Unspecified),
            ("224.0.0.1", AddressKind::Multicast),
            ("239.255.255.250", AddressKind::Multicast),
            ("ff02::1", AddressKind::Multicast),
            ("100.64.0.1", AddressKind::SharedAddressSpace),
            ("100.127.255.255", AddressKind::SharedAddressSpace),
            ("0.1.2.3", AddressKind::Reserved),
            ("255.255.255.255", AddressKind::Reserved),
            ("240.0.0.1", AddressKind::Reserved),
            ("192.0.2.1", AddressKind::Reserved),
            ("198.18.0.1", AddressKind::Reserved),
            ("2001:db8::1", AddressKind::Reserved),
            ("2001::1", AddressKind::Reserved),
            ("::10.0.0.1", AddressKind::Reserved),
            ("64:ff9b:1::1", AddressKind::Reserved),
            // IPv4-mapped, NAT64 and 6to4 forms are judged by the IPv4 address they carry.
            ("::ffff:127.0.0.1", AddressKind::Loopback),
            ("::ffff:10.1.2.3", AddressKind::Private),
            ("::ffff:169.254.169.254", AddressKind::LinkLocal),
            ("::ffff:100.64.0.1", AddressKind::SharedAddressSpace),
            ("::ffff:0.0.0.0", AddressKind::Unspecified),
            ("::ffff:224.0.0.1", AddressKind::Multicast),
            ("::ffff:8.8.8.8", AddressKind::Public),
            ("64:ff9b::10.0.0.1", AddressKind::Private),
            ("64:ff9b::8.8.8.8", AddressKind::Public),
            ("2002:7f00:1::1", AddressKind::Loopback),
            ("2002:c0a8:101::1", AddressKind::Private),
            ("2002:808:808::1", AddressKind::Public),
            // Neighbours of the ranges are public.
            ("100.63.255.255", AddressKind::Public),
            ("100.128.0.0", AddressKind::Public),
            ("172.15.255.255", AddressKind::Public),
            ("172.32.0.0", AddressKind::Public),
            ("169.253.255.255", AddressKind::Public),
            ("fbff::1", AddressKind::Public),
        ] {
            assert_eq!(AddressKind::of(ip(addr)), kind, "{addr}");
        }
    }

    #[test]
    fn shapes_refused_in_every_environment() {
        for policy in [production(), sandbox()] {
            for (url, error) in [
                ("/relative/path", UrlError::NotAbsolute),
                ("merchant.example/hooks", UrlError::NotAbsolute),
                ("", UrlError::NotAbsolute),
                ("https://", UrlError::NotAbsolute),
                ("mailto:ops@merchant.example", UrlError::NotAbsolute),
                ("ftp://merchant.example/hooks", UrlError::Scheme),
                ("file:///etc/passwd", UrlError::Scheme),
                ("https://user:pass@merchant.example/", UrlError::Credentials),
                ("https://user@merchant.example/", UrlError::Credentials),
                ("https://merchant.example/hooks#top", UrlError::Fragment),
                ("https://merchant.example/hooks#", UrlError::Fragment),
            ] {
                assert_eq!(policy.parse(url), Err(error), "{url}");
            }
            let long = format!("https://merchant.example/{}", "a".repeat(2048));
            assert_eq!(policy.parse(&long), Err(UrlError::TooLong));
        }
    }

    #[test]
    fn production_takes_https_to_public_hosts_only() {
        let p = production();
        assert!(p.parse("https://merchant.example/hooks?x=1").is_ok());
        assert!(p.parse("https://8.8.8.8:8443/hooks").is_ok());
        assert!(p.parse("https://[2606:4700:4700::1111]/hooks").is_ok());
        assert_eq!(
            p.parse("http://merchant.example/hooks"),
            Err(UrlError::NotHttps)
        );
        assert_eq!(p.parse("http://127.0.0.1/"), Err(UrlError::NotHttps));
        for (url, kind) in [
            ("https://127.0.0.1/", AddressKind::Loopback),
            ("https://[::1]/", AddressKind::Loopback),
            ("https://10.0.0.1/", AddressKind::Private),
            (
                "https://169.254.169.254/latest/meta-data",
                AddressKind::LinkLocal,
            ),
            ("https://[::ffff:192.168.0.1]/", AddressKind::Private),
            ("https://0.0.0.0/", AddressKind::Unspecified),
            ("https://100.64.1.1/", AddressKind::SharedAddressSpace),
            ("https://[ff02::1]/", AddressKind::Multicast),
            // Forms the URL parser reads as an IPv4 address.
            ("https://2130706433/", AddressKind::Loopback),
            ("https://0x7f.1/", AddressKind::Loopback),
            ("https://0177.0.0.1/", AddressKind::Loopback),
        ] {
            match p.parse(url) {
                Err(UrlError::ForbiddenAddress { kind: k, .. }) => assert_eq!(k, kind, "{url}"),
                other => panic!("{url}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_sandbox_on_loopback_also_takes_loopback_and_private_addresses() {
        let s = sandbox();
        assert!(s.private_targets());
        for url in [
            "http://localhost:3000/hooks",
            "http://LOCALHOST./hooks",
            "http://api.localhost/hooks",
            "http://127.0.0.1:8080/hooks",
            "http://127.1.2.3/",
            "http://[::1]:9000/hooks",
            "https://localhost/hooks",
            "https://127.0.0.1/hooks",
            "https://merchant.example/hooks",
            "http://10.0.0.1/",
            "https://192.168.1.20:8443/hooks",
            "http://[fd00::5]/hooks",
        ] {
            assert!(s.parse(url).is_ok(), "{url}");
        }
        assert_eq!(
            s.parse("http://merchant.example/hooks"),
            Err(UrlError::HttpNotLoopback)
        );
        assert_eq!(s.parse("http://8.8.8.8/"), Err(UrlError::HttpNotLoopback));
        for (url, kind) in [
            ("https://169.254.169.254/", AddressKind::LinkLocal),
            ("http://169.254.169.254/", AddressKind::LinkLocal),
            ("https://100.64.1.1/", AddressKind::SharedAddressSpace),
            ("https://0.0.0.0/", AddressKind::Unspecified),
        ] {
            match s.parse(url) {
                Err(UrlError::ForbiddenAddress { kind: k, .. }) => assert_eq!(k, kind, "{url}"),
                Err(UrlError::HttpNotLoopback) if url.starts_with("http:") => {}
                other => panic!("{url}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_hosted_sandbox_takes_what_production_takes() {
        let hosted = sandbox().with_private_targets(false);
        assert!(!hosted.private_targets());
        assert!(hosted.parse("https://merchant.example/hooks").is_ok());
        assert!(hosted.parse("https://8.8.8.8:8443/hooks").is_ok());
        for url in [
            "http://localhost:3000/hooks",
            "http://127.0.0.1/",
            "http://10.0.0.1/",
        ] {
            assert_eq!(hosted.parse(url), Err(UrlError::NotHttps), "{url}");
        }
        for (url, kind) in [
            ("https://127.0.0.1/", AddressKind::Loopback),
            ("https://[::1]/", AddressKind::Loopback),
            ("https://10.0.0.1/", AddressKind::Private),
            ("https://[fd00::5]/", AddressKind::Private),
        ] {
            match hosted.parse(url) {
                Err(UrlError::ForbiddenAddress { kind: k, .. }) => assert_eq!(k, kind, "{url}"),
                other => panic!("{url}: {other:?}"),
            }
        }
        // Production refuses them whatever it is told.
        let p = production().with_private_targets(true);
        assert!(!p.private_targets());
        assert!(p.parse("https://127.0.0.1/").is_err());
        assert_eq!(p.parse("http://localhost/"), Err(UrlError::NotHttps));
    }

    #[test]
    fn a_target_is_internal_when_any_of_its_addresses_is_loopback_or_private() {
        let target = |url: &str, pinned: Option<&[&str]>| CheckedTarget {
            url: Url::parse(url).unwrap(),
            pinned: pinned.map(|ips| ("h.example".to_owned(), ips.iter().map(|a| ip(a)).collect())),
        };
        assert!(target("http://127.0.0.1:9/", None).internal());
        assert!(target("http://[fd00::1]/", None).internal());
        assert!(!target("https://8.8.8.8/", None).internal());
        assert!(target("http://h.example/", Some(&["93.184.216.34", "10.0.0.1"])).internal());
        assert!(!target("https://h.example/", Some(&["93.184.216.34"])).internal());
    }

    #[tokio::test]
    async fn every_resolved_address_is_checked() {
        let resolver = Arc::new(
            StaticResolver::new()
                .with("public.example", &[ip("93.184.216.34"), ip("2606:2800::1")])
                .with("mixed.example", &[ip("93.184.216.34"), ip("10.0.0.7")])
                .with("metadata.example", &[ip("169.254.169.254")])
                .with("mapped.example", &[ip("::ffff:127.0.0.1")])
                .with("empty.example", &[])
                .with("localhost", &[ip("127.0.0.1"), ip("::1")])
                .with("rebound.localhost", &[ip("127.0.0.1"), ip("192.168.0.2")]),
        );
        let p = production().with_resolver(resolver.clone());
        let target = p.check("https://public.example/hooks").await.unwrap();
        assert_eq!(target.as_str(), "https://public.example/hooks");
        let checked = p.resolve(&target).await.unwrap();
        assert_eq!(
            checked.pinned,
            Some((
                "public.example".to_owned(),
                vec![ip("93.184.216.34"), ip("2606:2800::1")]
            ))
        );
        assert_eq!(
            p.check("https://mixed.example/").await,
            Err(UrlError::ForbiddenAddress {
                address: ip("10.0.0.7"),
                kind: AddressKind::Private
            })
        );
        assert!(matches!(
            p.check("https://metadata.example/").await,
            Err(UrlError::ForbiddenAddress {
                kind: AddressKind::LinkLocal,
                ..
            })
        ));
        assert!(matches!(
            p.check("https://mapped.example/").await,
            Err(UrlError::ForbiddenAddress {
                kind: AddressKind::Loopback,
                ..
            })
        ));
        assert_eq!(
            p.check("https://empty.example/").await,
            Err(UrlError::Unresolvable)
        );
        assert_eq!(
            p.check("https://unknown.example/").await,
            Err(UrlError::Unresolvable)
        );
        assert!(matches!(
            p.check("https://localhost/").await,
            Err(UrlError::ForbiddenAddress {
                kind: AddressKind::Loopback,
                ..
            })
        ));

        let s = sandbox().with_resolver(resolver.clone());
        assert!(s.check("http://localhost:8080/").await.is_ok());
        assert!(s.check("https://public.example/").await.is_ok());
        let rebound = s.check("http://rebound.localhost/").await.unwrap();
        assert!(s.resolve(&rebound).await.unwrap().internal());
        assert!(matches!(
            s.check("https://metadata.example/").await,
            Err(UrlError::ForbiddenAddress {
                kind: AddressKind::LinkLocal,
                ..
            })
        ));
        let hosted = sandbox()
            .with_private_targets(false)
            .with_resolver(resolver.clone());
        assert!(matches!(
            hosted.check("https://localhost/").await,
            Err(UrlError::ForbiddenAddress {
                kind: AddressKind::Loopback,
                ..
            })
        ));
        // An http URL to localhost whose name resolves to a public address is refused too.
        let odd = sandbox().with_resolver(Arc::new(
            StaticResolver::new().with("localhost", &[ip("93.184.216.34")]),
        ));
        assert_eq!(
            odd.check("http://localhost/").await,
            Err(UrlError::HttpNotLoopback)
        );
    }

    #[tokio::test]
    async fn an_ip_literal_is_not_looked_up() {
        let resolver = Arc::new(StaticResolver::new());
        let s = sandbox().with_resolver(resolver.clone());
        let target = s.check("http://127.0.0.1:1/").await.unwrap();
        assert_eq!(s.resolve(&target).await.unwrap().pinned, None);
        assert_eq!(resolver.lookups(), 0);
    }

    #[tokio::test]
    async fn a_slow_lookup_is_unresolvable() {
        struct Slow;
        impl Resolve for Slow {
            fn lookup<'a>(
                &'a self,
                _host: &'a str,
            ) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>> {
                Box::pin(async {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    Ok(vec![])
                })
            }
        }
        let p = production()
            .with_resolver(Arc::new(Slow))
            .with_lookup_timeout(Duration::from_millis(50));
        assert_eq!(
            p.check("https://slow.example/").await,
            Err(UrlError::Unresolvable)
        );
    }

    #[tokio::test]
    async fn the_system_resolver_resolves_localhost_to_loopback() {
        let s = sandbox();
        let url = s.check("http://localhost:9/").await.unwrap();
        let target = s.resolve(&url).await.unwrap();
        let (_, addresses) = target.pinned.unwrap();
        assert!(!addresses.is_empty());
        assert!(addresses.iter().all(|a| a.is_loopback()), "{addresses:?}");
    }

    #[test]
    fn messages_name_the_problem_without_the_address() {
        let e = UrlError::ForbiddenAddress {
            address: ip("10.1.2.3"),
            kind: AddressKind::Private,
        };
        assert_eq!(e.to_string(), "must not point to a private address");
        assert_eq!(
            UrlError::Fragment.to_string(),
            "must not contain a fragment"
        );
        assert_eq!(
            UrlError::Credentials.to_string(),
            "must not contain a user name or password"
        );
        assert_eq!(UrlError::NotHttps.to_string(), "must use https");
    }
}
