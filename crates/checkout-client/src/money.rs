//! Currencies and amounts: the service's ISO 4217 table (its `docs/currencies.md`) and the
//! checks an amount passes before it is sent, so that a wrong amount fails here rather than
//! as a 400 from the service.

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;

/// Every currency the service accepts with its minor units (decimal places), sorted by code.
/// A test in this crate compares it with the service's `docs/currencies.md`.
const CURRENCIES: [(&str, u32); 155] = [
    ("AED", 2),
    ("AFN", 2),
    ("ALL", 2),
    ("AMD", 2),
    ("ANG", 2),
    ("AOA", 2),
    ("ARS", 2),
    ("AUD", 2),
    ("AWG", 2),
    ("AZN", 2),
    ("BAM", 2),
    ("BBD", 2),
    ("BDT", 2),
    ("BGN", 2),
    ("BHD", 3),
    ("BIF", 0),
    ("BMD", 2),
    ("BND", 2),
    ("BOB", 2),
    ("BRL", 2),
    ("BSD", 2),
    ("BTN", 2),
    ("BWP", 2),
    ("BYN", 2),
    ("BZD", 2),
    ("CAD", 2),
    ("CDF", 2),
    ("CHF", 2),
    ("CLP", 0),
    ("CNY", 2),
    ("COP", 2),
    ("CRC", 2),
    ("CUP", 2),
    ("CVE", 2),
    ("CZK", 2),
    ("DJF", 0),
    ("DKK", 2),
    ("DOP", 2),
    ("DZD", 2),
    ("EGP", 2),
    ("ERN", 2),
    ("ETB", 2),
    ("EUR", 2),
    ("FJD", 2),
    ("FKP", 2),
    ("GBP", 2),
    ("GEL", 2),
    ("GHS", 2),
    ("GIP", 2),
    ("GMD", 2),
    ("GNF", 0),
    ("GTQ", 2),
    ("GYD", 2),
    ("HKD", 2),
    ("HNL", 2),
    ("HTG", 2),
    ("HUF", 2),
    ("IDR", 2),
    ("ILS", 2),
    ("INR", 2),
    ("IQD", 3),
    ("IRR", 2),
    ("ISK", 0),
    ("JMD", 2),
    ("JOD", 3),
    ("JPY", 0),
    ("KES", 2),
    ("KGS", 2),
    ("KHR", 2),
    ("KMF", 0),
    ("KPW", 2),
    ("KRW", 0),
    ("KWD", 3),
    ("KYD", 2),
    ("KZT", 2),
    ("LAK", 2),
    ("LBP", 2),
    ("LKR", 2),
    ("LRD", 2),
    ("LSL", 2),
    ("LYD", 3),
    ("MAD", 2),
    ("MDL", 2),
    ("MGA", 2),
    ("MKD", 2),
    ("MMK", 2),
    ("MNT", 2),
    ("MOP", 2),
    ("MRU", 2),
    ("MUR", 2),
    ("MVR", 2),
    ("MWK", 2),
    ("MXN", 2),
    ("MYR", 2),
    ("MZN", 2),
    ("NAD", 2),
    ("NGN", 2),
    ("NIO", 2),
    ("NOK", 2),
    ("NPR", 2),
    ("NZD", 2),
    ("OMR", 3),
    ("PAB", 2),
    ("PEN", 2),
    ("PGK", 2),
    ("PHP", 2),
    ("PKR", 2),
    ("PLN", 2),
    ("PYG", 0),
    ("QAR", 2),
    ("RON", 2),
    ("RSD", 2),
    ("RUB", 2),
    ("RWF", 0),
    ("SAR", 2),
    ("SBD", 2),
    ("SCR", 2),
    ("SDG", 2),
    ("SEK", 2),
    ("SGD", 2),
    ("SHP", 2),
    ("SLE", 2),
    ("SOS", 2),
    ("SRD", 2),
    ("SSP", 2),
    ("STN", 2),
    ("SVC", 2),
    ("SYP", 2),
    ("SZL", 2),
    ("THB", 2),
    ("TJS", 2),
    ("TMT", 2),
    ("TND", 3),
    ("TOP", 2),
    ("TRY", 2),
    ("TTD", 2),
    ("TWD", 2),
    ("TZS", 2),
    ("UAH", 2),
    ("UGX", 0),
    ("USD", 2),
    ("UYU", 2),
    ("UZS", 2),
    ("VES", 2),
    ("VND", 0),
    ("VUV", 0),
    ("WST", 2),
    ("XAF", 0),
    ("XCD", 2),
    ("XOF", 0),
    ("XPF", 0),
    ("YER", 2),
    ("ZAR", 2),
    ("ZMW", 2),
    ("ZWG", 2),
];

/// A currency the service accepts: its ISO 4217 code and its minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency {
    code: &'static str,
    minor_units: u32,
}

