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
    /// Contains an invisible formatting character (see [`is_hidden_format_char`]).
    #[error("contains invisible formatting characters")]
    FormatCharacter,
}

/// True for the invisible format characters (Unicode category Cf) that can make text shown
/// to a payer read differently from what it holds: the bidirectional embeddings, overrides
/// and isolates (U+202A..U+202E, U+2066..U+2069), the directional marks (U+200E, U+200F,
/// U+061C), zero-width space and word joiners (U+200B, U+2060..U+2064), the deprecated
/// format characters (U+206A..U+206F), the byte order mark (U+FEFF), interlinear annotations
/// (U+FFF9..U+FFFB) and tag characters (U+E0000..U+E007F).
///
/// Other Cf characters stay allowed, because ordinary text needs them: the zero-width
/// (non-)joiners U+200C and U+200D (Persian, Indic scripts, emoji sequences), the soft
/// hyphen U+00AD, and the Arabic number signs (U+0600..U+0605 and the like).
pub fn is_hidden_format_char(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// `parse`, after refusing text that holds a character of [`is_hidden_format_char`] with
/// [`TextError::FormatCharacter`]: for text a payer or a merchant will read.
pub fn without_hidden_format<T>(
    parse: impl Fn(&str) -> Result<T, TextError>,
) -> impl Fn(&str) -> Result<T, TextError> {
    move |s: &str| {
        if s.chars().any(is_hidden_format_char) {
            return Err(TextError::FormatCharacter);
        }
        parse(s)
    }
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
