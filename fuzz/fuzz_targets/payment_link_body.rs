//! POST /pay/api/generate-payment-link body: the JSON body parser, then the domain's
//! validation. Besides the start-payment properties: a body start payment accepts is
//! accepted here too (the link request has no fields of its own).
#![no_main]

use checkout_domain::session::SessionFlow;
use checkout_http::dto::{PaymentLinkRequest, StartPaymentRequest};
use checkout_http::json_body::parse_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    checkout_fuzz::check_session_body(
        data,
        SessionFlow::PaymentLink,
        PaymentLinkRequest::into_domain,
    );
    if parse_json::<StartPaymentRequest>(data).is_ok() {
        assert!(
            parse_json::<PaymentLinkRequest>(data).is_ok(),
            "a start-payment body that the link parser refuses"
        );
    }
});
