//! The currency code parser, alone and as the request validation uses it (trimmed). A code
//! is accepted exactly when it is listed; a listed code is three upper-case letters, parses
//! back to itself and has the decimal places ISO 4217 gives it.
#![no_main]

use checkout_domain::session::{SessionFlow, SessionRequest};
use checkout_domain::values::{CallbackRule, Currency};
use checkout_fuzz::iso_minor_units;
use libfuzzer_sys::fuzz_target;
use rust_decimal::Decimal;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let listed = Currency::all_codes().any(|c| c == text);
    match Currency::parse(text) {
        Ok(currency) => {
            assert!(listed, "accepted an unlisted code");
            assert_eq!(currency.code(), text);
            assert!(text.len() == 3 && text.bytes().all(|b| b.is_ascii_uppercase()));
            assert_eq!(
                currency.minor_units(),
                iso_minor_units(text),
                "minor units of {text}"
            );
            assert_eq!(currency.to_string(), text);
        }
        Err(_) => assert!(!listed, "refused a listed code"),
    }

    // Through the request rules: the code is trimmed, then must be listed.
    let request = SessionRequest {
        total_transaction_amount: Some(Decimal::ONE),
        currency_code: Some(text.to_owned()),
        transaction_reference_number: Some("R-1".to_owned()),
        ..SessionRequest::default()
    };
    let result = request.validate(SessionFlow::PaymentLink, CallbackRule::HttpsOnly);
    let errors = result.expect_err("a link request without description is refused");
    let flagged = errors.messages("CurrencyCode").is_some();
    assert_eq!(
        flagged,
        Currency::parse(text.trim()).is_err(),
        "CurrencyCode flagged wrongly"
    );
});
