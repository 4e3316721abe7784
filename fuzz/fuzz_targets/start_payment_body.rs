//! POST /pay/api/start-payment body: the JSON body parser, then the domain's validation.
//! A refusal names only known fields; an accepted request fits the schema and keeps the
//! amounts sent (see `checkout_fuzz::check_accepted`).
#![no_main]

use checkout_domain::session::SessionFlow;
use checkout_http::dto::StartPaymentRequest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    checkout_fuzz::check_session_body(
        data,
        SessionFlow::IntegratedCheckout,
        StartPaymentRequest::into_domain,
    );
});
