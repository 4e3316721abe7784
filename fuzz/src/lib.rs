//! Oracles shared by the fuzz targets: independent statements of the rules the service's
//! parsers and validators enforce, so that a target checks properties, not only "no panic".
//!
//! Assertion messages never print card numbers or whole inputs (the input is in the artifact).

use checkout_domain::session::{NewSession, SessionFlow, SessionRequest};
use checkout_domain::values::CallbackRule;
use checkout_domain::{CheckoutError, ValidationErrors};
use checkout_http::json_body::parse_json;
use checkout_http::problem::ApiError;
use rust_decimal::Decimal;
use serde::de::{DeserializeOwned, IgnoredAny};

/// Luhn, stated with a table of doubled digits (the service computes `2d - 9`).
pub fn luhn(digits: &[u8]) -> bool {
    const DOUBLED: [u32; 10] = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                DOUBLED[d as usize]
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// ISO 4217 currencies without minor units (the rest have 2, except [`THREE_DECIMALS`]).
pub const ZERO_DECIMALS: &[&str] = &[
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "VND", "VUV",
    "XAF", "XOF", "XPF",
];
/// ISO 4217 currencies with three decimal places.
pub const THREE_DECIMALS: &[&str] = &["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];

/// The number of decimal places ISO 4217 gives `code`.
pub fn iso_minor_units(code: &str) -> u32 {
    if ZERO_DECIMALS.contains(&code) {
        0
    } else if THREE_DECIMALS.contains(&code) {
        3
    } else {
        2
    }
}

/// The decimal places of `d` once trailing zeros are dropped, read from its text.
pub fn places(d: Decimal) -> u32 {
    let text = d.to_string();
    match text.split_once('.') {
        Some((_, frac)) => frac.trim_end_matches('0').len() as u32,
        None => 0,
    }
}

/// An exact decimal read from JSON number text: `(-1)^negative × digits × 10^exp`, with no
/// leading or trailing zeros in `digits` (empty for zero).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exact {
    /// Sign (false for zero).
    pub negative: bool,
    /// Significant digits.
    pub digits: String,
    /// Power of ten.
    pub exp: i64,
}

impl Exact {
    /// Parses text of the JSON number grammar (RFC 8259 section 6), nothing else.
    pub fn parse_json_number(s: &str) -> Option<Exact> {
        let b = s.as_bytes();
        let mut i = 0;
        let negative = b.first() == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let int = &s[int_start..i];
        if int.is_empty() || (int.len() > 1 && int.starts_with('0')) {
            return None;
        }
        let mut frac = "";
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            i = start;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            frac = &s[start..i];
            if frac.is_empty() {
                return None;
            }
        }
        let mut exp: i64 = 0;
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            let exp_negative = b.get(i) == Some(&b'-');
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                exp = exp
                    .saturating_mul(10)
                    .saturating_add(i64::from(b[i] - b'0'));
                i += 1;
            }
            if i == start {
                return None;
            }
            if exp_negative {
                exp = -exp;
            }
        }
        if i != b.len() {
            return None;
        }
        let all = format!("{int}{frac}");
        let exp = exp.saturating_sub(frac.len() as i64);
        Some(Exact::new(negative, &all, exp))
    }

    fn new(negative: bool, digits: &str, exp: i64) -> Exact {
        let lead = digits.trim_start_matches('0');
        let trimmed = lead.trim_end_matches('0');
        let exp = exp.saturating_add((lead.len() - trimmed.len()) as i64);
        if trimmed.is_empty() {
            return Exact {
                negative: false,
                digits: String::new(),
                exp: 0,
            };
        }
        Exact {
            negative,
            digits: trimmed.to_owned(),
            exp,
        }
    }

    /// The exact value of a `Decimal`.
    pub fn of(d: Decimal) -> Exact {
        let m = d.mantissa();
        Exact::new(m < 0, &m.unsigned_abs().to_string(), -i64::from(d.scale()))
    }

    /// Decimal places (0 for whole numbers).
    pub fn places(&self) -> i64 {
        (-self.exp).max(0)
    }

    /// Digits before the decimal point (0 below 1).
    pub fn int_digits(&self) -> i64 {
        (self.digits.len() as i64).saturating_add(self.exp).max(0)
    }

    /// Whether a `Decimal` (28 places, 96-bit mantissa) holds this value exactly, judged
    /// conservatively: at most 28 significant digits, places and integer digits.
    pub fn fits_decimal(&self) -> bool {
        self.digits.len() <= 28 && self.places() <= 28 && self.int_digits() <= 28
    }
}

/// The validation errors inside a refusal; any other kind of refusal is a bug of the parser.
pub fn validation_errors(error: &ApiError) -> &ValidationErrors {
    match error {
        ApiError::Checkout(CheckoutError::Validation(errors)) => errors,
        other => panic!("a body was refused with something other than a 400: {other}"),
    }
}

