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

/// The lower bound of a [`Money`] value: what its constructor checks before the scale.
pub trait MoneyBound: Clone + Copy + PartialEq + Eq + std::hash::Hash {
    /// The name `Debug` prints.
    const NAME: &'static str;
    /// `Ok` when `value` is allowed.
    fn check(value: Decimal) -> Result<(), AmountError>;
}

/// The bound of an [`Amount`]: greater than zero.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Positive;

impl MoneyBound for Positive {
    const NAME: &'static str = "Amount";
    fn check(value: Decimal) -> Result<(), AmountError> {
        if value <= Decimal::ZERO {
            return Err(AmountError::NotPositive);
        }
        Ok(())
    }
}

/// The bound of a [`LineAmount`]: zero or more.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct NonNegative;

impl MoneyBound for NonNegative {
    const NAME: &'static str = "LineAmount";
    fn check(value: Decimal) -> Result<(), AmountError> {
        if value < Decimal::ZERO {
            return Err(AmountError::Negative);
        }
        Ok(())
    }
}

/// The bound of a [`MovedAmount`]: zero or more, as a line amount's.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Moved;

impl MoneyBound for Moved {
    const NAME: &'static str = "MovedAmount";
    fn check(value: Decimal) -> Result<(), AmountError> {
        NonNegative::check(value)
    }
}

/// A sum of money in a currency, within bound `B`, with no more decimal places than the
/// currency has (the value is kept at exactly the currency's scale: 10.5 USD is 10.50).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Money<B: MoneyBound> {
    value: Decimal,
    currency: Currency,
    bound: std::marker::PhantomData<B>,
}

/// A sum of money greater than zero (a session's total, a capture, a refund).
pub type Amount = Money<Positive>;

/// A line amount (item price, additional charge): zero or more.
pub type LineAmount = Money<NonNegative>;

/// Money moved after a session's authorisation (what was captured, what was refunded): zero
/// or more, in the session's currency and at its scale.
pub type MovedAmount = Money<Moved>;

impl MovedAmount {
    /// Nothing, in `currency` (at its scale).
    pub fn zero(currency: Currency) -> MovedAmount {
        let mut value = Decimal::ZERO;
        value.rescale(currency.minor_units());
        Money {
            value,
            currency,
            bound: std::marker::PhantomData,
        }
    }
}

impl From<Amount> for MovedAmount {
    /// A positive amount is also zero or more.
    fn from(amount: Amount) -> MovedAmount {
        Money {
            value: amount.value,
            currency: amount.currency,
            bound: std::marker::PhantomData,
        }
    }
}

impl<B: MoneyBound> Money<B> {
    /// Checks that `value` is within the bound and fits the currency's scale.
    pub fn new(value: Decimal, currency: Currency) -> Result<Self, AmountError> {
        B::check(value)?;
        Ok(Money {
            value: at_scale(value, currency)?,
            currency,
            bound: std::marker::PhantomData,
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

impl<B: MoneyBound> fmt::Display for Money<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.value, self.currency)
    }
}

impl<B: MoneyBound> fmt::Debug for Money<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({self})", B::NAME)
    }
}
