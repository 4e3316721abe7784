//! Exact decimals in JSON: read from the number's own text (no float rounding), written as a
//! JSON number with the currency's decimal places (`10.50`, not `10.5`).

use std::str::FromStr;

use rust_decimal::Decimal;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A decimal carried exactly through JSON. Accepts a JSON number or a numeric string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonDecimal(pub Decimal);

impl<'de> Deserialize<'de> for JsonDecimal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: &RawValue = Deserialize::deserialize(deserializer)?;
        let text = raw.get().trim();
        let text = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(text);
        Decimal::from_str_exact(text)
            .or_else(|_| Decimal::from_scientific(text))
            .or_else(|_| Decimal::from_str(text))
            .map(JsonDecimal)
            .map_err(|_| D::Error::custom("not a decimal number"))
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
}
