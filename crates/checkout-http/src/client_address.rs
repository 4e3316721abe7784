//! The client's address: the TCP peer's, or, when the peer is a trusted proxy (a TLS
//! terminator, a load balancer), the one that proxy wrote into `X-Forwarded-For`.
//!
//! `X-Forwarded-For` is read from the right: each proxy appends the address it received the
//! request from, so the entries left of the last trusted proxy's are whatever the client
//! wrote. The client's address is the rightmost entry that is not a trusted proxy. The header
//! of a peer that is not a trusted proxy is ignored: anyone can write it.

use std::fmt;
use std::net::IpAddr;

use actix_web::HttpRequest;

/// One network, `address/prefix` (a bare address is a network of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Network {
    address: IpAddr,
    prefix: u8,
}

impl Network {
    fn parse(s: &str) -> Result<Network, InvalidProxy> {
        let bad = || InvalidProxy(s.to_owned());
        let (address, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p.parse::<u8>().map_err(|_| bad())?)),
            None => (s, None),
        };
        let address = canonical(address.parse::<IpAddr>().map_err(|_| bad())?);
        let max = if address.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(max);
        if prefix > max {
            return Err(bad());
        }
        Ok(Network { address, prefix })
    }

    fn contains(&self, ip: IpAddr) -> bool {
        match (self.address, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => same_prefix(
                u128::from(u32::from(net)) << 96,
                u128::from(u32::from(ip)) << 96,
                self.prefix,
            ),
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                same_prefix(u128::from(net), u128::from(ip), self.prefix)
            }
            _ => false,
        }
    }
}

fn same_prefix(a: u128, b: u128, prefix: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    a & mask == b & mask
}

/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// A `trusted_proxies` entry that is not an address or a CIDR network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidProxy(String);

impl fmt::Display for InvalidProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not an IP address or a CIDR network such as 10.0.0.0/8",
            self.0
        )
    }
}

impl std::error::Error for InvalidProxy {}

/// The proxies trusted to name the client in `X-Forwarded-For`; none by default.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<Network>);

impl TrustedProxies {
    /// No trusted proxy: the TCP peer is always the client.
    pub fn none() -> Self {
        TrustedProxies::default()
    }

    /// Comma-separated addresses and CIDR networks, e.g. `10.0.0.0/8, 192.168.1.7, fd00::/8`;
    /// blank for none.
    pub fn parse(list: &str) -> Result<Self, InvalidProxy> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Network::parse)
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }

    /// True when `ip` is in one of the networks.
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|n| n.contains(ip))
    }

    /// The client's address given the TCP `peer` and the `X-Forwarded-For` entries in order
    /// of appearance: `peer` unless it is trusted, else the rightmost entry that is not a
    /// trusted proxy (the leftmost one when all are; the last trusted one when an entry is
    /// not an address).
    pub fn client<'a>(
        &self,
        peer: IpAddr,
        forwarded: impl DoubleEndedIterator<Item = &'a str>,
    ) -> IpAddr {
        let mut client = canonical(peer);
        for entry in forwarded.rev() {
            if !self.contains(client) {
                break;
            }
            match entry.trim().parse::<IpAddr>() {
                Ok(ip) => client = canonical(ip),
                Err(_) => break,
            }
        }
        client
    }

    /// The address of the client that sent `req` (see [`TrustedProxies::client`]); `None`
    /// when actix knows no peer (a test request).
    pub fn client_of(&self, req: &HttpRequest) -> Option<IpAddr> {
        let peer = req.peer_addr()?.ip();
        if self.0.is_empty() || !self.contains(peer) {
            return Some(canonical(peer));
        }
        let entries: Vec<&str> = req
            .headers()
            .get_all("x-forwarded-for")
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .collect();
        Some(self.client(peer, entries.into_iter()))
    }
}

impl fmt::Debug for TrustedProxies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|n| format!("{}/{}", n.address, n.prefix)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn networks_parse_and_match() {
        let trusted = TrustedProxies::parse(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8").unwrap();
        assert!(trusted.contains(ip("10.255.1.2")));
        assert!(trusted.contains(ip("::ffff:10.1.1.1")));
        assert!(trusted.contains(ip("192.168.1.7")));
        assert!(!trusted.contains(ip("192.168.1.8")));
        assert!(trusted.contains(ip("fd12::1")));
        assert!(!trusted.contains(ip("fe80::1")));
        assert!(!trusted.contains(ip("11.0.0.1")));
        assert_eq!(TrustedProxies::parse("").unwrap(), TrustedProxies::none());
        assert!(TrustedProxies::parse("0.0.0.0/0")
            .unwrap()
            .contains(ip("8.8.8.8")));
        for bad in [
            "10.0.0.0/33",
            "example.com",
            "10.0.0/8",
            "::/129",
            "1.2.3.4/x",
        ] {
            assert!(TrustedProxies::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_header_counts_only_from_a_trusted_peer_and_from_the_right() {
        let trusted = TrustedProxies::parse("10.0.0.0/8").unwrap();
        let xff = |s: &'static str| s.split(',');
        // An untrusted peer's header is ignored.
        assert_eq!(
            trusted.client(ip("203.0.113.9"), xff("1.1.1.1")),
            ip("203.0.113.9")
        );
        // A trusted proxy names its client.
        assert_eq!(
            trusted.client(ip("10.0.0.2"), xff("198.51.100.4")),
            ip("198.51.100.4")
        );
        // What the client wrote left of that is ignored.
        assert_eq!(
            trusted.client(ip("10.0.0.2"), xff("6.6.6.6, 198.51.100.4")),
            ip("198.51.100.4")
        );
        // Two trusted hops.
        assert_eq!(
            trusted.client(ip("10.0.0.2"), xff("198.51.100.4, 10.0.0.3")),
            ip("198.51.100.4")
        );
        // Garbage stops the walk at the last trusted hop; no header: the peer.
        assert_eq!(
            trusted.client(ip("10.0.0.2"), xff("nonsense")),
            ip("10.0.0.2")
        );
        assert_eq!(
            trusted.client(ip("10.0.0.2"), std::iter::empty()),
            ip("10.0.0.2")
        );
        // No trusted proxy at all: always the peer.
        assert_eq!(
            TrustedProxies::none().client(ip("10.0.0.2"), xff("1.1.1.1")),
            ip("10.0.0.2")
        );
    }
}
