//! The card form's number, CVV and expiry validators; input `number|cvv|expiry`. A number is
//! accepted exactly when, without spaces and dashes, it is 12 to 19 ASCII digits passing an
//! independent Luhn check; its brand follows the prefix table; `Debug` and `Display` show
//! only the last four digits. A CVV is 3 digits (4 for Amex); an expiry is a month from now
//! to 20 years ahead.
#![no_main]

use checkout_domain::card::{CardBrand, CardExpiry, CardFieldError, CardNumber, Cvv};
use checkout_fuzz::luhn;
use libfuzzer_sys::fuzz_target;
use time::macros::datetime;

fn brand_of(d: &str) -> CardBrand {
    let p = |n: usize| d.get(..n).and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    if d.starts_with('4') {
        CardBrand::Visa
    } else if [34, 37].contains(&p(2)) {
        CardBrand::Amex
    } else if (51..=55).contains(&p(2)) || (2221..=2720).contains(&p(4)) {
        CardBrand::Mastercard
    } else if p(4) == 6011 || p(2) == 65 || (644..=649).contains(&p(3)) {
        CardBrand::Discover
    } else {
        CardBrand::Other
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '|');
    let typed = parts.next().unwrap_or_default();
    let cvv = parts.next().unwrap_or_default();
    let expiry = parts.next().unwrap_or_default();

    let stripped: String = typed.chars().filter(|c| *c != ' ' && *c != '-').collect();
    let digits: Option<Vec<u8>> = stripped
        .bytes()
        .map(|b| b.is_ascii_digit().then(|| b - b'0'))
        .collect();
    let expected = digits
        .as_ref()
        .is_some_and(|d| (12..=19).contains(&d.len()) && luhn(d));
    let brand = match CardNumber::parse(typed) {
        Ok(number) => {
            assert!(expected, "accepted a number that fails length or Luhn");
            let shown = number.expose_digits();
            assert_eq!(shown, stripped, "the number kept is not the number typed");
            assert_eq!(number.last4(), &stripped[stripped.len() - 4..]);
            assert!(
                !format!("{number:?}").contains(shown),
                "Debug shows the number"
            );
            assert!(
                !format!("{number}").contains(shown),
                "Display shows the number"
            );
            assert_eq!(number.brand(), brand_of(shown), "brand");
            assert_eq!(CardBrand::parse(number.brand().as_str()), number.brand());
            number.brand()
        }
        Err(e) => {
            assert!(!expected, "refused a valid number");
            let want = if stripped.is_empty() {
                CardFieldError::Required
            } else {
                CardFieldError::Invalid
            };
            assert_eq!(e, want, "wrong refusal");
            CardBrand::Other
        }
    };

    match Cvv::parse(cvv, brand) {
        Ok(v) => {
            let len = if brand == CardBrand::Amex { 4 } else { 3 };
            let d = v.expose_digits();
            assert!(
                d.len() == len && d.bytes().all(|b| b.is_ascii_digit()),
                "CVV"
            );
            assert!(!format!("{v:?}").contains(d), "Debug shows the CVV");
        }
        Err(e) => assert_ne!(e, CardFieldError::Expired),
    }

    let now = datetime!(2026-11-23 12:00 UTC);
    if let Ok(e) = CardExpiry::parse(expiry, now) {
        assert!((1..=12).contains(&e.month()), "month");
        assert!(
            (e.year(), e.month()) >= (2026, 11),
            "accepted an expired card"
        );
        assert!(e.year() <= 2046, "accepted an expiry too far ahead");
    }
});
