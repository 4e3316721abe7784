//! How many declined cards a terminal allows on one session (`maxCardAttempts`).

use std::fmt;

/// The number of cards that may be declined on one session before it is Failed: the
/// terminal's `maxCardAttempts`, from 1 (the spec's behaviour: the first decline is Failed)
/// to [`MaxCardAttempts::MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MaxCardAttempts(u8);

/// A `maxCardAttempts` outside 1..=[`MaxCardAttempts::MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("maxCardAttempts must be from 1 to {}", MaxCardAttempts::MAX)]
pub struct InvalidMaxCardAttempts;

impl MaxCardAttempts {
    /// The spec's behaviour (7.4.4): one card; its decline fails the session.
    pub const SPEC: MaxCardAttempts = MaxCardAttempts(1);

    /// The largest setting accepted.
    pub const MAX: u8 = 10;

    /// `n` if it is from 1 to [`MaxCardAttempts::MAX`].
    pub fn new(n: i64) -> Result<Self, InvalidMaxCardAttempts> {
        u8::try_from(n)
            .ok()
            .filter(|n| (1..=Self::MAX).contains(n))
            .map(MaxCardAttempts)
            .ok_or(InvalidMaxCardAttempts)
    }

    /// The number.
    pub fn get(self) -> u8 {
        self.0
    }
}

impl Default for MaxCardAttempts {
    fn default() -> Self {
        MaxCardAttempts::SPEC
    }
}

impl fmt::Display for MaxCardAttempts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_one_to_ten_only() {
        assert_eq!(MaxCardAttempts::new(1), Ok(MaxCardAttempts::SPEC));
        assert_eq!(MaxCardAttempts::new(10).map(MaxCardAttempts::get), Ok(10));
        for bad in [0, -1, 11, 256, i64::MAX] {
            assert_eq!(
                MaxCardAttempts::new(bad),
                Err(InvalidMaxCardAttempts),
                "{bad}"
            );
        }
        assert_eq!(MaxCardAttempts::default(), MaxCardAttempts::SPEC);
    }
}
