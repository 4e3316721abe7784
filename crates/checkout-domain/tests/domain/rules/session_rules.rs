//! The field rules of spec section 2.2 (and 7.3, 8), one test per rule, each with the accepted
//! and the refused side. A refusal must name exactly the offending field, in PascalCase, as the
//! 400 response's `errors` dictionary will.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use crate::support::{
    charge, d, item, link_request, start_request, BACK_URL, FAIL_URL, SUCCESS_URL,
};
use checkout_domain::session::{NewSession, SessionFlow, SessionRequest};
use checkout_domain::terminal::CaptureMethod;
use checkout_domain::values::{CallbackRule, Culture};
use checkout_domain::ValidationErrors;

const START: SessionFlow = SessionFlow::IntegratedCheckout;
const LINK: SessionFlow = SessionFlow::PaymentLink;

/// The production rule: every test below holds under it unless it says otherwise.
const RULE: CallbackRule = CallbackRule::HttpsOnly;

fn accepted(request: &SessionRequest, flow: SessionFlow) -> NewSession {
    match request.validate(flow, RULE) {
        Ok(new) => new,
        Err(errors) => panic!("refused, but must be accepted: {:?}", errors.fields()),
    }
}

fn refused(request: &SessionRequest, flow: SessionFlow) -> ValidationErrors {
    match request.validate(flow, RULE) {
        Ok(new) => panic!("accepted, but must be refused: {new:?}"),
        Err(errors) => errors,
    }
}

fn keys(errors: &ValidationErrors) -> Vec<&str> {
    errors.fields().keys().map(String::as_str).collect()
}

/// Asserts the request is refused on `field` and on nothing else; returns its messages.
fn refused_only_on(request: &SessionRequest, flow: SessionFlow, field: &str) -> Vec<String> {
    let errors = refused(request, flow);
    assert_eq!(keys(&errors), [field], "{:?}", errors.fields());
    let messages = errors.messages(field).unwrap().to_vec();
    assert!(!messages.is_empty());
    assert!(
        messages.iter().all(|m| !m.trim().is_empty()),
        "{messages:?}"
    );
    messages
}

fn says_required(messages: &[String]) -> bool {
    messages.iter().any(|m| m.contains("required"))
}

// ---- the valid baselines -------------------------------------------------------------------

#[test]
fn a_complete_start_payment_request_is_accepted_as_sent() {
    let new = accepted(&start_request("ORD-1001"), START);
    let callbacks = new.callbacks.expect("callbacks of an integrated checkout");
    assert_eq!(callbacks.success.as_str(), SUCCESS_URL);
    assert_eq!(callbacks.fail.as_str(), FAIL_URL);
    assert_eq!(callbacks.back, None);
    assert_eq!(new.amount.value(), d("25.00"));
    assert_eq!(new.amount.currency().code(), "USD");
    assert_eq!(new.reference.as_str(), "ORD-1001");
    assert_eq!(new.terminal, None);
    assert_eq!(new.items.len(), 1);
    assert_eq!(new.items[0].quantity, 2);
    assert_eq!(new.items[0].amount.value(), d("10.00"));
    assert_eq!(new.charges.len(), 1);
    assert_eq!(new.charges[0].amount.value(), d("5.00"));
}

#[test]
fn a_complete_payment_link_request_is_accepted_as_sent() {
    let new = accepted(&link_request("ORD-1002"), LINK);
    assert_eq!(new.callbacks, None);
    assert_eq!(
        new.description.as_ref().map(|t| t.as_str()),
        Some("Order 1001: two mugs")
    );
    assert_eq!(
        new.email.as_ref().map(|e| e.as_str()),
        Some("payer@example.com")
    );
    assert_eq!(new.culture, Some(Culture::Es));
}

