//! The payer's email and the page language.

use std::fmt;

/// A payer's email address: one `@`, a non-empty local part, a dotted domain, no spaces,
/// at most 254 characters.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

/// A string that is not a usable email address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a valid email address")]
pub struct InvalidEmail;

impl Email {
    /// Trims and checks an address.
    pub fn parse(s: &str) -> Result<Self, InvalidEmail> {
        let s = s.trim();
        if s.len() > 254 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(InvalidEmail);
        }
        let (local, domain) = s.split_once('@').ok_or(InvalidEmail)?;
        let labels_ok = domain.split('.').count() >= 2
            && domain.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && !l.starts_with('-')
                    && !l.ends_with('-')
                    && l.chars().all(|c| c.is_alphanumeric() || c == '-')
            });
        if local.is_empty() || local.len() > 64 || local.contains('@') || !labels_ok {
            return Err(InvalidEmail);
        }
        Ok(Email(s.to_owned()))
    }

    /// The address as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Email({})", self.0)
    }
}

/// The language of the hosted pages: `es` or `en`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Culture {
    /// Spanish.
    Es,
    /// English.
    En,
}

/// A culture other than `es` or `en`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("culture must be es or en")]
pub struct UnknownCulture;

impl Culture {
    /// Parses `es` or `en` (exactly, lower case).
    pub fn parse(s: &str) -> Result<Self, UnknownCulture> {
        match s {
            "es" => Ok(Culture::Es),
            "en" => Ok(Culture::En),
            _ => Err(UnknownCulture),
        }
    }

    /// `es` or `en`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Culture::Es => "es",
            Culture::En => "en",
        }
    }
}

impl fmt::Display for Culture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
