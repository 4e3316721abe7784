//! The merchant's own key-value pairs on a session (`metadata`), within Stripe's limits.

use std::collections::BTreeMap;

/// The most keys one session's metadata may hold.
pub const MAX_METADATA_KEYS: usize = 50;
/// The most characters of a metadata key.
pub const MAX_METADATA_KEY_CHARS: usize = 40;
/// The most characters of a metadata value.
pub const MAX_METADATA_VALUE_CHARS: usize = 500;

/// String keys and string values the merchant attached to a session, returned as given in
/// the status record, the event feed and the webhooks. The service never reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata(BTreeMap<String, String>);

/// Why a key or value of [`Metadata`] is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// More than [`MAX_METADATA_KEYS`] keys.
    #[error("metadata may hold at most {MAX_METADATA_KEYS} keys")]
    TooManyKeys,
    /// An empty key, or one holding `[` or `]`.
    #[error("a metadata key must be non-empty and hold neither '[' nor ']'")]
    BadKey,
    /// A key longer than [`MAX_METADATA_KEY_CHARS`].
    #[error("a metadata key may be at most {MAX_METADATA_KEY_CHARS} characters long")]
    KeyTooLong,
    /// A value longer than [`MAX_METADATA_VALUE_CHARS`].
    #[error("a metadata value may be at most {MAX_METADATA_VALUE_CHARS} characters long")]
    ValueTooLong,
    /// A value holding a control character.
    #[error("a metadata value may not hold control characters")]
    BadValue,
}

impl Metadata {
    /// No metadata.
    pub fn empty() -> Self {
        Metadata::default()
    }

    /// Checks one key and its value against the limits (keys counted apart).
    pub fn check_entry(key: &str, value: &str) -> Result<(), MetadataError> {
        if key.is_empty() || key.contains(['[', ']']) {
            return Err(MetadataError::BadKey);
        }
        if key.chars().count() > MAX_METADATA_KEY_CHARS {
            return Err(MetadataError::KeyTooLong);
        }
        if value.chars().count() > MAX_METADATA_VALUE_CHARS {
            return Err(MetadataError::ValueTooLong);
        }
        if value
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
        {
            return Err(MetadataError::BadValue);
        }
        Ok(())
    }

    /// Metadata of `entries`, each checked, and their number.
    pub fn parse(
        entries: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Metadata, MetadataError> {
        let mut map = BTreeMap::new();
        for (key, value) in entries {
            Metadata::check_entry(&key, &value)?;
            map.insert(key, value);
        }
        if map.len() > MAX_METADATA_KEYS {
            return Err(MetadataError::TooManyKeys);
        }
        Ok(Metadata(map))
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pairs, by key.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(key: &str, value: &str) -> Result<Metadata, MetadataError> {
        Metadata::parse([(key.to_owned(), value.to_owned())])
    }

    #[test]
    fn the_limits_are_stripes() {
        assert!(one(&"k".repeat(40), &"v".repeat(500)).is_ok());
        assert_eq!(one(&"k".repeat(41), "v"), Err(MetadataError::KeyTooLong));
        assert_eq!(one("k", &"v".repeat(501)), Err(MetadataError::ValueTooLong));
        // Characters, not bytes.
        assert!(one(&"ñ".repeat(40), &"€".repeat(500)).is_ok());
        assert_eq!(one("", "v"), Err(MetadataError::BadKey));
        assert_eq!(one("a[b]", "v"), Err(MetadataError::BadKey));
        assert_eq!(one("k", "a\u{0}b"), Err(MetadataError::BadValue));
        let fifty = (0..50).map(|i| (format!("k{i}"), String::new()));
        assert_eq!(Metadata::parse(fifty).unwrap().entries().count(), 50);
        let fifty_one = (0..51).map(|i| (format!("k{i}"), String::new()));
        assert_eq!(Metadata::parse(fifty_one), Err(MetadataError::TooManyKeys));
    }
}
