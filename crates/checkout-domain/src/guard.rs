//! The card-testing guard's rules: what it counts (processor declines per client address,
//! card fingerprint, terminal and session, over sliding windows) and what it decides from
//! the counts (allow, challenge with a proof of work, refuse). The counts live behind the
//! [`CardGuard`](crate::ports::CardGuard) port, so that they hold across every instance.
//! Defaults and their grounds: `docs/decisions/0014-card-testing-guard.md`.

use std::fmt;

use time::Duration;

use crate::values::{SessionId, TerminalNumber};

/// A keyed hash (HMAC-SHA256 under a secret of the service) of a card number, as 64
/// lowercase hex digits: the same card gives the same fingerprint, and the number cannot be
/// recovered from it without the secret. Never stored with the number.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CardFingerprint(String);

/// A keyed hash of a client's address (as the trusted-proxy rules resolve it), as 64
/// lowercase hex digits: addresses are counted without being stored.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct AddressKey(String);

/// A value that is not 64 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a 64-digit lowercase hex hash")]
pub struct NotAHash;

fn hex64(s: &str) -> Result<String, NotAHash> {
    if s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(s.to_owned())
    } else {
        Err(NotAHash)
    }
}

impl CardFingerprint {
    /// Reads a hash made by a [`GuardKeys`](crate::ports::GuardKeys) adapter.
    pub fn parse(s: &str) -> Result<Self, NotAHash> {
        hex64(s).map(CardFingerprint)
    }

    /// The hex digits, for the store.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl AddressKey {
    /// Reads a hash made by a [`GuardKeys`](crate::ports::GuardKeys) adapter.
    pub fn parse(s: &str) -> Result<Self, NotAHash> {
        hex64(s).map(AddressKey)
    }

    /// The hex digits, for the store.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for CardFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CardFingerprint({}…)", &self.0[..8])
    }
}

impl fmt::Debug for AddressKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AddressKey({}…)", &self.0[..8])
    }
}

/// What one card post is counted under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardSubject {
    /// The session's terminal.
    pub terminal: TerminalNumber,
    /// The session posted to.
    pub session: SessionId,
    /// The client's address, when known.
    pub address: Option<AddressKey>,
    /// The card's fingerprint (absent before the card is read).
    pub card: Option<CardFingerprint>,
}

/// The windows the counts are taken over (sliding: the last `window` before now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardWindows {
    /// Declines per client address.
    pub address: Duration,
    /// Sessions and terminals that declined one card.
    pub card: Duration,
    /// A terminal's posts and declines (its decline rate).
    pub terminal: Duration,
}

/// How far the terminal's counts need to go for a decision: [`GuardPolicy::terminal_spiking`]
/// compares them only with these, so a store may stop counting past them and a busy
/// terminal's post costs no more than a quiet one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalCaps {
    /// Declines past this many need not be counted.
    pub declines: u32,
    /// The spike's share of declines, percent (answers past
    /// `declines * 100 / rate_percent + 1` need not be counted).
    pub rate_percent: u32,
}

/// The counts one decision reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GuardCounts {
    /// Declines of the session (all time: a session lives an hour or a day).
    pub session_declines: u32,
    /// Declines from the client's address in the address window.
    pub address_declines: u32,
    /// Distinct sessions in which the card was declined in the card window.
    pub card_sessions: u32,
    /// Distinct terminals at which the card was declined in the card window.
    pub card_terminals: u32,
    /// The terminal's processor answers in the terminal window.
    pub terminal_posts: u32,
    /// The terminal's declines in the terminal window.
    pub terminal_declines: u32,
    /// Whether the terminal is flagged as under card testing (since its last
    /// `terminal.card_testing_suspected`).
    pub terminal_alerted: bool,
}

/// The rule a decision is made by (a metric label: never card data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GuardRule {
    /// Too many declines in one session.
    Session,
    /// Too many declines from one client address.
    Address,
    /// One card declined across many sessions or terminals.
    Card,
    /// The terminal's decline rate spiked.
    Terminal,
    /// A forged, replayed or misbound proof of work.
    Proof,
}