#[test]
fn an_empty_start_payment_request_names_every_required_field() {
    let errors = refused(&SessionRequest::default(), START);
    assert_eq!(
        keys(&errors),
        [
            "CallbackFailUrl",
            "CallbackSuccessUrl",
            "CurrencyCode",
            "TotalTransactionAmount",
            "TransactionReferenceNumber",
        ]
    );
    for messages in errors.fields().values() {
        assert!(says_required(messages), "{messages:?}");
    }
}

#[test]
fn an_empty_payment_link_request_names_every_required_field() {
    let errors = refused(&SessionRequest::default(), LINK);
    assert_eq!(
        keys(&errors),
        [
            "Culture",
            "CurrencyCode",
            "GeneralPurchaseDescription",
            "TotalTransactionAmount",
            "TransactionReferenceNumber",
            "UserEmail",
        ]
    );
}

// ---- callbacks -----------------------------------------------------------------------------

#[test]
fn callback_success_url_is_required_for_start_payment() {
    accepted(&start_request("R"), START);
    for missing in [None, Some(String::new()), Some("   ".into())] {
        let request = SessionRequest {
            callback_success_url: missing,
            ..start_request("R")
        };
        let messages = refused_only_on(&request, START, "CallbackSuccessUrl");
        assert!(says_required(&messages), "{messages:?}");
    }
}

#[test]
fn callback_fail_url_is_required_for_start_payment() {
    accepted(&start_request("R"), START);
    for missing in [None, Some(String::new()), Some("  ".into())] {
        let request = SessionRequest {
            callback_fail_url: missing,
            ..start_request("R")
        };
        let messages = refused_only_on(&request, START, "CallbackFailUrl");
        assert!(says_required(&messages), "{messages:?}");
    }
}

#[test]
fn callback_back_url_is_optional_for_start_payment() {
    let without = accepted(&start_request("R"), START);
    assert_eq!(without.callbacks.unwrap().back, None);

    let with = SessionRequest {
        callback_back_url: Some(BACK_URL.into()),
        ..start_request("R")
    };
    let back = accepted(&with, START).callbacks.unwrap().back;
    assert_eq!(back.map(|u| u.to_string()), Some(BACK_URL.to_owned()));

    let bad = SessionRequest {
        callback_back_url: Some("not a url".into()),
        ..start_request("R")
    };
    refused_only_on(&bad, START, "CallbackBackUrl");
}

#[test]
fn callback_urls_are_not_asked_of_a_payment_link() {
    let request = link_request("R");
    assert_eq!(request.callback_success_url, None);
    assert_eq!(request.callback_fail_url, None);
    assert_eq!(accepted(&request, LINK).callbacks, None);
}

#[test]
fn callback_urls_must_be_absolute_http_or_https() {
    let good = [
        "https://merchant.example/ok",
        "https://merchant.example:8443/ok?order=1",
        "https://shop.merchant.example/a/b/c#top",
    ];
    let bad = [
        "/checkout/ok",
        "merchant.example/ok",
        "ftp://merchant.example/ok",
        "javascript:alert(1)",
        "mailto:shop@merchant.example",
        "https://",
    ];
    type Setter = fn(&mut SessionRequest, String);
    let fields: [(&str, Setter); 3] = [
        ("CallbackSuccessUrl", |r, u| {
            r.callback_success_url = Some(u)
        }),
        ("CallbackFailUrl", |r, u| r.callback_fail_url = Some(u)),
        ("CallbackBackUrl", |r, u| r.callback_back_url = Some(u)),
    ];
    for (field, set) in fields {
        for url in good {
            let mut request = start_request("R");
            set(&mut request, url.into());
            accepted(&request, START);
        }
        for url in bad {
            let mut request = start_request("R");
            set(&mut request, url.into());
            let messages = refused_only_on(&request, START, field);
            assert!(
                messages.iter().any(|m| m.contains("http")),
                "{field} {url}: {messages:?}"
            );
        }
    }
}

