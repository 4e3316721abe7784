//! The service error table of spec section 7.2, SVC_001..SVC_011, as a merchant reads it:
//! each code answers with exactly the spec's HTTP status, title, message and advice.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use std::collections::HashSet;

use checkout_domain::{CheckoutError, SvcCode};

/// One row of the spec's table: code, HTTP, title, message, recommended action.
type Row = (&'static str, u16, &'static str, &'static str, &'static str);

/// Spec section 7.2, copied literally.
const SPEC_TABLE: [Row; 11] = [
    (
        "SVC_001",
        422,
        "Payment session already exists",
        "The payment session already exists.",
        "use a new transactionReferenceNumber or query the existing session",
    ),
    (
        "SVC_002",
        422,
        "Payment session does not exist",
        "The payment session does not exist.",
        "verify checkoutSessionId; the link may be invalid or expired",
    ),
    (
        "SVC_003",
        422,
        "Card processor API communication error",
        "Communication error with card processor API.",
        "retry; contact support if persistent",
    ),
    (
        "SVC_004",
        422,
        "Card processor controlled error",
        "Controlled error from card processor.",
        "review the processor message and adjust the request",
    ),
    (
        "SVC_005",
        422,
        "Terminal not registered",
        "Payment terminal not registered in the system.",
        "verify terminal provisioning",
    ),
    (
        "SVC_006",
        422,
        "Transaction declined",
        "Transaction declined by processor.",
        "ask the payer to use another card or contact the issuer",
    ),
    (
        "SVC_007",
        404,
        "Payment not found",
        "Specified payment not found.",
        "confirm checkoutSessionId and environment",
    ),
    (
        "SVC_008",
        422,
        "Payment cannot be reversed",
        "Payment not in reversible state.",
        "reversal flows are outside the public checkout API v1",
    ),
    (
        "SVC_009",
        422,
        "Reversal processor error",
        "Error during reversal.",
        "outside the public checkout API v1",
    ),
    (
        "SVC_010",
        200,
        "Reversal successful",
        "Reversal completed.",
        "outside the public checkout API v1",
    ),
    (
        "SVC_011",
        422,
        "Settled or amount mismatch",
        "Cannot reverse settled transaction.",
        "outside the public checkout API v1",
    ),
];

/// The spec row of `wire` (e.g. `SVC_006`).
fn spec_row(wire: &str) -> Row {
    *SPEC_TABLE
        .iter()
        .find(|row| row.0 == wire)
        .unwrap_or_else(|| panic!("{wire} is not in the spec table"))
}

/// Asserts that `code` is written `wire` and answers exactly as the spec's row says.
fn assert_matches_spec(code: SvcCode, wire: &str) {
    let (spec_code, http, title, message, action) = spec_row(wire);
    let actual = code.spec();
    assert_eq!(actual.code, spec_code, "{code:?}: wire code");
    assert_eq!(code.code(), spec_code, "{code:?}: code()");
    assert_eq!(code.to_string(), spec_code, "{code:?}: Display");
    assert_eq!(actual.http_status, http, "{wire}: HTTP status");
    assert_eq!(actual.title, title, "{wire}: title");
    assert_eq!(actual.message, message, "{wire}: message");
    assert_eq!(
        actual.recommended_action, action,
        "{wire}: recommended action"
    );
}

#[test]
fn svc_001_duplicate_session_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc001, "SVC_001");
}

#[test]
fn svc_002_unknown_or_expired_session_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc002, "SVC_002");
}

#[test]
fn svc_003_processor_communication_error_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc003, "SVC_003");
}

#[test]
fn svc_004_processor_controlled_error_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc004, "SVC_004");
}

#[test]
fn svc_005_terminal_not_registered_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc005, "SVC_005");
}

#[test]
fn svc_006_declined_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc006, "SVC_006");
}

#[test]
fn svc_007_payment_not_found_is_404_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc007, "SVC_007");
}

#[test]
fn svc_008_not_reversible_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc008, "SVC_008");
}

#[test]
fn svc_009_reversal_processor_error_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc009, "SVC_009");
}

#[test]
fn svc_010_reversal_successful_is_200_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc010, "SVC_010");
}

#[test]
fn svc_011_settled_or_mismatch_is_422_with_the_spec_wording() {
    assert_matches_spec(SvcCode::Svc011, "SVC_011");
}

#[test]
fn the_whole_table_equals_the_spec_in_order_and_nothing_more() {
    assert_eq!(SvcCode::ALL.len(), SPEC_TABLE.len());
    for (code, expected) in SvcCode::ALL.into_iter().zip(SPEC_TABLE) {
        let s = code.spec();
        let actual: Row = (
            s.code,
            s.http_status,
            s.title,
            s.message,
            s.recommended_action,
        );
        assert_eq!(actual, expected, "{code:?}");
    }
}

#[test]
fn every_code_round_trips_through_parse() {
    for code in SvcCode::ALL {
        assert_eq!(SvcCode::parse(code.code()), Some(code), "{code:?}");
        assert_eq!(SvcCode::parse(&code.to_string()), Some(code), "{code:?}");
    }
    for (wire, ..) in SPEC_TABLE {
        let code = SvcCode::parse(wire).unwrap_or_else(|| panic!("{wire} does not parse"));
        assert_eq!(code.code(), wire);
    }
}

#[test]
fn parse_refuses_anything_that_is_not_an_exact_wire_code() {
    for wire in [
        "", "SVC_000", "SVC_012", "SVC_1", "SVC_0001", "svc_001", "Svc_001", "SVC-001", "SVC001",
        " SVC_001", "SVC_001 ", "001",
    ] {
        assert_eq!(SvcCode::parse(wire), None, "{wire:?} must not parse");
    }
}

#[test]
fn no_two_codes_share_a_wire_code_title_or_message() {
    let codes: HashSet<_> = SvcCode::ALL.iter().map(|c| c.spec().code).collect();
    let titles: HashSet<_> = SvcCode::ALL.iter().map(|c| c.spec().title).collect();
    let messages: HashSet<_> = SvcCode::ALL.iter().map(|c| c.spec().message).collect();
    assert_eq!(codes.len(), 11, "wire codes repeat");
    assert_eq!(titles.len(), 11, "titles repeat");
    assert_eq!(messages.len(), 11, "messages repeat");
}

#[test]
fn only_svc_007_is_a_404_and_only_svc_010_is_a_200() {
    for code in SvcCode::ALL {
        let expected = match code {
            SvcCode::Svc007 => 404,
            SvcCode::Svc010 => 200,
            _ => 422,
        };
        assert_eq!(code.spec().http_status, expected, "{code}");
    }
}

#[test]
fn a_service_error_carries_its_code_and_by_default_the_spec_message() {
    for code in SvcCode::ALL {
        let error = CheckoutError::svc(code);
        assert_eq!(error.svc_code(), Some(code));
        match &error {
            CheckoutError::Service { detail, .. } => assert_eq!(detail, code.spec().message),
            other => panic!("{other:?}"),
        }
        let shown = error.to_string();
        assert!(shown.starts_with(code.code()), "{shown}");
    }
    let specific = CheckoutError::svc_with(SvcCode::Svc002, "The payment session has expired.");
    assert_eq!(specific.svc_code(), Some(SvcCode::Svc002));
    assert_eq!(
        specific.to_string(),
        "SVC_002: The payment session has expired."
    );
}