impl GuardRule {
    /// The rule's name, e.g. `address`.
    pub fn as_str(self) -> &'static str {
        match self {
            GuardRule::Session => "session",
            GuardRule::Address => "address",
            GuardRule::Card => "card",
            GuardRule::Terminal => "terminal",
            GuardRule::Proof => "proof",
        }
    }
}

/// What the guard decides for one card post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Sent to the processor.
    Allow,
    /// Sent to the processor only with a valid, unspent proof of work bound to the session.
    Challenge(GuardRule),
    /// Never sent: a refusal page (429) until the counts age out of their window.
    Refuse(GuardRule),
}

/// Thresholds and windows (settings; defaults in [`GuardPolicy::default`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardPolicy {
    /// The windows counts are taken over.
    pub windows: GuardWindows,
    /// Declines in one session from which every further post is challenged.
    pub session_challenge: u32,
    /// Declines from one address in its window from which posts are challenged.
    pub address_challenge: u32,
    /// Declines from one address in its window from which posts are refused.
    pub address_refuse: u32,
    /// Distinct sessions (or terminals) that declined one card in its window from which the
    /// card is refused everywhere.
    pub card_refuse: u32,
    /// A terminal spikes with at least this many declines in its window ...
    pub terminal_min_declines: u32,
    /// ... that are at least this percentage of its processor answers there.
    pub terminal_rate_percent: u32,
    /// How long a proof-of-work challenge may be answered.
    pub challenge_validity: Duration,
    /// The challenge's number range (`0..=max`): the script tries half of it on average.
    pub proof_max_number: u64,
}

impl Default for GuardPolicy {
    /// The defaults of `docs/decisions/0014-card-testing-guard.md`.
    fn default() -> Self {
        GuardPolicy {
            windows: GuardWindows {
                address: Duration::hours(1),
                card: Duration::hours(24),
                terminal: Duration::minutes(15),
            },
            session_challenge: 3,
            address_challenge: 5,
            address_refuse: 10,
            card_refuse: 3,
            terminal_min_declines: 20,
            terminal_rate_percent: 50,
            challenge_validity: Duration::minutes(10),
            proof_max_number: 100_000,
        }
    }
}

impl GuardPolicy {
    /// How far the terminal's counts need to go: declines to ten times the spike's minimum
    /// (past it the rate is read from that many), answers to what the rate compares.
    pub fn terminal_caps(&self) -> TerminalCaps {
        TerminalCaps {
            declines: self.terminal_min_declines.saturating_mul(10).max(1),
            rate_percent: self.terminal_rate_percent.max(1),
        }
    }

    /// Whether the terminal's decline rate is spiking: enough declines, and enough of them.
    pub fn terminal_spiking(&self, c: &GuardCounts) -> bool {
        c.terminal_declines >= self.terminal_min_declines
            && u64::from(c.terminal_declines) * 100
                >= u64::from(self.terminal_rate_percent) * u64::from(c.terminal_posts)
    }

    /// The decision for a post with counts `c`: refusals first (a card declined across
    /// sessions or terminals, an address past its refusal threshold), then challenges (an
    /// address or a session past its first threshold, a spiking terminal).
    pub fn decide(&self, c: &GuardCounts) -> Verdict {
        if c.card_sessions >= self.card_refuse || c.card_terminals >= self.card_refuse {
            return Verdict::Refuse(GuardRule::Card);
        }
        if c.address_declines >= self.address_refuse {
            return Verdict::Refuse(GuardRule::Address);
        }
        if c.address_declines >= self.address_challenge {
            return Verdict::Challenge(GuardRule::Address);
        }
        if c.session_declines >= self.session_challenge {
            return Verdict::Challenge(GuardRule::Session);
        }
        if self.terminal_spiking(c) {
            return Verdict::Challenge(GuardRule::Terminal);
        }
        Verdict::Allow
    }

