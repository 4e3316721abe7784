//! The value types that can only be built valid: identifiers, card data, email, culture,
//! currencies and amounts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use std::collections::HashSet;

use crate::support::d;
use checkout_domain::card::{
    CardBrand, CardExpiry, CardField, CardFieldError, CardInput, CardNumber, Cvv,
};
use checkout_domain::values::{
    Amount, AmountError, AttemptId, CallbackHosts, CallbackUrl, Culture, Currency, Email,
    InternalReference, InvalidUrl, LineAmount, MerchantReference, SessionId, TerminalNumber,
    TextError,
};
use time::macros::datetime;
use time::OffsetDateTime;

/// The kit's clock reading: 2026-01-15 12:00 UTC.
const NOW: OffsetDateTime = datetime!(2026-01-15 12:00 UTC);

fn bytes(seed: u8) -> [u8; 16] {
    let mut b = [0u8; 16];
    for (i, slot) in b.iter_mut().enumerate() {
        *slot = seed.wrapping_mul(31).wrapping_add(i as u8 * 17);
    }
    b
}

fn usd() -> Currency {
    Currency::parse("USD").unwrap()
}

// ---- session ids ---------------------------------------------------------------------------

#[test]
fn a_session_id_formats_as_a_lowercase_guid_and_parses_back() {
    for seed in [0, 1, 7, 200, 255] {
        let id = SessionId::from_random_bytes(bytes(seed));
        let text = id.to_string();
        assert_eq!(text.len(), 36, "{text}");
        assert_eq!(text, text.to_lowercase());
        let dashes: Vec<usize> = text.match_indices('-').map(|(i, _)| i).collect();
        assert_eq!(dashes, [8, 13, 18, 23], "{text}");
        assert_eq!(text.parse::<SessionId>(), Ok(id));
        assert_eq!(text.to_uppercase().parse::<SessionId>(), Ok(id));
        assert_eq!(SessionId::from_uuid(id.as_uuid()), id);
        assert_eq!(id.as_bytes(), &bytes(seed));
    }
}

#[test]
fn a_session_id_refuses_malformed_text() {
    let good = SessionId::from_random_bytes(bytes(9)).to_string();
    let simple = good.replace('-', "");
    let braced = format!("{{{good}}}");
    let urn = format!("urn:uuid:{good}");
    let trailing = format!("{good} ");
    let non_hex = format!("g{}", &good[1..]);
    let short = good[..35].to_owned();
    for bad in [
        "",
        "not-a-session-id",
        "12345",
        simple.as_str(),
        braced.as_str(),
        urn.as_str(),
        trailing.as_str(),
        non_hex.as_str(),
        short.as_str(),
        "../../etc/passwd",
    ] {
        assert!(bad.parse::<SessionId>().is_err(), "{bad:?} must not parse");
    }
}

#[test]
fn distinct_random_bytes_give_distinct_session_ids() {
    let ids: HashSet<String> = (0..=255u8)
        .map(|s| SessionId::from_random_bytes(bytes(s)).to_string())
        .collect();
    assert_eq!(ids.len(), 256);
}

// ---- internal references and attempt ids ---------------------------------------------------

#[test]
fn an_internal_reference_is_hc_and_22_crockford_characters() {
    const CROCKFORD: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    for seed in [0, 3, 128, 255] {
        let reference = InternalReference::from_random_bytes(bytes(seed));
        let text = reference.as_str();
        assert_eq!(text.len(), 24, "{text}");
        assert!(text.starts_with("HC"), "{text}");
        assert!(text[2..].chars().all(|c| CROCKFORD.contains(c)), "{text}");
        assert_eq!(reference.to_string(), text);
        assert_eq!(InternalReference::parse(text), Ok(reference.clone()));
    }
    assert_eq!(
        InternalReference::from_random_bytes([0; 16]).as_str(),
        format!("HC{}", "0".repeat(22))
    );
}

