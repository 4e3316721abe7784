//! Money: positive totals and non-negative line amounts, at their currency's scale.

use std::fmt;

use rust_decimal::Decimal;

use super::Currency;

/// Why an amount was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Zero or negative where a positive amount is required.
    #[error("must be greater than 0")]
    NotPositive,
    /// Negative where zero or more is required.
    #[error("must not be negative")]
    Negative,
    /// More decimal places than the currency has.
    #[error("has more than {0} decimal places")]
    TooPrecise(u32),
    /// Larger than the service accepts.
    #[error("is too large")]
    TooLarge,
}

/// The largest amount accepted: below 10^13 in any currency.
fn max_amount() -> Decimal {
    Decimal::from(10_000_000_000_000_i64)
}

fn at_scale(value: Decimal, currency: Currency) -> Result<Decimal, AmountError> {
    let normalized = value.normalize();
    if normalized.scale() > currency.minor_units() {
        return Err(AmountError::TooPrecise(currency.minor_units()));
    }
    if normalized >= max_amount() {
        return Err(AmountError::TooLarge);
    }
    let mut scaled = normalized;
    scaled.rescale(currency.minor_units());
    Ok(scaled)
}

/// A sum of money greater than zero, in a currency, with no more decimal places than the
/// currency has (the value is kept at exactly the currency's scale: 10.5 USD is 10.50).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Amount {
    value: Decimal,
    currency: Currency,
}

impl Amount {
    /// Checks that `value` is greater than 0 and fits the currency's scale.
    pub fn new(value: Decimal, currency: Currency) -> Result<Self, AmountError> {
        if value <= Decimal::ZERO {
            return Err(AmountError::NotPositive);
        }
        Ok(Amount {
            value: at_scale(value, currency)?,
            currency,
        })
    }

    /// The value, at the currency's scale.
    pub fn value(&self) -> Decimal {
        self.value
    }

    /// The currency.
    pub fn currency(&self) -> Currency {
        self.currency
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.value, self.currency)
    }
}

impl fmt::Debug for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Amount({self})")
    }
}

/// A line amount (item price, additional charge): zero or more, at the currency's scale.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineAmount {
    value: Decimal,
    currency: Currency,
}

impl LineAmount {
    /// Checks that `value` is not negative and fits the currency's scale.
    pub fn new(value: Decimal, currency: Currency) -> Result<Self, AmountError> {
        if value < Decimal::ZERO {
            return Err(AmountError::Negative);
        }
        Ok(LineAmount {
            value: at_scale(value, currency)?,
            currency,
        })
    }

    /// The value, at the currency's scale.
    pub fn value(&self) -> Decimal {
        self.value
    }

    /// The currency.
    pub fn currency(&self) -> Currency {
        self.currency
    }
}

impl fmt::Debug for LineAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LineAmount({} {})", self.value, self.currency)
    }
}
