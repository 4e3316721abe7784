//! The merchant's payment terminal: what the service knows about the merchant a session
//! belongs to.

use crate::values::{CallbackHosts, MaxCardAttempts, TerminalNumber};

/// A merchant's payment terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terminal {
    /// Its number.
    pub number: TerminalNumber,
    /// The merchant name shown on the hosted pages.
    pub display_name: String,
    /// Inactive terminals cannot create sessions (SVC_005).
    pub active: bool,
    /// The hosts its callback URLs may point to; `None`: any host the environment's
    /// [`CallbackRule`](crate::values::CallbackRule) accepts.
    pub callback_hosts: Option<CallbackHosts>,
    /// How many cards may be declined on one session before it is Failed
    /// (`maxCardAttempts`; 1, the default, is the spec's behaviour).
    pub max_card_attempts: MaxCardAttempts,
    /// Whether its payments are captured with their authorisation (the spec's default) or
    /// held for the merchant to capture or void.
    pub capture_method: CaptureMethod,
}

/// When the funds of an approved card are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CaptureMethod {
    /// Captured with the authorisation: an approved payment is Successful (the spec's
    /// behaviour).
    #[default]
    Automatic,
    /// Authorised and held: an approved payment is ApprovedTransaction until the merchant
    /// captures (all or part) or voids it; the processor releases an authorisation left
    /// uncaptured after its own time limit (Stripe: 7 days for cards).
    Manual,
}

impl CaptureMethod {
    /// The stored name (`automatic`, `manual`).
    pub fn as_str(self) -> &'static str {
        match self {
            CaptureMethod::Automatic => "automatic",
            CaptureMethod::Manual => "manual",
        }
    }

    /// Both methods.
    pub const ALL: [CaptureMethod; 2] = [CaptureMethod::Automatic, CaptureMethod::Manual];

    /// Parses a name written by [`CaptureMethod::as_str`].
    pub fn parse(s: &str) -> Option<CaptureMethod> {
        CaptureMethod::ALL.into_iter().find(|m| m.as_str() == s)
    }
}