impl Currency {
    /// US dollar (2 decimal places).
    pub const USD: Currency = Currency::known("USD", 2);
    /// Costa Rican colón (2 decimal places).
    pub const CRC: Currency = Currency::known("CRC", 2);
    /// Euro (2 decimal places).
    pub const EUR: Currency = Currency::known("EUR", 2);
    /// Pound sterling (2 decimal places).
    pub const GBP: Currency = Currency::known("GBP", 2);
    /// Japanese yen (no decimal places).
    pub const JPY: Currency = Currency::known("JPY", 0);
    /// Kuwaiti dinar (3 decimal places).
    pub const KWD: Currency = Currency::known("KWD", 3);

    const fn known(code: &'static str, minor_units: u32) -> Currency {
        Currency { code, minor_units }
    }

    /// The currency whose ISO 4217 code is `code` (upper case, as the service writes it).
    pub fn from_code(code: &str) -> Result<Currency, UnknownCurrency> {
        CURRENCIES
            .binary_search_by(|(c, _)| (*c).cmp(code))
            .map(|i| Currency::known(CURRENCIES[i].0, CURRENCIES[i].1))
            .map_err(|_| UnknownCurrency(code.chars().take(8).collect()))
    }

    /// Every currency the service accepts, by code.
    pub fn all() -> impl Iterator<Item = Currency> {
        CURRENCIES.iter().map(|(c, u)| Currency::known(c, *u))
    }

    /// The ISO 4217 code, e.g. `USD`.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// How many decimal places an amount in this currency may carry (USD 2, JPY 0, KWD 3).
    pub fn minor_units(&self) -> u32 {
        self.minor_units
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)
    }
}

impl FromStr for Currency {
    type Err = UnknownCurrency;

    fn from_str(s: &str) -> Result<Currency, UnknownCurrency> {
        Currency::from_code(s)
    }
}

/// A currency code the service does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCurrency(String);

impl fmt::Display for UnknownCurrency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a currency the service accepts", self.0)
    }
}

impl std::error::Error for UnknownCurrency {}

/// Why an amount cannot be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountError {
    /// Zero or negative where the service needs more than zero (totals, captures, refunds).
    NotPositive,
    /// Negative where the service needs zero or more (items, additional charges).
    Negative,
    /// More decimal places than the currency's minor units.
    TooPrecise {
        /// The currency's code.
        currency: &'static str,
        /// Its minor units.
        minor_units: u32,
    },
    /// 10^13 or more, which the service refuses in any currency.
    TooLarge,
}

impl fmt::Display for AmountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AmountError::NotPositive => f.write_str("the amount must be greater than 0"),
            AmountError::Negative => f.write_str("the amount must not be negative"),
            AmountError::TooPrecise {
                currency,
                minor_units,
            } => write!(
                f,
                "an amount in {currency} may have at most {minor_units} decimal places"
            ),
            AmountError::TooLarge => f.write_str("the amount must be below 10^13"),
        }
    }
}

impl std::error::Error for AmountError {}

/// An amount greater than zero in a currency, with no more decimal places than the currency
/// has: a total, a capture or a refund.
///
/// ```
/// use checkout_client::{AmountError, Currency, Money};
/// use rust_decimal::Decimal;
///
/// let total = Money::new(Decimal::new(2550, 2), Currency::USD)?; // 25.50 USD
/// assert_eq!(total.amount().to_string(), "25.50");
/// assert!(matches!(
///     Money::new(Decimal::new(1005, 1), Currency::JPY), // 100.5 JPY
///     Err(AmountError::TooPrecise { .. })
/// ));
/// # Ok::<(), AmountError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Money {
    amount: Decimal,
    currency: Currency,
}

impl Money {
    /// `amount` in `currency`: more than 0, below 10^13, with at most the currency's minor
    /// units as decimal places (trailing zeros do not count: `25.500` USD is `25.50`).
    pub fn new(amount: Decimal, currency: Currency) -> Result<Money, AmountError> {
        if amount <= Decimal::ZERO {
            return Err(AmountError::NotPositive);
        }
        Ok(Money {
            amount: at_scale(amount, currency)?,
            currency,
        })
    }

    /// The amount, written with the currency's decimal places.
    pub fn amount(&self) -> Decimal {
        self.amount
    }

    /// The currency.
    pub fn currency(&self) -> Currency {
        self.currency
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount, self.currency)
    }
}

/// `amount` (zero or more) of a line (an item or a charge) in `currency`, at its scale.
pub(crate) fn line_amount(amount: Decimal, currency: Currency) -> Result<Decimal, AmountError> {
    if amount < Decimal::ZERO {
        return Err(AmountError::Negative);
    }
    at_scale(amount, currency)
}

