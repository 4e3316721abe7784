//! `SessionRequest::validate`, the field rules every start-payment and payment-link request
//! goes through before the database: `cargo bench -p checkout-domain --bench validate`.

use std::hint::black_box;

use checkout_domain::session::{ChargeRequest, ItemRequest, SessionFlow, SessionRequest};
use checkout_domain::values::CallbackRule;
use criterion::{criterion_group, criterion_main, Criterion};
use rust_decimal::Decimal;

/// `units / 100` as an exact decimal.
fn cents(units: i64) -> Decimal {
    Decimal::new(units, 2)
}

fn item(amount: i64) -> ItemRequest {
    ItemRequest {
        item_code: Some("SKU-1".into()),
        quantity: Some(1),
        description: Some("Blue mug".into()),
        amount: Some(cents(amount)),
        currency_code: Some("USD".into()),
    }
}

/// The README walk-through's start-payment body: three callbacks, USD 25.50, one line item
/// (the body that `bench/start-payment.lua` sends).
fn start_payment() -> SessionRequest {
    SessionRequest {
        callback_success_url: Some("https://merchant.example/ok".into()),
        callback_fail_url: Some("https://merchant.example/fail".into()),
        callback_back_url: Some("https://merchant.example/cart".into()),
        total_transaction_amount: Some(cents(2550)),
        currency_code: Some("USD".into()),
        terminal_number: None,
        transaction_reference_number: Some("ORDER-1763830000-12345".into()),
        general_purchase_description: Some("Order ORDER-1763830000-12345".into()),
        user_email: None,
        culture: None,
        additional_charges: Vec::new(),
        items: vec![item(2550)],
        expiration_date_time: None,
        metadata: Vec::new(),
        capture_method: None,
    }
}

/// The largest request the rules allow: 100 line items and 20 additional charges.
fn start_payment_largest() -> SessionRequest {
    SessionRequest {
        items: (0..checkout_domain::session::MAX_ITEMS)
            .map(|_| item(100))
            .collect(),
        additional_charges: (0..checkout_domain::session::MAX_CHARGES)
            .map(|_| ChargeRequest {
                charge_name: Some("Shipping".into()),
                charge_amount: Some(cents(500)),
                charge_currency_code: Some("USD".into()),
            })
            .collect(),
        ..start_payment()
    }
}

/// The README's payment link: CRC 15000, description, email and culture.
fn payment_link() -> SessionRequest {
    SessionRequest {
        callback_success_url: None,
        callback_fail_url: None,
        callback_back_url: None,
        total_transaction_amount: Some(Decimal::new(15000, 0)),
        currency_code: Some("CRC".into()),
        general_purchase_description: Some("Invoice ORDER-1763830000-12345".into()),
        user_email: Some("payer@example.com".into()),
        culture: Some("es".into()),
        items: Vec::new(),
        ..start_payment()
    }
}

/// Every field wrong at once: the refusal path, which formats one message per field.
fn all_wrong() -> SessionRequest {
    SessionRequest {
        callback_success_url: Some("not a url".into()),
        callback_fail_url: Some("ftp://merchant.example/fail".into()),
        callback_back_url: Some("http://merchant.example/cart".into()),
        total_transaction_amount: Some(cents(-1)),
        currency_code: Some("usd".into()),
        terminal_number: Some(String::new()),
        transaction_reference_number: Some("x".repeat(65)),
        general_purchase_description: Some("\u{7}".into()),
        user_email: Some("nobody".into()),
        culture: Some("fr".into()),
        additional_charges: Vec::new(),
        items: vec![ItemRequest::default()],
        expiration_date_time: None,
        metadata: Vec::new(),
        capture_method: None,
    }
}

fn validate(c: &mut Criterion) {
    let rule = CallbackRule::HttpsOnly;
    let mut group = c.benchmark_group("validate");
    for (name, request, flow) in [
        (
            "start_payment",
            start_payment(),
            SessionFlow::IntegratedCheckout,
        ),
        (
            "start_payment_100_items_20_charges",
            start_payment_largest(),
            SessionFlow::IntegratedCheckout,
        ),
        ("payment_link", payment_link(), SessionFlow::PaymentLink),
        (
            "refused_every_field",
            all_wrong(),
            SessionFlow::IntegratedCheckout,
        ),
    ] {
        // A benchmark of the wrong path would measure nothing useful.
        let accepted = request.validate(flow, rule).is_ok();
        assert_eq!(accepted, name != "refused_every_field", "{name}");
        group.bench_function(name, |b| {
            b.iter(|| black_box(&request).validate(black_box(flow), rule))
        });
    }
    group.finish();
}

// criterion_group! defines an undocumented `pub fn benches`.
#[allow(missing_docs)]
mod group {
    use super::*;
    criterion_group!(benches, validate);
}
criterion_main!(group::benches);
