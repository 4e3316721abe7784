//! Builders shared by the domain test files: valid requests of both flows, decimals, cards,
//! and the two steps most tests take through `TestKit` (start a checkout, pay it).

use checkout_domain::card::{CardDetails, CardInput};
use checkout_domain::ports::AttemptLedger;
use checkout_domain::session::{
    ChargeRequest, ItemRequest, PaymentAttempt, PaymentSession, SessionRequest,
};
use checkout_domain::testing::TestKit;
use checkout_domain::usecases::{PaymentLink, PaymentOutcome};
use checkout_domain::values::SessionId;
use time::OffsetDateTime;

pub const SUCCESS_URL: &str = "https://merchant.example/checkout/ok";
pub const FAIL_URL: &str = "https://merchant.example/checkout/fail";
pub const BACK_URL: &str = "https://merchant.example/cart";

/// A decimal written as text (the shared builder, by its short name here).
pub use checkout_domain::testing::builders::decimal as d;

/// A valid start-payment request for 25.00 USD with one item and one charge, no back URL.
pub fn start_request(reference: &str) -> SessionRequest {
    SessionRequest {
        callback_success_url: Some(SUCCESS_URL.into()),
        callback_fail_url: Some(FAIL_URL.into()),
        callback_back_url: None,
        total_transaction_amount: Some(d("25.00")),
        currency_code: Some("USD".into()),
        terminal_number: None,
        transaction_reference_number: Some(reference.into()),
        general_purchase_description: None,
        user_email: None,
        culture: None,
        additional_charges: vec![charge("USD")],
        items: vec![item("USD")],
        expiration_date_time: None,
        metadata: Vec::new(),
        capture_method: None,
    }
}

/// A valid generate-payment-link request for 25.00 USD.
pub fn link_request(reference: &str) -> SessionRequest {
    SessionRequest {
        callback_success_url: None,
        callback_fail_url: None,
        callback_back_url: None,
        general_purchase_description: Some("Order 1001: two mugs".into()),
        user_email: Some("payer@example.com".into()),
        culture: Some("es".into()),
        ..start_request(reference)
    }
}

/// A line item of 10.00 in `currency`, quantity 2.
pub fn item(currency: &str) -> ItemRequest {
    ItemRequest {
        item_code: Some("MUG-01".into()),
        quantity: Some(2),
        description: Some("Mug".into()),
        amount: Some(d("10.00")),
        currency_code: Some(currency.into()),
    }
}

/// A shipping charge of 5.00 in `currency`.
pub fn charge(currency: &str) -> ChargeRequest {
    ChargeRequest {
        charge_name: Some("Shipping".into()),
        charge_amount: Some(d("5.00")),
        charge_currency_code: Some(currency.into()),
    }
}

/// A Visa card whose full number, CVV and expiry appear nowhere but here.
pub const CARD_NUMBER: &str = "4000 0566 5566 5556";
pub const CARD_DIGITS: &str = "4000056655665556";
pub const CARD_LAST4: &str = "5556";
pub const CARD_CVV: &str = "839";
pub const CARD_EXPIRY: &str = "07/31";
pub const CARD_HOLDER: &str = "Ada Lovelace";

/// The card form as the payer fills it.
pub fn card_input() -> CardInput {
    CardInput {
        cardholder_name: CARD_HOLDER.into(),
        card_number: CARD_NUMBER.into(),
        expiry: CARD_EXPIRY.into(),
        cvv: CARD_CVV.into(),
    }
}

/// The checked card at `now`.
pub fn card(now: OffsetDateTime) -> CardDetails {
    card_input().validate(now).expect("the test card is valid")
}

/// Starts an integrated checkout on terminal `T-1` with `reference`.
pub async fn start(kit: &TestKit, reference: &str) -> PaymentSession {
    kit.checkout
        .start_payment(&kit.caller("T-1"), &start_request(reference))
        .await
        .expect("start payment")
}

/// Pays session `id` with the test card, which passes the form checks.
pub async fn pay(kit: &TestKit, id: SessionId) -> PaymentOutcome {
    let post = kit
        .checkout
        .process_payment(id, &card_input())
        .await
        .expect("process payment");
    PaymentOutcome {
        session: post.page.session,
        result: post.result.expect("the card passes the checks"),
    }
}

/// The newest card attempt of session `id` (there must be one).
pub async fn latest_attempt(kit: &TestKit, id: SessionId) -> PaymentAttempt {
    kit.sessions
        .latest_attempt(id)
        .await
        .unwrap()
        .expect("the session has an attempt")
}

/// A payment link of `T-1` under `reference` left to expire, and the link created after it
/// under the same reference.
pub async fn expired_link_and_successor(
    kit: &TestKit,
    reference: &str,
) -> (PaymentLink, PaymentLink) {
    let caller = kit.caller("T-1");
    let old = kit
        .checkout
        .generate_payment_link(&caller, &link_request(reference))
        .await
        .unwrap();
    kit.clock
        .advance(checkout_domain::testing::TEST_LINK_VALIDITY + time::Duration::seconds(1));
    let successor = kit
        .checkout
        .generate_payment_link(&caller, &link_request(reference))
        .await
        .unwrap();
    (old, successor)
}