#[test]
fn callback_urls_may_not_carry_credentials() {
    for url in [
        "https://user:secret@merchant.example/ok",
        "https://user@merchant.example/ok",
    ] {
        let mut request = start_request("R");
        request.callback_fail_url = Some(url.into());
        let messages = refused_only_on(&request, START, "CallbackFailUrl");
        assert_eq!(
            messages,
            ["CallbackFailUrl must not contain a user name or password."]
        );
    }
}

#[test]
fn plain_http_callbacks_are_refused_in_production_and_allowed_to_localhost_in_the_sandbox() {
    let loopback = [
        "http://localhost:3000/ok",
        "http://127.0.0.1:8080/ok",
        "http://[::1]/ok",
    ];
    let elsewhere = "http://merchant.example:8080/ok?order=1";
    for url in loopback.iter().chain([&elsewhere]) {
        let mut request = start_request("R");
        request.callback_success_url = Some((*url).into());
        let errors = request
            .validate(START, CallbackRule::HttpsOnly)
            .expect_err("production refuses plain http");
        assert_eq!(
            errors.messages("CallbackSuccessUrl").unwrap(),
            ["CallbackSuccessUrl must use https."]
        );
    }
    for url in loopback {
        let mut request = start_request("R");
        request.callback_success_url = Some(url.into());
        assert!(
            request
                .validate(START, CallbackRule::HttpsOrLoopbackHttp)
                .is_ok(),
            "{url}"
        );
    }
    let mut request = start_request("R");
    request.callback_back_url = Some(elsewhere.into());
    let errors = request
        .validate(START, CallbackRule::HttpsOrLoopbackHttp)
        .expect_err("the sandbox allows plain http to localhost only");
    assert_eq!(keys(&errors), ["CallbackBackUrl"]);
}

// ---- amount and currency -------------------------------------------------------------------

#[test]
fn total_transaction_amount_must_be_greater_than_zero() {
    for ok in ["0.01", "1", "25.00", "999999.99"] {
        let request = SessionRequest {
            total_transaction_amount: Some(d(ok)),
            ..start_request("R")
        };
        assert_eq!(accepted(&request, START).amount.value(), d(ok));
    }
    for not_positive in ["0", "0.00", "-0.01", "-25"] {
        for flow in [START, LINK] {
            let base = if flow == START {
                start_request("R")
            } else {
                link_request("R")
            };
            let request = SessionRequest {
                total_transaction_amount: Some(d(not_positive)),
                ..base
            };
            let messages = refused_only_on(&request, flow, "TotalTransactionAmount");
            assert!(
                messages.iter().any(|m| m.contains("greater than 0")),
                "{not_positive}: {messages:?}"
            );
        }
    }
}

#[test]
fn total_transaction_amount_is_required() {
    let request = SessionRequest {
        total_transaction_amount: None,
        ..start_request("R")
    };
    let messages = refused_only_on(&request, START, "TotalTransactionAmount");
    assert!(says_required(&messages));
}

#[test]
fn amount_scale_follows_the_currency() {
    // (currency, accepted amount, refused amount)
    let cases = [
        ("USD", "10.55", "10.555"),
        ("CRC", "15000.50", "15000.505"),
        ("JPY", "1500", "1500.5"),
        ("KWD", "1.234", "1.2345"),
    ];
    for (currency, ok, too_precise) in cases {
        let with = |amount: &str| SessionRequest {
            total_transaction_amount: Some(d(amount)),
            currency_code: Some(currency.into()),
            items: vec![],
            additional_charges: vec![],
            ..start_request("R")
        };
        let new = accepted(&with(ok), START);
        assert_eq!(new.amount.value(), d(ok), "{currency}");
        assert_eq!(new.amount.currency().code(), currency);
        let messages = refused_only_on(&with(too_precise), START, "TotalTransactionAmount");
        assert!(
            messages.iter().any(|m| m.contains("decimal places")),
            "{currency}: {messages:?}"
        );
    }
}

