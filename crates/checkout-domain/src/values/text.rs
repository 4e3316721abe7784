//! Merchant-supplied identifiers and text: terminal number, merchant reference, description.

use std::fmt;

/// Why a piece of text was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// Empty or only white space.
    #[error("is empty")]
    Empty,
    /// Longer than allowed.
    #[error("is longer than {0} characters")]
    TooLong(usize),
    /// Contains a character that is not allowed.
    #[error("contains characters that are not allowed")]
    BadCharacter,
}

fn check(s: &str, max: usize, allowed: impl Fn(char) -> bool) -> Result<String, TextError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(TextError::Empty);
    }
    if s.chars().count() > max {
        return Err(TextError::TooLong(max));
    }
    if !s.chars().all(allowed) {
        return Err(TextError::BadCharacter);
    }
    Ok(s.to_owned())
}

macro_rules! text_type {
    ($(#[$doc:meta])* $name:ident, $max:expr, $allowed:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The longest value accepted, in characters.
            pub const MAX_LEN: usize = $max;

            /// Trims and checks the value.
            pub fn parse(s: &str) -> Result<Self, TextError> {
                check(s, Self::MAX_LEN, $allowed).map($name)
            }

            /// The value as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }
    };
}

text_type!(
    /// A payment terminal's number: 1 to 32 letters, digits, `-` or `_`.
    TerminalNumber,
    32,
    |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_'
);

text_type!(
    /// The merchant's `transactionReferenceNumber`: 1 to 64 printable ASCII characters,
    /// unique per terminal among sessions that are in flight or completed.
    MerchantReference,
    64,
    |c: char| c.is_ascii_graphic() || c == ' '
);

text_type!(
    /// Free text shown to the payer (purchase description, item description, charge name):
    /// 1 to 255 characters, no control characters.
    DisplayText,
    255,
    |c: char| !c.is_control()
);

text_type!(
    /// A merchant's item code: 1 to 64 printable characters.
    ItemCode,
    64,
    |c: char| !c.is_control()
);