#[test]
fn an_internal_reference_refuses_other_shapes() {
    let good = InternalReference::from_random_bytes(bytes(5)).to_string();
    let lower = good.to_lowercase();
    let no_prefix = good[2..].to_owned();
    let other_prefix = format!("HX{}", &good[2..]);
    let short = good[..23].to_owned();
    let long = format!("{good}0");
    for bad in [
        lower.as_str(),
        no_prefix.as_str(),
        other_prefix.as_str(),
        short.as_str(),
        long.as_str(),
        "HC0000000000000000000000I",
        "HCIIIIIIIIIIIIIIIIIIIIII",
        "HCOOOOOOOOOOOOOOOOOOOOOO",
        "HCUUUUUUUUUUUUUUUUUUUUUU",
        "",
    ] {
        assert!(InternalReference::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn distinct_random_bytes_give_distinct_internal_references() {
    let refs: HashSet<String> = (0..=255u8)
        .map(|s| InternalReference::from_random_bytes(bytes(s)).to_string())
        .collect();
    assert_eq!(refs.len(), 256);
}

#[test]
fn an_attempt_id_is_its_own_idempotency_key() {
    let a = AttemptId::from_random_bytes(bytes(1));
    let b = AttemptId::from_random_bytes(bytes(2));
    assert_eq!(a.idempotency_key(), format!("hc-attempt-{a}"));
    assert_eq!(a.idempotency_key(), a.idempotency_key());
    assert_ne!(a.idempotency_key(), b.idempotency_key());
    assert_eq!(AttemptId::from_uuid(a.as_uuid()), a);
}

// ---- card number ---------------------------------------------------------------------------

#[test]
fn a_card_number_passing_luhn_is_accepted() {
    let number = CardNumber::parse("4242 4242 4242 4242").unwrap();
    assert_eq!(number.expose_digits(), "4242424242424242");
    assert_eq!(number.last4(), "4242");
    let dashed = CardNumber::parse("4242-4242-4242-4242").unwrap();
    assert_eq!(dashed, number);
}

#[test]
fn a_card_number_with_one_digit_changed_fails_luhn() {
    assert_eq!(
        CardNumber::parse("4242 4242 4242 4241"),
        Err(CardFieldError::Invalid)
    );
    let digits: Vec<u8> = b"4242424242424242".to_vec();
    for position in 0..digits.len() {
        for delta in 1..10u8 {
            let mut changed = digits.clone();
            changed[position] = b'0' + (changed[position] - b'0' + delta) % 10;
            let text = String::from_utf8(changed).unwrap();
            assert_eq!(
                CardNumber::parse(&text),
                Err(CardFieldError::Invalid),
                "{text}"
            );
        }
    }
}

#[test]
fn a_card_number_of_the_wrong_shape_is_refused() {
    assert_eq!(CardNumber::parse(""), Err(CardFieldError::Required));
    assert_eq!(CardNumber::parse("   "), Err(CardFieldError::Required));
    for bad in [
        "4242",
        "42424242424",          // 11 digits
        "42424242424242424242", // 20 digits
        "4242 4242 4242 424a",
        "4242.4242.4242.4242",
    ] {
        assert_eq!(
            CardNumber::parse(bad),
            Err(CardFieldError::Invalid),
            "{bad}"
        );
    }
}

#[test]
fn the_brand_is_told_from_the_leading_digits() {
    let cases = [
        ("4242424242424242", CardBrand::Visa),
        ("4000056655665556", CardBrand::Visa),
        ("5555555555554444", CardBrand::Mastercard),
        ("2223003122003222", CardBrand::Mastercard),
        ("378282246310005", CardBrand::Amex),
        ("371449635398431", CardBrand::Amex),
        ("6011111111111117", CardBrand::Discover),
        ("6500000000000002", CardBrand::Discover),
        ("6445644564456445", CardBrand::Discover),
        ("3530111333300000", CardBrand::Other),
        ("6200000000000005", CardBrand::Other),
    ];
    for (digits, brand) in cases {
        assert_eq!(
            CardNumber::parse(digits).unwrap().brand(),
            brand,
            "{digits}"
        );
    }
}

#[test]
fn brand_names_round_trip() {
    for brand in [
        CardBrand::Visa,
        CardBrand::Mastercard,
        CardBrand::Amex,
        CardBrand::Discover,
        CardBrand::Other,
    ] {
        assert_eq!(CardBrand::parse(brand.as_str()), brand);
    }
    assert_eq!(CardBrand::parse("diners"), CardBrand::Other);
}

// ---- cvv -----------------------------------------------------------------------------------

#[test]
fn a_cvv_has_three_digits_or_four_for_amex() {
    for brand in [CardBrand::Visa, CardBrand::Mastercard, CardBrand::Discover] {
        assert_eq!(Cvv::parse("123", brand).unwrap().expose_digits(), "123");
        assert_eq!(Cvv::parse("1234", brand), Err(CardFieldError::Invalid));
        assert_eq!(Cvv::parse("12", brand), Err(CardFieldError::Invalid));
    }
    assert_eq!(
        Cvv::parse("1234", CardBrand::Amex).unwrap().expose_digits(),
        "1234"
    );
    assert_eq!(
        Cvv::parse("123", CardBrand::Amex),
        Err(CardFieldError::Invalid)
    );
    assert_eq!(
        Cvv::parse("12a", CardBrand::Visa),
        Err(CardFieldError::Invalid)
    );
    assert_eq!(
        Cvv::parse("", CardBrand::Visa),
        Err(CardFieldError::Required)
    );
}

// ---- expiry --------------------------------------------------------------------------------

#[test]
fn an_expiry_in_this_month_is_accepted() {
    for this_month in ["01/26", "01/2026", " 01 / 26 "] {
        let expiry = CardExpiry::parse(this_month, NOW).unwrap();
        assert_eq!((expiry.month(), expiry.year()), (1, 2026), "{this_month}");
    }
    let later = CardExpiry::parse("12/30", NOW).unwrap();
    assert_eq!((later.month(), later.year()), (12, 2030));
}

#[test]
fn an_expiry_in_the_past_is_refused() {
    for past in ["12/25", "12/2025", "01/25", "06/20"] {
        assert_eq!(
            CardExpiry::parse(past, NOW),
            Err(CardFieldError::Expired),
            "{past}"
        );
    }
}

#[test]
fn a_malformed_expiry_is_refused() {
    assert_eq!(CardExpiry::parse("", NOW), Err(CardFieldError::Required));
    for bad in [
        "13/26", "00/26", "1/2/26", "ab/cd", "01/226", "01/60", "126", "01/-26", "01//26",
    ] {
        assert_eq!(
            CardExpiry::parse(bad, NOW),
            Err(CardFieldError::Invalid),
            "{bad}"
        );
    }
}

#[test]
fn the_card_form_reports_every_field_at_once() {
    let input = CardInput {
        cardholder_name: " ".into(),
        card_number: "4242 4242 4242 4241".into(),
        expiry: "12/25".into(),
        cvv: "12".into(),
    };
    let errors = input.validate(NOW).unwrap_err();
    assert_eq!(
        errors.get(&CardField::CardholderName),
        Some(&CardFieldError::Required)
    );
    assert_eq!(
        errors.get(&CardField::CardNumber),
        Some(&CardFieldError::Invalid)
    );
    assert_eq!(
        errors.get(&CardField::Expiry),
        Some(&CardFieldError::Expired)
    );
    assert_eq!(errors.get(&CardField::Cvv), Some(&CardFieldError::Invalid));
}

#[test]
fn the_card_form_checks_the_cvv_against_the_brand() {
    let amex = |cvv: &str| CardInput {
        cardholder_name: "Grace Hopper".into(),
        card_number: "3782 822463 10005".into(),
        expiry: "03/28".into(),
        cvv: cvv.into(),
    };
    let card = amex("1234").validate(NOW).unwrap();
    assert_eq!(card.number.brand(), CardBrand::Amex);
    assert_eq!(card.holder.as_str(), "Grace Hopper");
    let errors = amex("123").validate(NOW).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors.get(&CardField::Cvv), Some(&CardFieldError::Invalid));
}

// ---- email and culture ---------------------------------------------------------------------

#[test]
fn an_email_is_accepted_when_well_formed() {
    for ok in [
        "payer@example.com",
        "first.last+tag@mail.example.co.cr",
        "x@a-b.io",
    ] {
        assert_eq!(Email::parse(ok).unwrap().as_str(), ok);
    }
    assert_eq!(
        Email::parse("  payer@example.com ").unwrap().as_str(),
        "payer@example.com"
    );
}

#[test]
fn an_email_is_refused_when_malformed() {
    let too_long = format!("{}@example.com", "a".repeat(250));
    for bad in [
        "",
        "payer",
        "payer@",
        "@example.com",
        "payer@example",
        "pay er@example.com",
        "payer@@example.com",
        "payer@exa_mple.com",
        "payer@-example.com",
        "payer@example..com",
        too_long.as_str(),
    ] {
        assert!(Email::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn culture_is_es_or_en_only() {
    assert_eq!(Culture::parse("es"), Ok(Culture::Es));
    assert_eq!(Culture::parse("en"), Ok(Culture::En));
    assert_eq!(Culture::Es.to_string(), "es");
    assert_eq!(Culture::En.as_str(), "en");
    for bad in ["", "ES", "En", "fr", "es-CR", "en_US", " es"] {
        assert!(Culture::parse(bad).is_err(), "{bad:?}");
    }
}

// ---- currency and amounts ------------------------------------------------------------------

#[test]
fn currencies_carry_their_minor_units() {
    for (code, minor) in [
        ("USD", 2),
        ("CRC", 2),
        ("EUR", 2),
        ("JPY", 0),
        ("KRW", 0),
        ("KWD", 3),
        ("BHD", 3),
    ] {
        let currency = Currency::parse(code).unwrap();
        assert_eq!(currency.code(), code);
        assert_eq!(currency.to_string(), code);
        assert_eq!(currency.minor_units(), minor, "{code}");
    }
}

#[test]
fn unknown_or_lower_case_currency_codes_are_refused() {
    for bad in ["", "usd", "Usd", "XXX", "XAU", "US", "USDX", "ZZZ"] {
        assert!(Currency::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn an_amount_is_rescaled_to_its_currency() {
    let amount = Amount::new(d("10.5"), usd()).unwrap();
    assert_eq!(amount.value().to_string(), "10.50");
    assert_eq!(amount.to_string(), "10.50 USD");
    assert_eq!(amount, Amount::new(d("10.50"), usd()).unwrap());
    assert_eq!(
        Amount::new(d("10.000"), usd()).unwrap().value().to_string(),
        "10.00"
    );
    let kwd = Currency::parse("KWD").unwrap();
    assert_eq!(
        Amount::new(d("1.5"), kwd).unwrap().value().to_string(),
        "1.500"
    );
    let jpy = Currency::parse("JPY").unwrap();
    assert_eq!(
        Amount::new(d("1500"), jpy).unwrap().value().to_string(),
        "1500"
    );
}

#[test]
fn an_amount_must_be_positive_fit_the_scale_and_stay_below_the_limit() {
    assert_eq!(Amount::new(d("0"), usd()), Err(AmountError::NotPositive));
    assert_eq!(
        Amount::new(d("-0.01"), usd()),
        Err(AmountError::NotPositive)
    );
    assert_eq!(
        Amount::new(d("10.001"), usd()),
        Err(AmountError::TooPrecise(2))
    );
    let jpy = Currency::parse("JPY").unwrap();
    assert_eq!(Amount::new(d("1.5"), jpy), Err(AmountError::TooPrecise(0)));
    assert_eq!(
        Amount::new(d("10000000000000"), usd()),
        Err(AmountError::TooLarge)
    );
    assert!(Amount::new(d("9999999999999.99"), usd()).is_ok());
}

#[test]
fn a_line_amount_may_be_zero_but_not_negative() {
    assert_eq!(
        LineAmount::new(d("0"), usd()).unwrap().value().to_string(),
        "0.00"
    );
    assert_eq!(
        LineAmount::new(d("-0.01"), usd()),
        Err(AmountError::Negative)
    );
    assert_eq!(
        LineAmount::new(d("0.001"), usd()),
        Err(AmountError::TooPrecise(2))
    );
}

// ---- urls and text -------------------------------------------------------------------------

#[test]
fn a_callback_url_is_absolute_http_or_https_without_credentials() {
    assert!(CallbackUrl::parse("https://merchant.example/ok").is_ok());
    assert!(CallbackUrl::parse("http://localhost:3000/ok").is_ok());
    for bad in [
        "",
        "/ok",
        "ftp://merchant.example/ok",
        "file:///etc/passwd",
        "data:text/html,hi",
    ] {
        assert_eq!(
            CallbackUrl::parse(bad),
            Err(InvalidUrl::Malformed),
            "{bad:?}"
        );
    }
    assert_eq!(
        CallbackUrl::parse("https://user:pw@merchant.example/ok"),
        Err(InvalidUrl::Credentials)
    );
    let too_long = format!("https://merchant.example/{}", "a".repeat(2048));
    assert!(CallbackUrl::parse(&too_long).is_err());
}

#[test]
fn merchant_text_is_trimmed_bounded_and_clean() {
    assert_eq!(
        MerchantReference::parse("  ORD-1 ").unwrap().as_str(),
        "ORD-1"
    );
    assert_eq!(MerchantReference::parse("  "), Err(TextError::Empty));
    assert_eq!(
        MerchantReference::parse(&"R".repeat(65)),
        Err(TextError::TooLong(64))
    );
    assert_eq!(
        MerchantReference::parse("ORD\n1"),
        Err(TextError::BadCharacter)
    );
    assert_eq!(TerminalNumber::parse("T-1_a").unwrap().as_str(), "T-1_a");
    assert_eq!(TerminalNumber::parse("T 1"), Err(TextError::BadCharacter));
    assert_eq!(
        TerminalNumber::parse(&"T".repeat(33)),
        Err(TextError::TooLong(32))
    );
}

#[test]
fn callback_hosts_are_normalised_hosts_matched_exactly() {
    let hosts = CallbackHosts::parse(["Shop.Example", " pay.example ", "shop.example", "[::1]"])
        .expect("valid hosts");
    assert_eq!(hosts.hosts(), ["shop.example", "pay.example", "[::1]"]);
    let url = |s: &str| CallbackUrl::parse(s).unwrap();
    assert!(hosts.allows(&url("https://SHOP.example/ok?x=1")));
    assert!(hosts.allows(&url("http://[::1]:8080/ok")));
    assert!(
        hosts.allows(&url("https://pay.example:8443/ok")),
        "any port"
    );
    assert!(
        !hosts.allows(&url("https://www.shop.example/ok")),
        "a subdomain is another host"
    );
    assert!(!hosts.allows(&url("https://shop.example.evil/ok")));
    for bad in [
        "",
        "https://shop.example",
        "shop.example/ok",
        "*.shop.example",
        "a b",
        "user@shop.example",
        "shop.example:443",
    ] {
        assert!(CallbackHosts::parse([bad]).is_err(), "{bad:?} refused");
    }
    assert!(
        CallbackHosts::parse(std::iter::empty()).is_err(),
        "an empty list is refused"
    );
}

/// The money a session moved after its authorisation is bound to the session's currency and
/// scale: a store's amounts are checked (a capture above zero, a refunded sum zero or more, no
/// more decimals than the currency has) and kept at the currency's scale.
#[test]
fn session_money_is_typed_by_the_sessions_currency() {
    use checkout_domain::session::SessionMoney;
    let jpy = Currency::parse("JPY").unwrap();
    let money = SessionMoney::new(Some(d("7.5")), d("1"), usd()).unwrap();
    assert_eq!(
        money.captured().map(|c| c.value().to_string()),
        Some("7.50".to_owned())
    );
    assert_eq!(money.refunded().value().to_string(), "1.00");
    assert_eq!(money.refunded().currency(), usd());
    let nothing = SessionMoney::nothing(jpy);
    assert_eq!(nothing.captured(), None);
    assert_eq!(nothing.refunded().value().to_string(), "0");
    assert_eq!(
        SessionMoney::new(None, d("0.5"), jpy),
        Err(AmountError::TooPrecise(0))
    );
    assert_eq!(
        SessionMoney::new(Some(d("0")), d("0"), usd()),
        Err(AmountError::NotPositive)
    );
    assert_eq!(
        SessionMoney::new(None, d("-0.01"), usd()),
        Err(AmountError::Negative)
    );
}
