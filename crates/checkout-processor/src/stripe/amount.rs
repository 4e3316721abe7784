//! Amounts as Stripe wants them: an integer count of the currency's minor units.

use checkout_domain::values::{Amount, Currency};
use rust_decimal::Decimal;

/// `amount` in minor units (10.50 USD is 1050, 500 JPY is 500, 1.250 KWD is 1250).
pub(crate) fn minor_units(amount: Amount) -> Option<i64> {
    let mut value = amount.value();
    value.rescale(amount.currency().minor_units());
    if value.scale() != amount.currency().minor_units() {
        return None;
    }
    i64::try_from(value.mantissa()).ok()
}

/// `minor` units of `currency` as a decimal amount (1050 USD cents is 10.50).
pub(crate) fn from_minor_units(minor: i64, currency: Currency) -> Decimal {
    Decimal::new(minor, currency.minor_units())
}

#[cfg(test)]
mod tests {
    use checkout_domain::values::{Amount, Currency};
    use rust_decimal::Decimal;

    use super::minor_units;

    fn amount(value: &str, currency: &str) -> Amount {
        let value: Decimal = value.parse().unwrap_or_default();
        let currency = Currency::parse(currency).unwrap_or_else(|_| panic!("{currency}"));
        Amount::new(value, currency).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn amounts_are_counted_in_minor_units() {
        assert_eq!(minor_units(amount("10.5", "USD")), Some(1050));
        assert_eq!(minor_units(amount("1234.56", "CRC")), Some(123_456));
        assert_eq!(minor_units(amount("500", "JPY")), Some(500));
        assert_eq!(minor_units(amount("1.25", "KWD")), Some(1250));
        assert_eq!(minor_units(amount("0.01", "EUR")), Some(1));
        let usd = Currency::parse("USD").unwrap_or_else(|_| panic!("USD"));
        assert_eq!(
            super::from_minor_units(1050, usd),
            "10.50".parse().unwrap_or_default()
        );
    }
}
