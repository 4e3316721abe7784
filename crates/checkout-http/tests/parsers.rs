//! Property tests of the JSON body parser: any bytes give a value or a 400 keyed by a field,
//! never a panic. More cases: `PROPTEST_CASES=100000 cargo nextest run -p checkout-http parsers`.

use checkout_http::dto::{PaymentLinkRequest, StartPaymentRequest, TokenRequest};
use checkout_http::json_body::parse_json;
use checkout_http::problem::{ApiError, ProblemDetails};
use proptest::prelude::*;

/// The `errors` keys of a refusal (asserting it is a 400).
fn refusal_keys(error: &ApiError) -> Vec<String> {
    let body = ProblemDetails::from_error(error);
    assert_eq!(body.status, 400, "{body:?}");
    body.errors.unwrap_or_default().into_keys().collect()
}

/// JSON-ish text: objects with the API's field names and odd values.
fn jsonish() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "totalTransactionAmount",
        "currencyCode",
        "transactionReferenceNumber",
        "items",
        "additionalCharges",
        "quantity",
        "amount",
        "client_id",
        "culture",
    ]);
    let value = prop::sample::select(vec![
        "1",
        "-1",
        "1e400",
        "0.000000000000000000000000001",
        "\"x\"",
        "null",
        "true",
        "[]",
        "{}",
        "[{\"amount\":\"abc\"}]",
        "\"\\u0000\"",
        "99999999999999999999999999999999",
    ]);
    prop::collection::vec((key, value), 0..6).prop_map(|pairs| {
        let fields: Vec<String> = pairs.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", fields.join(","))
    })
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_and_refusals_name_a_field(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let refusals = [
            parse_json::<StartPaymentRequest>(&bytes).err(),
            parse_json::<PaymentLinkRequest>(&bytes).err(),
            parse_json::<TokenRequest>(&bytes).err(),
        ];
        for error in refusals.iter().flatten() {
            prop_assert!(!refusal_keys(error).is_empty());
        }
    }

    #[test]
    fn api_shaped_bodies_never_panic_and_refusals_name_a_field(text in jsonish()) {
        if let Err(error) = parse_json::<StartPaymentRequest>(text.as_bytes()) {
            let keys = refusal_keys(&error);
            prop_assert!(
                keys.iter().all(|k| k == "Body" || k.starts_with(|c: char| c.is_ascii_uppercase())),
                "{:?}", keys
            );
        }
    }
}
