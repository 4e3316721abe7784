//! Which environment a deployment is: the one definition every crate uses.

use std::fmt;

/// Sandbox or production. They have separate keys, issuers and credentials, a token of one is
/// refused by the other (the `env` claim), and they apply different URL rules (the sandbox
/// also accepts plain `http` to a loopback host for webhooks and callbacks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Environment {
    /// The self-contained test environment: test cards, sandbox credentials.
    Sandbox,
    /// Real money.
    Production,
}

impl Environment {
    /// `sandbox` or `production` (also the `env` claim's value).
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Production => "production",
        }
    }

    /// The environment named `name` (`sandbox` or `production`), if any.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "sandbox" => Some(Environment::Sandbox),
            "production" => Some(Environment::Production),
            _ => None,
        }
    }
}

impl fmt::Display for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