#[test]
fn an_amount_is_kept_at_its_currency_scale() {
    let request = SessionRequest {
        total_transaction_amount: Some(d("10.5")),
        items: vec![],
        additional_charges: vec![],
        ..start_request("R")
    };
    let amount = accepted(&request, START).amount;
    assert_eq!(amount.value().to_string(), "10.50");
    assert_eq!(amount.value().scale(), 2);
}

#[test]
fn currency_code_must_be_an_iso_code() {
    for ok in ["CRC", "USD", "EUR", "JPY"] {
        let request = SessionRequest {
            currency_code: Some(ok.into()),
            total_transaction_amount: Some(d("100")),
            items: vec![],
            additional_charges: vec![],
            ..start_request("R")
        };
        assert_eq!(accepted(&request, START).amount.currency().code(), ok);
    }
    for bad in ["XXX", "usd", "Usd", "US", "USDD", "DOLLAR", "840", "ABC"] {
        let request = SessionRequest {
            currency_code: Some(bad.into()),
            items: vec![],
            additional_charges: vec![],
            ..start_request("R")
        };
        refused_only_on(&request, START, "CurrencyCode");
    }
    let missing = SessionRequest {
        currency_code: None,
        items: vec![],
        additional_charges: vec![],
        ..start_request("R")
    };
    assert!(says_required(&refused_only_on(
        &missing,
        START,
        "CurrencyCode"
    )));
}

// ---- references and terminal ---------------------------------------------------------------

#[test]
fn transaction_reference_number_is_required() {
    for flow in [START, LINK] {
        let base = || {
            if flow == START {
                start_request("ORD-7")
            } else {
                link_request("ORD-7")
            }
        };
        assert_eq!(accepted(&base(), flow).reference.as_str(), "ORD-7");
        for missing in [None, Some(String::new()), Some("   ".into())] {
            let request = SessionRequest {
                transaction_reference_number: missing,
                ..base()
            };
            let messages = refused_only_on(&request, flow, "TransactionReferenceNumber");
            assert!(says_required(&messages));
        }
    }
}

#[test]
fn transaction_reference_number_has_a_bounded_length() {
    let longest = "R".repeat(64);
    assert_eq!(
        accepted(&start_request(&longest), START).reference.as_str(),
        longest
    );
    refused_only_on(
        &start_request(&"R".repeat(65)),
        START,
        "TransactionReferenceNumber",
    );
}

#[test]
fn terminal_number_is_optional() {
    let omitted = accepted(&start_request("R"), START);
    assert_eq!(omitted.terminal, None);

    let given = SessionRequest {
        terminal_number: Some("T-1".into()),
        ..start_request("R")
    };
    let terminal = accepted(&given, START).terminal;
    assert_eq!(terminal.map(|t| t.to_string()), Some("T-1".to_owned()));

    let blank = SessionRequest {
        terminal_number: Some("  ".into()),
        ..start_request("R")
    };
    assert_eq!(accepted(&blank, START).terminal, None);

    let malformed = SessionRequest {
        terminal_number: Some("T 1; drop".into()),
        ..start_request("R")
    };
    refused_only_on(&malformed, START, "TerminalNumber");
}

// ---- payment link fields -------------------------------------------------------------------

#[test]
fn general_purchase_description_is_required_for_a_link_only() {
    accepted(&link_request("R"), LINK);
    for missing in [None, Some("  ".into())] {
        let request = SessionRequest {
            general_purchase_description: missing,
            ..link_request("R")
        };
        assert!(says_required(&refused_only_on(
            &request,
            LINK,
            "GeneralPurchaseDescription"
        )));
    }
    let start = start_request("R");
    assert_eq!(start.general_purchase_description, None);
    assert_eq!(accepted(&start, START).description, None);
}

