//! Property tests of the validators that guard money and card data: for generated inputs, each
//! accepts exactly what an independent statement of its rule accepts, and never panics.
//! More cases: `PROPTEST_CASES=100000 cargo nextest run -p checkout-domain properties`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use checkout_domain::card::{CardFieldError, CardNumber};
use checkout_domain::session::{ChargeRequest, ItemRequest, SessionFlow, SessionRequest};
use checkout_domain::values::{Amount, CallbackRule, Currency};
use proptest::prelude::*;
use rust_decimal::Decimal;

/// Luhn, written the other way round from the service: the doubled digits come from a table.
fn luhn_oracle(digits: &[u8]) -> bool {
    const DOUBLED: [u32; 10] = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];
    let mut sum = 0;
    let mut double = false;
    for &d in digits.iter().rev() {
        let d = u32::from(d);
        sum += if double { DOUBLED[d as usize] } else { d };
        double = !double;
    }
    sum % 10 == 0
}

/// The check digit that makes `body` pass Luhn.
fn check_digit(body: &[u8]) -> u8 {
    (0..10u8)
        .find(|c| {
            let mut all = body.to_vec();
            all.push(*c);
            luhn_oracle(&all)
        })
        .expect("one digit always fits")
}

fn text(digits: &[u8]) -> String {
    digits.iter().map(|d| char::from(b'0' + d)).collect()
}

fn codes() -> Vec<&'static str> {
    Currency::all_codes().collect()
}

proptest! {
    #[test]
    fn a_card_number_is_accepted_exactly_when_it_has_12_to_19_digits_and_passes_luhn(
        digits in prop::collection::vec(0u8..10, 0..24),
        separators in prop::collection::vec(prop::sample::select(vec!["", "", " ", "-"]), 24),
    ) {
        let mut typed = String::new();
        for (i, d) in digits.iter().enumerate() {
            typed.push(char::from(b'0' + d));
            typed.push_str(separators[i]);
        }
        let expected_ok = (12..=19).contains(&digits.len()) && luhn_oracle(&digits);
        let parsed = CardNumber::parse(&typed);
        prop_assert_eq!(parsed.is_ok(), expected_ok, "{:?}", typed);
        match parsed {
            Ok(number) => {
                prop_assert_eq!(number.expose_digits(), text(&digits));
                prop_assert_eq!(number.last4(), &text(&digits)[digits.len() - 4..]);
            }
            Err(e) if digits.is_empty() => prop_assert_eq!(e, CardFieldError::Required),
            Err(e) => prop_assert_eq!(e, CardFieldError::Invalid),
        }
    }

    #[test]
    fn every_single_digit_typo_of_a_valid_card_number_is_refused(
        body in prop::collection::vec(0u8..10, 11..19),
        position in any::<prop::sample::Index>(),
        change in 1u8..10,
    ) {
        let mut digits = body.clone();
        digits.push(check_digit(&body));
        prop_assert!(CardNumber::parse(&text(&digits)).is_ok());
        let at = position.index(digits.len());
        digits[at] = (digits[at] + change) % 10;
        prop_assert_eq!(CardNumber::parse(&text(&digits)).err(), Some(CardFieldError::Invalid));
    }

    #[test]
    fn card_number_parsing_never_panics_and_accepts_only_digits(s in "\\PC{0,40}") {
        if let Ok(number) = CardNumber::parse(&s) {
            prop_assert!(number.expose_digits().bytes().all(|b| b.is_ascii_digit()));
        }
    }

    #[test]
    fn an_amount_is_accepted_exactly_when_positive_small_enough_and_not_too_precise(
        mantissa in -10_000_000_000_000_000i64..10_000_000_000_000_000i64,
        scale in 0u32..7,
        code in prop::sample::select(codes()),
    ) {
        let currency = Currency::parse(code).unwrap();
        let value = Decimal::new(mantissa, scale);
        let places = value.normalize().scale();
        let expected_ok = value > Decimal::ZERO
            && places <= currency.minor_units()
            && value < Decimal::from(10_000_000_000_000i64);
        let amount = Amount::new(value, currency);
        prop_assert_eq!(amount.is_ok(), expected_ok, "{} {}", value, code);
        if let Ok(amount) = amount {
            prop_assert_eq!(amount.value(), value, "no rounding");
            prop_assert_eq!(amount.value().scale(), currency.minor_units(), "kept at the currency's scale");
        }
    }

    #[test]
    fn a_currency_is_known_exactly_when_it_is_in_the_iso_list(code in "[A-Za-z]{3}") {
        let known = codes().contains(&code.as_str());
        prop_assert_eq!(Currency::parse(&code).is_ok(), known);
    }

    #[test]
    fn validating_any_request_never_panics_and_names_only_known_fields(
        strings in prop::collection::vec(prop::option::of("\\PC{0,80}"), 12),
        amount in prop::option::of(-1_000_000i64..1_000_000_000i64),
        items in 0usize..3,
        flow in prop::sample::select(vec![SessionFlow::IntegratedCheckout, SessionFlow::PaymentLink]),
    ) {
        let s = |i: usize| strings[i].clone();
        let request = SessionRequest {
            callback_success_url: s(0),
            callback_fail_url: s(1),
            callback_back_url: s(2),
            total_transaction_amount: amount.map(|a| Decimal::new(a, 2)),
            currency_code: s(3),
            terminal_number: s(4),
            transaction_reference_number: s(5),
            general_purchase_description: s(6),
            user_email: s(7),
            culture: s(8),
            items: (0..items)
                .map(|_| ItemRequest {
                    item_code: s(9),
                    quantity: Some(1),
                    description: s(10),
                    amount: amount.map(|a| Decimal::new(a, 2)),
                    currency_code: s(3),
                })
                .collect(),
            additional_charges: vec![ChargeRequest {
                charge_name: s(11),
                charge_amount: Some(Decimal::ONE),
                charge_currency_code: s(3),
            }],
            expiration_date_time: None,
            metadata: Vec::new(),
            capture_method: None,
        };
        if let Err(errors) = request.validate(flow, CallbackRule::HttpsOnly) {
            for key in errors.fields().keys() {
                let base = key.split(['[', '.']).next().unwrap_or_default();
                prop_assert!(
                    [
                        "CallbackSuccessUrl", "CallbackFailUrl", "CallbackBackUrl",
                        "TotalTransactionAmount", "CurrencyCode", "TerminalNumber",
                        "TransactionReferenceNumber", "GeneralPurchaseDescription",
                        "UserEmail", "Culture", "Items", "AdditionalCharges",
                    ]
                    .contains(&base),
                    "unexpected key {}", key
                );
                prop_assert!(!errors.messages(key).unwrap_or_default().is_empty());
            }
        }
    }
}
