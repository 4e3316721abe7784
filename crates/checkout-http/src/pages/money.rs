//! Amounts and dates as a payer reads them in the page's language. A small hand table, not
//! CLDR: the pages speak two languages, and the rules they need (CLDR's `es` and `en` number
//! patterns, the symbols of the spec's currencies) fit in this file, where a CLDR crate
//! (`icu`) would add dozens of crates and its data to the build for the same output.

use checkout_domain::values::Currency;
use rust_decimal::Decimal;
use time::OffsetDateTime;

use super::i18n::Lang;

/// The symbol of `code` in `lang` (CLDR's), or `None` where CLDR shows the ISO code.
fn symbol(code: &str, lang: Lang) -> Option<&'static str> {
    match (code, lang) {
        ("USD", Lang::En) => Some("$"),
        ("USD", Lang::Es) => Some("US$"),
        ("CRC", _) => Some("₡"),
        ("EUR", _) => Some("€"),
        ("GBP", _) => Some("£"),
        _ => None,
    }
}

/// Groups the integer digits: `,` in English; `.` in Spanish, and only from five digits on
/// (CLDR's minimum grouping digits for `es`: `1234,50` but `12.345,50`).
fn group(digits: &str, lang: Lang) -> String {
    let separator = match lang {
        Lang::En => ',',
        Lang::Es if digits.len() < 5 => return digits.to_owned(),
        Lang::Es => '.',
    };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(separator);
        }
        out.push(c);
    }
    out
}

/// An amount at its currency's minor units, grouped, with the currency's symbol:
/// `$1,234.50` and `1234,50 US$`, `₡15,000.00` and `15.000,00 ₡`; currencies without a
/// symbol here show their code (`BHD 1.250`, `1,250 BHD`).
pub fn format(value: Decimal, currency: Currency, lang: Lang) -> String {
    let mut v = value;
    v.rescale(currency.minor_units());
    let plain = v.abs().to_string();
    let (int, frac) = plain.split_once('.').unwrap_or((&plain, ""));
    let decimal = match lang {
        Lang::En => '.',
        Lang::Es => ',',
    };
    let mut number = group(int, lang);
    if !frac.is_empty() {
        number.push(decimal);
        number.push_str(frac);
    }
    if v.is_sign_negative() && !v.is_zero() {
        number.insert(0, '-');
    }
    let code = currency.code();
    match (lang, symbol(code, lang)) {
        (Lang::En, Some(symbol)) => format!("{symbol}{number}"),
        (Lang::En, None) => format!("{code}\u{a0}{number}"),
        (Lang::Es, mark) => format!("{number}\u{a0}{}", mark.unwrap_or(code)),
    }
}

const MONTHS_EN: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const MONTHS_ES: [&str; 12] = [
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
];

/// An instant in UTC as a payer reads it: `24 November 2026, 14:05 UTC`,
/// `24 de noviembre de 2026, 14:05 UTC`.
pub fn utc_date_time(at: OffsetDateTime, lang: Lang) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    let month = usize::from(u8::from(at.month())) - 1;
    let (day, year, hour, minute) = (at.day(), at.year(), at.hour(), at.minute());
    match lang {
        Lang::En => format!(
            "{day} {} {year}, {hour:02}:{minute:02} UTC",
            MONTHS_EN[month]
        ),
        Lang::Es => format!(
            "{day} de {} de {year}, {hour:02}:{minute:02} UTC",
            MONTHS_ES[month]
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal::prelude::FromStr;
    use time::macros::datetime;

    fn money(value: &str, code: &str, lang: Lang) -> String {
        let currency = Currency::parse(code).expect("a currency");
        format(Decimal::from_str(value).expect("a number"), currency, lang)
    }

    #[test]
    fn amounts_have_the_symbol_grouping_and_minor_units_of_the_language() {
        assert_eq!(money("1234567.89", "CRC", Lang::En), "₡1,234,567.89");
        assert_eq!(money("1234567.89", "CRC", Lang::Es), "1.234.567,89\u{a0}₡");
        assert_eq!(money("42.5", "USD", Lang::En), "$42.50");
        assert_eq!(money("42.5", "USD", Lang::Es), "42,50\u{a0}US$");
        assert_eq!(money("1234.5", "USD", Lang::Es), "1234,50\u{a0}US$");
        assert_eq!(money("12345", "USD", Lang::Es), "12.345,00\u{a0}US$");
        assert_eq!(money("1.25", "BHD", Lang::En), "BHD\u{a0}1.250");
        assert_eq!(money("1500", "JPY", Lang::Es), "1500\u{a0}JPY");
        assert_eq!(money("1000000", "JPY", Lang::En), "JPY\u{a0}1,000,000");
        assert_eq!(money("15000.0000", "EUR", Lang::En), "€15,000.00");
    }

    #[test]
    fn dates_are_written_out_in_utc_in_the_language() {
        let at = datetime!(2026-11-24 09:05 -03:00);
        assert_eq!(utc_date_time(at, Lang::En), "24 November 2026, 12:05 UTC");
        assert_eq!(
            utc_date_time(at, Lang::Es),
            "24 de noviembre de 2026, 12:05 UTC"
        );
    }
}