/// Bidirectional overrides and other invisible format characters make text read differently
/// from what it holds ("Invoice \u{202E}fdp.exe" reads "Invoice exe.pdf"): refused in every
/// payer-facing text field, naming the field; ordinary non-Latin text and joiners pass.
#[test]
fn hidden_format_characters_are_refused_in_payer_facing_text() {
    let hidden = [
        '\u{202A}',
        '\u{202B}',
        '\u{202C}',
        '\u{202D}',
        '\u{202E}',
        '\u{2066}',
        '\u{2067}',
        '\u{2068}',
        '\u{2069}',
        '\u{200E}',
        '\u{200F}',
        '\u{061C}',
        '\u{200B}',
        '\u{2060}',
        '\u{FEFF}',
        '\u{E0041}',
    ];
    for c in hidden {
        let text = format!("Invoice {c}fdp.exe");
        let link = SessionRequest {
            general_purchase_description: Some(text.clone()),
            ..link_request("R")
        };
        let messages = refused_only_on(&link, LINK, "GeneralPurchaseDescription");
        assert!(messages[0].contains("invisible"), "{messages:?}");

        let mut with_item = start_request("R");
        with_item.items = vec![item("USD"), item("USD")];
        with_item.items[1].description = Some(text.clone());
        refused_only_on(&with_item, START, "Items[1].Description");

        let mut with_code = start_request("R");
        with_code.items = vec![item("USD")];
        with_code.items[0].item_code = Some(text.clone());
        refused_only_on(&with_code, START, "Items[0].ItemCode");

        let mut with_charge = start_request("R");
        with_charge.additional_charges = vec![charge("USD")];
        with_charge.additional_charges[0].charge_name = Some(text);
        refused_only_on(&with_charge, START, "AdditionalCharges[0].ChargeName");
    }
    for fine in [
        "Café y pan — pedido nº 7",
        "طلب رقم ٧",
        "\u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}",
        "Family \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}",
    ] {
        let link = SessionRequest {
            general_purchase_description: Some(fine.into()),
            ..link_request("R")
        };
        accepted(&link, LINK);
    }
}

#[test]
fn user_email_is_required_for_a_link_and_must_be_valid() {
    for ok in ["payer@example.com", "first.last+tag@mail.example.co.cr"] {
        let request = SessionRequest {
            user_email: Some(ok.into()),
            ..link_request("R")
        };
        let email = accepted(&request, LINK).email.unwrap();
        assert_eq!(email.as_str(), ok);
    }
    let missing = SessionRequest {
        user_email: None,
        ..link_request("R")
    };
    assert!(says_required(&refused_only_on(&missing, LINK, "UserEmail")));
    for bad in [
        "payer",
        "payer@",
        "@example.com",
        "payer@example",
        "pay er@example.com",
        "payer@@example.com",
    ] {
        let request = SessionRequest {
            user_email: Some(bad.into()),
            ..link_request("R")
        };
        refused_only_on(&request, LINK, "UserEmail");
    }
}

#[test]
fn user_email_is_optional_for_start_payment_but_checked_when_given() {
    assert_eq!(accepted(&start_request("R"), START).email, None);
    let given = SessionRequest {
        user_email: Some("payer@example.com".into()),
        ..start_request("R")
    };
    assert!(accepted(&given, START).email.is_some());
    let bad = SessionRequest {
        user_email: Some("not-an-email".into()),
        ..start_request("R")
    };
    refused_only_on(&bad, START, "UserEmail");
}

#[test]
fn culture_is_required_for_a_link_and_only_es_or_en() {
    for (ok, culture) in [("es", Culture::Es), ("en", Culture::En)] {
        let request = SessionRequest {
            culture: Some(ok.into()),
            ..link_request("R")
        };
        assert_eq!(accepted(&request, LINK).culture, Some(culture));
    }
    let missing = SessionRequest {
        culture: None,
        ..link_request("R")
    };
    assert!(says_required(&refused_only_on(&missing, LINK, "Culture")));
    for bad in ["fr", "pt", "ES", "En", "es-CR", "en-US", "english"] {
        let request = SessionRequest {
            culture: Some(bad.into()),
            ..link_request("R")
        };
        refused_only_on(&request, LINK, "Culture");
    }
}