/// Top-level fields of the session requests, as the errors name them.
const TOP_FIELDS: &[&str] = &[
    "CallbackSuccessUrl",
    "CallbackFailUrl",
    "CallbackBackUrl",
    "TotalTransactionAmount",
    "CurrencyCode",
    "TerminalNumber",
    "TransactionReferenceNumber",
    "GeneralPurchaseDescription",
    "UserEmail",
    "Culture",
    "Items",
    "AdditionalCharges",
];
const ITEM_FIELDS: &[&str] = &[
    "ItemCode",
    "Quantity",
    "Description",
    "Amount",
    "CurrencyCode",
];
const CHARGE_FIELDS: &[&str] = &["ChargeName", "ChargeAmount", "ChargeCurrencyCode"];

/// Whether `key` names a field of a session request of `flow`: `Field`, `Items[n]`,
/// `Items[n].Field`, `Items[n][m]` or the same under `AdditionalCharges`, known names only.
pub fn is_known_key(key: &str, flow: SessionFlow) -> bool {
    let (base, rest) = match key.find('[') {
        Some(i) => key.split_at(i),
        None => (key, ""),
    };
    if !TOP_FIELDS.contains(&base) {
        return false;
    }
    if flow == SessionFlow::PaymentLink && base.starts_with("Callback") {
        return false;
    }
    if rest.is_empty() {
        return true;
    }
    let Some(after) = rest.strip_prefix('[') else {
        return false;
    };
    let Some((index, field)) = after.split_once(']') else {
        return false;
    };
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let sub = match base {
        "Items" => ITEM_FIELDS,
        "AdditionalCharges" => CHARGE_FIELDS,
        _ => return false,
    };
    // serde also reads an entry written as an array, by position: `Items[0][1]`.
    let positional = field
        .strip_prefix('[')
        .and_then(|f| f.strip_suffix(']'))
        .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()));
    field.is_empty() || positional || field.strip_prefix('.').is_some_and(|f| sub.contains(&f))
}

fn assert_known_keys(errors: &ValidationErrors, flow: SessionFlow, allow_body: bool) {
    assert!(!errors.is_empty(), "a refusal without any field");
    for (key, messages) in errors.fields() {
        assert!(
            (allow_body && key == "Body") || is_known_key(key, flow),
            "a refusal names an unknown field: {key:?}"
        );
        assert!(
            !messages.is_empty() && messages.iter().all(|m| !m.is_empty()),
            "an empty message for {key}"
        );
    }
}

