//! Exact decimals in JSON: read from the number's own text (no float rounding), written as a
//! JSON number with the currency's decimal places (`10.50`, not `10.5`).

use rust_decimal::Decimal;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A decimal carried exactly through JSON. Accepts a JSON number or a numeric string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonDecimal(pub Decimal);

impl JsonDecimal {
    /// `value` written with `currency`'s decimal places (`0` of USD is `0.00`).
    pub fn money(mut value: Decimal, currency: checkout_domain::values::Currency) -> Self {
        value.rescale(currency.minor_units());
        JsonDecimal(value)
    }
}

impl<'de> Deserialize<'de> for JsonDecimal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: &RawValue = Deserialize::deserialize(deserializer)?;
        let text = raw.get().trim();
        let text = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(text);
        read_exact(text)
            .map(JsonDecimal)
            .ok_or_else(|| D::Error::custom("not a decimal number"))
    }
}

/// Reads decimal or scientific text without rounding: `None` when a `Decimal` cannot hold the
/// value exactly (more than 28 significant digits), so that `2.0…01` is never read as `2`.
fn read_exact(text: &str) -> Option<Decimal> {
    if let Ok(value) = Decimal::from_str_exact(text) {
        return Some(value);
    }
    let (base, exponent) = match text.split_once(['e', 'E']) {
        Some((base, exponent)) => (base, Some(exponent)),
        None => (text, None),
    };
    // Zeros that end a fraction carry no value but count towards the 28 digits.
    let base = if base.contains('.') {
        base.trim_end_matches('0').trim_end_matches('.')
    } else {
        base
    };
    let base = Decimal::from_str_exact(base).ok()?;
    match exponent {
        None => Some(base),
        // Exact once its base is: it only moves the point or multiplies by a power of ten.
        Some(exponent) => Decimal::from_scientific(&format!("{base}e{exponent}")).ok(),
    }
}

impl Serialize for JsonDecimal {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = RawValue::from_string(self.0.to_string()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exact_text_and_writes_a_number_with_its_scale() {
        let v: JsonDecimal = serde_json::from_str("1500.10").unwrap();
        assert_eq!(v.0.to_string(), "1500.10");
        let v: JsonDecimal = serde_json::from_str("0.1").unwrap();
        assert_eq!(v.0, Decimal::new(1, 1));
        let v: JsonDecimal = serde_json::from_str("\"25.00\"").unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), "25.00");
        assert!(serde_json::from_str::<JsonDecimal>("\"abc\"").is_err());
        assert!(serde_json::from_str::<JsonDecimal>("true").is_err());
    }

    /// Found by `cargo fuzz` (amount): text beyond 28 digits was rounded, so a total of
    /// `2.0…01` USD was accepted as 2.00 instead of refused for its decimal places.
    #[test]
    fn never_rounds() {
        for text in [
            "2.000000000000000000000000000000001",
            "\"2.000000000000000000000000000000001\"",
            "2.000000000000000000000000000000001e0",
            "1234567890123456789012345678901",
        ] {
            assert!(serde_json::from_str::<JsonDecimal>(text).is_err(), "{text}");
        }
        for (text, value) in [
            ("2.0000000000000000000000000000000000", Decimal::TWO),
            ("2.50000000000000000000000000000000e1", Decimal::new(25, 0)),
            ("1.5E+2", Decimal::new(150, 0)),
            ("25e-1", Decimal::new(25, 1)),
        ] {
            let read: JsonDecimal = serde_json::from_str(text).unwrap();
            assert_eq!(read.0, value, "{text}");
        }
    }
}