#[test]
fn culture_is_optional_for_start_payment_but_only_es_or_en() {
    assert_eq!(accepted(&start_request("R"), START).culture, None);
    for (ok, culture) in [("es", Culture::Es), ("en", Culture::En)] {
        let request = SessionRequest {
            culture: Some(ok.into()),
            ..start_request("R")
        };
        assert_eq!(accepted(&request, START).culture, Some(culture));
    }
    for bad in ["fr", "EN", "es-CR"] {
        let request = SessionRequest {
            culture: Some(bad.into()),
            ..start_request("R")
        };
        refused_only_on(&request, START, "Culture");
    }
}

// ---- line items and charges ----------------------------------------------------------------

#[test]
fn item_currency_must_equal_the_request_currency() {
    let same = SessionRequest {
        items: vec![item("USD"), item("USD")],
        ..start_request("R")
    };
    assert_eq!(accepted(&same, START).items.len(), 2);

    let second_differs = SessionRequest {
        items: vec![item("USD"), item("CRC")],
        ..start_request("R")
    };
    let messages = refused_only_on(&second_differs, START, "Items[1].CurrencyCode");
    assert!(messages.iter().any(|m| m.contains("USD")), "{messages:?}");

    let first_differs = SessionRequest {
        items: vec![item("CRC")],
        ..link_request("R")
    };
    refused_only_on(&first_differs, LINK, "Items[0].CurrencyCode");

    let lower_case = SessionRequest {
        items: vec![item("usd")],
        ..start_request("R")
    };
    refused_only_on(&lower_case, START, "Items[0].CurrencyCode");
}

#[test]
fn charge_currency_must_equal_the_request_currency() {
    let same = SessionRequest {
        additional_charges: vec![charge("USD")],
        ..start_request("R")
    };
    assert_eq!(accepted(&same, START).charges.len(), 1);

    let differs = SessionRequest {
        additional_charges: vec![charge("CRC")],
        ..start_request("R")
    };
    let messages = refused_only_on(&differs, START, "AdditionalCharges[0].ChargeCurrencyCode");
    assert!(messages.iter().any(|m| m.contains("USD")), "{messages:?}");

    let second_differs = SessionRequest {
        additional_charges: vec![charge("USD"), charge("EUR")],
        ..link_request("R")
    };
    refused_only_on(
        &second_differs,
        LINK,
        "AdditionalCharges[1].ChargeCurrencyCode",
    );
}

#[test]
fn items_and_charges_may_be_left_out() {
    let request = SessionRequest {
        items: vec![],
        additional_charges: vec![],
        ..start_request("R")
    };
    let new = accepted(&request, START);
    assert!(new.items.is_empty());
    assert!(new.charges.is_empty());
}

#[test]
fn item_quantity_must_be_at_least_one() {
    for ok in [1, 2, 1000] {
        let mut it = item("USD");
        it.quantity = Some(ok);
        let request = SessionRequest {
            items: vec![it],
            ..start_request("R")
        };
        assert_eq!(accepted(&request, START).items[0].quantity, ok as u32);
    }
    for bad in [0, -1, -100] {
        let mut it = item("USD");
        it.quantity = Some(bad);
        let request = SessionRequest {
            items: vec![it],
            ..start_request("R")
        };
        refused_only_on(&request, START, "Items[0].Quantity");
    }
}

// ---- several errors ------------------------------------------------------------------------

