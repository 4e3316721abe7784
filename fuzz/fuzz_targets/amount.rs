//! An amount as the API reads it (`JsonDecimal`: a JSON number or a numeric string) and the
//! domain checks it (`Amount` for totals, `LineAmount` for items and charges), in a currency
//! picked by the first byte. An accepted amount is > 0 (>= 0 for a line), below 10^13, has no
//! more decimal places than the currency, is kept at the currency's scale and equals exactly
//! the number sent; a plain JSON number that a `Decimal` holds is never refused as malformed.
#![no_main]

use checkout_domain::values::{Amount, AmountError, Currency, LineAmount};
use checkout_fuzz::{iso_minor_units, places, Exact};
use checkout_http::dto::JsonDecimal;
use libfuzzer_sys::fuzz_target;
use rust_decimal::Decimal;

/// A JSON number as a client writes one: its significand alone fits a `Decimal` and its
/// exponent, if any, is at most 28 (`0.0…01e30` is valid JSON but not refused wrongly).
fn plain(t: &str) -> bool {
    let (base, exponent) = match t.split_once(['e', 'E']) {
        Some((b, e)) => (b, e.trim_start_matches(['+', '-'])),
        None => (t, "0"),
    };
    Exact::parse_json_number(base).is_some_and(|b| b.fits_decimal())
        && exponent.parse::<u32>().is_ok_and(|e| e <= 28)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, json)) = data.split_first() else {
        return;
    };
    let codes: Vec<&str> = Currency::all_codes().collect();
    let code = codes[usize::from(pick) % codes.len()];
    let currency = Currency::parse(code).expect("listed codes parse");
    let mu = iso_minor_units(code);
    assert_eq!(currency.minor_units(), mu, "minor units of {code}");

    // The exact number sent, when the JSON text (or the string's content) is a JSON number.
    let text = std::str::from_utf8(json)
        .ok()
        .map(|t| t.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r')));
    let sent = text.and_then(|t| {
        let inner = t.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
        Exact::parse_json_number(inner.unwrap_or(t))
    });

    let value = match serde_json::from_slice::<JsonDecimal>(json) {
        Ok(JsonDecimal(value)) => value,
        Err(_) => {
            if let Some(t) = text.filter(|t| plain(t)) {
                assert!(
                    !Exact::parse_json_number(t).is_some_and(|e| e.fits_decimal()),
                    "a plain decimal number was refused as malformed"
                );
            }
            return;
        }
    };
    if let Some(sent) = &sent {
        if sent.fits_decimal() {
            assert_eq!(
                &Exact::of(value),
                sent,
                "the number read is not the number sent"
            );
        }
    }

    let max = Decimal::from(10_000_000_000_000_i64);
    let expected = if value <= Decimal::ZERO {
        Err(AmountError::NotPositive)
    } else if places(value) > mu {
        Err(AmountError::TooPrecise(mu))
    } else if value >= max {
        Err(AmountError::TooLarge)
    } else {
        Ok(())
    };
    match Amount::new(value, currency) {
        Ok(amount) => {
            assert_eq!(expected, Ok(()), "accepted a total the rule refuses");
            assert_eq!(amount.value(), value, "rounded");
            assert_eq!(amount.value().scale(), mu, "not at the currency's scale");
            assert_eq!(amount.currency(), currency);
            if let Some(sent) = &sent {
                assert_eq!(
                    &Exact::of(amount.value()),
                    sent,
                    "accepted a total other than the one sent"
                );
            }
        }
        Err(e) => assert_eq!(Err(e), expected, "refused for the wrong reason"),
    }

    let expected_line = if value < Decimal::ZERO {
        Err(AmountError::Negative)
    } else if places(value) > mu {
        Err(AmountError::TooPrecise(mu))
    } else if value >= max {
        Err(AmountError::TooLarge)
    } else {
        Ok(())
    };
    match LineAmount::new(value, currency) {
        Ok(line) => {
            assert_eq!(
                expected_line,
                Ok(()),
                "accepted a line amount the rule refuses"
            );
            assert_eq!(line.value(), value, "rounded");
            assert_eq!(line.value().scale(), mu, "not at the currency's scale");
            if let Some(sent) = &sent {
                assert_eq!(
                    &Exact::of(line.value()),
                    sent,
                    "accepted a line amount other than the one sent"
                );
            }
        }
        Err(e) => assert_eq!(Err(e), expected_line, "line refused for the wrong reason"),
    }
});