    /// How long a refusal by `rule` may last at most: the rule's window.
    pub fn refusal_lasts(&self, rule: GuardRule) -> Duration {
        match rule {
            GuardRule::Card => self.windows.card,
            GuardRule::Terminal => self.windows.terminal,
            _ => self.windows.address,
        }
    }
}

/// What the page read of a proof of work sent with a card post (checked at the edge, by the
/// HTTP crate's `card_guard::ProofOfWork`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProofCheck {
    /// None was sent.
    Absent,
    /// Signed by the service, bound to this session, solved and unexpired: valid once.
    Solved {
        /// The challenge's identity (its signature), spent on first use.
        id: String,
        /// When it stops being valid (the store may forget it after).
        expires_at: time::OffsetDateTime,
    },
    /// Signed and bound, but expired: a fresh challenge, not counted.
    Expired,
    /// Not signed by the service, not solved, or bound to another session: refused and
    /// counted.
    Forged,
}

/// What the guard did with one card post (reported for metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardAction {
    /// Allowed without a challenge.
    Allowed,
    /// A challenge was required and a valid proof came with the post: allowed.
    Passed(GuardRule),
    /// A challenge was required and none (or an expired one) came: not sent, challenged.
    Challenged(GuardRule),
    /// Refused: not sent.
    Refused(GuardRule),
}

impl GuardAction {
    /// The outcome's name, e.g. `challenged`.
    pub fn outcome(self) -> &'static str {
        match self {
            GuardAction::Allowed => "allowed",
            GuardAction::Passed(_) => "passed",
            GuardAction::Challenged(_) => "challenged",
            GuardAction::Refused(_) => "refused",
        }
    }

    /// The rule that decided, `none` when no rule applied.
    pub fn rule(self) -> &'static str {
        match self {
            GuardAction::Allowed => "none",
            GuardAction::Passed(r) | GuardAction::Challenged(r) | GuardAction::Refused(r) => {
                r.as_str()
            }
        }
    }
}

/// A terminal's guard state, for the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalGuardState {
    /// Whether it is flagged as under card testing.
    pub alerted: bool,
    /// Its processor answers in the terminal window.
    pub posts: u32,
    /// Its declines in the terminal window.
    pub declines: u32,
    /// Its declines recorded in the longest window (everything the guard still counts).
    pub declines_kept: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honest_counts_are_allowed_and_attacks_escalate() {
        let p = GuardPolicy::default();
        let honest = GuardCounts {
            session_declines: 2,
            address_declines: 4,
            card_sessions: 2,
            card_terminals: 2,
            terminal_posts: 40,
            terminal_declines: 8,
            terminal_alerted: false,
        };
        assert_eq!(p.decide(&honest), Verdict::Allow);
        let c = |f: fn(&mut GuardCounts)| {
            let mut c = honest;
            f(&mut c);
            p.decide(&c)
        };
        assert_eq!(
            c(|c| c.address_declines = 5),
            Verdict::Challenge(GuardRule::Address)
        );
        assert_eq!(
            c(|c| c.address_declines = 10),
            Verdict::Refuse(GuardRule::Address)
        );
        assert_eq!(c(|c| c.card_sessions = 3), Verdict::Refuse(GuardRule::Card));
        assert_eq!(
            c(|c| c.session_declines = 3),
            Verdict::Challenge(GuardRule::Session)
        );
        assert_eq!(
            c(|c| {
                c.terminal_declines = 20;
                c.terminal_posts = 40;
            }),
            Verdict::Challenge(GuardRule::Terminal)
        );
        // Many declines at a busy terminal are not a spike.
        assert_eq!(
            c(|c| {
                c.terminal_declines = 20;
                c.terminal_posts = 200;
            }),
            Verdict::Allow
        );
    }

    #[test]
    fn hashes_are_64_lowercase_hex_digits() {
        assert!(CardFingerprint::parse(&"a1".repeat(32)).is_ok());
        assert!(CardFingerprint::parse(&"A1".repeat(32)).is_err());
        assert!(AddressKey::parse("4242424242424242").is_err());
    }
}