/// `^[A-Za-z0-9_-]{1,32}$`, the terminals table's CHECK.
fn terminal_fits(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `d` fits `numeric(19,4)`, the sessions table's money columns.
fn numeric_19_4_fits(d: Decimal) -> bool {
    let e = Exact::of(d);
    e.places() <= 4 && e.int_digits() <= 15
}

/// Text Postgres can store and the pages can show: no NUL, no control characters.
fn clean(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

fn trimmed(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// Properties of an accepted request: what the use case would store fits the schema's
/// CHECKs, amounts are positive or non-negative, at the currency's scale and equal to what
/// was sent, and the flow's required parts are there.
pub fn check_accepted(
    request: &SessionRequest,
    flow: SessionFlow,
    rule: CallbackRule,
    new: &NewSession,
) {
    let currency = new.amount.currency();
    let code = currency.code();
    assert_eq!(
        trimmed(&request.currency_code),
        Some(code),
        "currency changed"
    );
    assert!(code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()));
    let mu = iso_minor_units(code);
    assert_eq!(currency.minor_units(), mu, "minor units of {code}");

    let total = new.amount.value();
    assert!(
        total > Decimal::ZERO,
        "accepted a total that is not positive"
    );
    assert!(
        total < Decimal::from(10_000_000_000_000_i64),
        "total too large"
    );
    assert_eq!(total.scale(), mu, "total not at the currency's scale");
    assert!(places(total) <= mu);
    assert_eq!(
        Some(total),
        request.total_transaction_amount,
        "total changed"
    );
    assert!(numeric_19_4_fits(total), "total does not fit numeric(19,4)");

    match flow {
        SessionFlow::PaymentLink => {
            assert!(new.callbacks.is_none());
            assert!(new.description.is_some() && new.email.is_some() && new.culture.is_some());
        }
        SessionFlow::IntegratedCheckout => {
            let callbacks = new.callbacks.as_ref().expect("start payment has callbacks");
            let urls = [
                Some(&callbacks.success),
                Some(&callbacks.fail),
                callbacks.back.as_ref(),
            ];
            for url in urls.into_iter().flatten() {
                let scheme = url.url().scheme();
                assert!(scheme == "https" || scheme == "http", "scheme {scheme}");
                if rule == CallbackRule::HttpsOnly {
                    assert_eq!(scheme, "https", "plain http accepted in production");
                }
                assert!(url.url().username().is_empty() && url.url().password().is_none());
                assert!(clean(url.as_str()) && !url.as_str().contains(' '));
            }
            if request
                .callback_back_url
                .as_deref()
                .is_some_and(|s| !s.trim().is_empty())
            {
                assert!(callbacks.back.is_some(), "callbackBackUrl dropped");
            }
        }
    }

    let reference = new.reference.as_str();
    assert!(
        (1..=64).contains(&reference.chars().count()),
        "reference length"
    );
    assert!(reference.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
    assert_eq!(reference, reference.trim());
    if let Some(terminal) = &new.terminal {
        assert!(terminal_fits(terminal.as_str()), "terminal fails the CHECK");
    }
    for text in [&new.description].into_iter().flatten() {
        assert!(clean(text.as_str()) && text.as_str().chars().count() <= 255);
    }
    if let Some(email) = &new.email {
        let e = email.as_str();
        assert!(e.len() <= 254 && e.matches('@').count() == 1 && clean(e));
    }
    if let Some(culture) = new.culture {
        assert!(["es", "en"].contains(&culture.as_str()));
    }

    assert_eq!(new.items.len(), request.items.len(), "items dropped");
    assert!(new.items.len() <= 100);
    for (item, sent) in new.items.iter().zip(&request.items) {
        assert!((1..=1_000_000).contains(&item.quantity));
        assert_eq!(Some(i64::from(item.quantity)), sent.quantity);
        let a = item.amount.value();
        assert!(a >= Decimal::ZERO && a.scale() == mu && numeric_19_4_fits(a));
        assert_eq!(Some(a), sent.amount, "item amount changed");
        assert_eq!(item.amount.currency(), currency);
        assert_eq!(trimmed(&sent.currency_code), Some(code));
        for text in [
            item.code.as_ref().map(|c| c.as_str()),
            item.description.as_ref().map(|d| d.as_str()),
        ]
        .into_iter()
        .flatten()
        {
            assert!(clean(text) && !text.is_empty());
        }
    }
    assert_eq!(
        new.charges.len(),
        request.additional_charges.len(),
        "charges dropped"
    );
    assert!(new.charges.len() <= 20);
    for (charge, sent) in new.charges.iter().zip(&request.additional_charges) {
        let a = charge.amount.value();
        assert!(a >= Decimal::ZERO && a.scale() == mu && numeric_19_4_fits(a));
        assert_eq!(Some(a), sent.charge_amount, "charge amount changed");
        assert_eq!(charge.amount.currency(), currency);
        assert_eq!(trimmed(&sent.charge_currency_code), Some(code));
        if let Some(name) = &charge.name {
            assert!(clean(name.as_str()));
        }
    }
}

/// Runs `data` through what the HTTP layer does with a session request body: the JSON body
/// parser, then the domain's validation under both callback rules, checking every outcome.
pub fn check_session_body<T: DeserializeOwned>(
    data: &[u8],
    flow: SessionFlow,
    into_domain: fn(T) -> SessionRequest,
) {
    let body = match parse_json::<T>(data) {
        Err(error) => {
            assert_known_keys(validation_errors(&error), flow, true);
            return;
        }
        Ok(body) => body,
    };
    assert!(
        serde_json::from_slice::<IgnoredAny>(data).is_ok(),
        "the body parser accepted bytes that are not one JSON value"
    );
    let request = into_domain(body);
    let strict = request.validate(flow, CallbackRule::HttpsOnly);
    let loose = request.validate(flow, CallbackRule::HttpsOrLoopbackHttp);
    if strict.is_ok() {
        assert!(
            loose.is_ok(),
            "the sandbox rule refused what production accepts"
        );
    }
    for (rule, result) in [
        (CallbackRule::HttpsOnly, strict),
        (CallbackRule::HttpsOrLoopbackHttp, loose),
    ] {
        match result {
            Err(errors) => {
                assert_known_keys(&errors, flow, false);
                let error = ApiError::from(errors);
                validation_errors(&error);
            }
            Ok(new) => check_accepted(&request, flow, rule, &new),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_reads_json_numbers() {
        let e = Exact::parse_json_number("-0012.500e1");
        assert_eq!(e, None, "leading zeros are not JSON");
        let e = Exact::parse_json_number("-12.500e1").unwrap();
        assert_eq!((e.negative, e.digits.as_str(), e.exp), (true, "125", -0));
        assert_eq!(Exact::parse_json_number("0.000").unwrap().digits, "");
        assert!(Exact::parse_json_number("1.").is_none());
        let d = Decimal::new(1050, 2);
        assert_eq!(Exact::of(d), Exact::parse_json_number("10.5").unwrap());
        assert!(luhn(&[4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2]));
        assert!(is_known_key("Items[12].Amount", SessionFlow::PaymentLink));
        assert!(!is_known_key("Items[x].Amount", SessionFlow::PaymentLink));
        assert!(!is_known_key("CallbackFailUrl", SessionFlow::PaymentLink));
    }
}