#[test]
fn several_errors_are_reported_together() {
    let request = SessionRequest {
        callback_success_url: None,
        callback_fail_url: Some("ftp://merchant.example/fail".into()),
        total_transaction_amount: Some(d("0")),
        culture: Some("fr".into()),
        items: vec![item("USD"), item("CRC")],
        additional_charges: vec![charge("EUR")],
        ..start_request("R")
    };
    let errors = refused(&request, START);
    assert_eq!(
        keys(&errors),
        [
            "AdditionalCharges[0].ChargeCurrencyCode",
            "CallbackFailUrl",
            "CallbackSuccessUrl",
            "Culture",
            "Items[1].CurrencyCode",
            "TotalTransactionAmount",
        ]
    );
}

#[test]
fn an_unknown_currency_and_a_non_positive_amount_are_both_reported() {
    let request = SessionRequest {
        currency_code: Some("XXX".into()),
        total_transaction_amount: Some(d("-1")),
        items: vec![],
        additional_charges: vec![],
        ..link_request("R")
    };
    let errors = refused(&request, LINK);
    assert_eq!(keys(&errors), ["CurrencyCode", "TotalTransactionAmount"]);
}

fn with_metadata(pairs: &[(&str, Option<&str>)]) -> SessionRequest {
    SessionRequest {
        metadata: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
            .collect(),
        ..start_request("ORD-META")
    }
}

#[test]
fn metadata_within_stripes_limits_is_kept_as_sent_on_both_flows() {
    let key = "k".repeat(40);
    let value = "ñ".repeat(500);
    let new = accepted(
        &with_metadata(&[("orderId", Some("1001")), (&key, Some(&value))]),
        START,
    );
    let kept: Vec<(&str, &str)> = new.metadata.entries().collect();
    assert_eq!(kept, [(key.as_str(), value.as_str()), ("orderId", "1001")]);
    let link = SessionRequest {
        metadata: vec![("channel".into(), Some("email".into()))],
        ..link_request("ORD-META-L")
    };
    assert_eq!(accepted(&link, LINK).metadata.entries().count(), 1);
}

#[test]
fn a_metadata_pair_past_a_limit_is_refused_naming_its_key() {
    let long_key = "k".repeat(41);
    let cases = [
        (
            with_metadata(&[(&long_key, Some("v"))]),
            format!("Metadata[{long_key}]"),
        ),
        (
            with_metadata(&[("note", Some(&"v".repeat(501)))]),
            "Metadata[note]".to_owned(),
        ),
        (
            with_metadata(&[("count", None)]),
            "Metadata[count]".to_owned(),
        ),
        (
            with_metadata(&[("a[b]", Some("v"))]),
            "Metadata[a[b]]".to_owned(),
        ),
    ];
    for (request, field) in cases {
        let messages = refused_only_on(&request, START, &field);
        assert!(messages[0].starts_with(&field), "{messages:?}");
    }
    let keys: Vec<String> = (0..51).map(|i| format!("k{i}")).collect();
    let pairs: Vec<(&str, Option<&str>)> = keys.iter().map(|k| (k.as_str(), Some("v"))).collect();
    let messages = refused_only_on(&with_metadata(&pairs), START, "Metadata");
    assert_eq!(messages, ["Metadata may hold at most 50 keys."]);
}

#[test]
fn a_capture_method_is_automatic_or_manual() {
    for (given, expected) in [
        ("manual", CaptureMethod::Manual),
        ("automatic", CaptureMethod::Automatic),
    ] {
        let request = SessionRequest {
            capture_method: Some(given.into()),
            ..start_request("ORD-CM")
        };
        assert_eq!(accepted(&request, START).capture_method, Some(expected));
    }
    assert_eq!(
        accepted(&start_request("ORD-CM"), START).capture_method,
        None
    );
    let request = SessionRequest {
        capture_method: Some("later".into()),
        ..link_request("ORD-CM")
    };
    assert_eq!(
        refused_only_on(&request, LINK, "CaptureMethod"),
        ["CaptureMethod must be automatic or manual."]
    );
}
