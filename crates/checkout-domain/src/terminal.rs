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
}