/// `value` written with exactly `currency`'s places, or why it cannot be.
fn at_scale(value: Decimal, currency: Currency) -> Result<Decimal, AmountError> {
    let mut scaled = value.normalize();
    if scaled.scale() > currency.minor_units {
        return Err(AmountError::TooPrecise {
            currency: currency.code,
            minor_units: currency.minor_units,
        });
    }
    if scaled >= Decimal::from(10_000_000_000_000_i64) {
        return Err(AmountError::TooLarge);
    }
    scaled.rescale(currency.minor_units);
    Ok(scaled)
}

/// Amounts in JSON: written as a number from the decimal's own text and read from the
/// number's exact text (never through a float).
pub(crate) mod json {
    use rust_decimal::Decimal;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::value::RawValue;

    /// Writes `value` as a JSON number.
    pub fn serialize<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = RawValue::from_string(value.to_string()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }

    /// Reads a JSON number (or a numeric string) exactly.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
        let raw: &RawValue = Deserialize::deserialize(deserializer)?;
        parse(raw.get()).ok_or_else(|| D::Error::custom("not a decimal number"))
    }

    /// The decimal a JSON number's text (or a quoted number) stands for.
    pub fn parse(text: &str) -> Option<Decimal> {
        let text = text.trim();
        let text = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(text);
        if text.contains(['e', 'E']) {
            return Decimal::from_scientific(text).ok();
        }
        Decimal::from_str_exact(text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The service's currency table, as its documentation publishes it.
    const DOCUMENTED: &str = include_str!("../../../docs/currencies.md");

    #[test]
    fn the_table_is_the_services() {
        let documented: Vec<(String, u32)> = DOCUMENTED
            .lines()
            .filter_map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let code = cells.get(1)?;
                let units = cells.get(2)?.parse().ok()?;
                (code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()))
                    .then(|| ((*code).to_owned(), units))
            })
            .collect();
        let ours: Vec<(String, u32)> = Currency::all()
            .map(|c| (c.code().to_owned(), c.minor_units()))
            .collect();
        assert_eq!(ours, documented);
        let mut sorted = ours.clone();
        sorted.sort();
        assert_eq!(ours, sorted, "sorted, for the binary search");
        for c in [
            Currency::USD,
            Currency::CRC,
            Currency::EUR,
            Currency::GBP,
            Currency::JPY,
            Currency::KWD,
        ] {
            assert_eq!(Currency::from_code(c.code()), Ok(c));
        }
        assert!(Currency::from_code("usd").is_err());
        assert!(Currency::from_code("XXX").is_err());
    }

    fn dec(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    #[test]
    fn amounts_are_checked_against_the_minor_units() {
        let usd = |t| Money::new(dec(t), Currency::USD).map(|m| m.amount().to_string());
        assert_eq!(usd("25.5"), Ok("25.50".into()));
        assert_eq!(usd("25.500"), Ok("25.50".into()));
        assert_eq!(usd("25"), Ok("25.00".into()));
        assert!(matches!(usd("25.505"), Err(AmountError::TooPrecise { .. })));
        assert_eq!(usd("0"), Err(AmountError::NotPositive));
        assert_eq!(usd("-1"), Err(AmountError::NotPositive));
        assert_eq!(usd("10000000000000"), Err(AmountError::TooLarge));
        assert_eq!(usd("9999999999999.99"), Ok("9999999999999.99".into()));
        let jpy = Money::new(dec("1500"), Currency::JPY).unwrap();
        assert_eq!(jpy.amount().to_string(), "1500");
        assert!(Money::new(dec("100.5"), Currency::JPY).is_err());
        assert_eq!(
            Money::new(dec("1.005"), Currency::KWD).unwrap().to_string(),
            "1.005 KWD"
        );
        assert_eq!(
            line_amount(dec("0"), Currency::USD).unwrap().to_string(),
            "0.00"
        );
        assert_eq!(
            line_amount(dec("-0.01"), Currency::USD),
            Err(AmountError::Negative)
        );
    }

    #[test]
    fn json_amounts_are_exact() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct A {
            #[serde(with = "json")]
            v: Decimal,
        }
        let a: A = serde_json::from_str(r#"{"v": 1500.10}"#).unwrap();
        assert_eq!(a.v.to_string(), "1500.10");
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"v":1500.10}"#);
        let a: A = serde_json::from_str(r#"{"v": 0.30000000000000004}"#).unwrap();
        assert_eq!(a.v.to_string(), "0.30000000000000004");
        let a: A = serde_json::from_str(r#"{"v": "25.00"}"#).unwrap();
        assert_eq!(a.v.to_string(), "25.00");
        let a: A = serde_json::from_str(r#"{"v": 25e-1}"#).unwrap();
        assert_eq!(a.v, dec("2.5"));
        assert!(serde_json::from_str::<A>(r#"{"v": true}"#).is_err());
    }
}
