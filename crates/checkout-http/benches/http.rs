//! The HTTP layer's hot paths, without the network or the database:
//! `cargo bench -p checkout-http --bench http`.
//!
//! - `parse_validate/*`: a start-payment body from bytes to a validated `NewSession`, as the
//!   route does it (`parse_json`, `into_domain`, then the use case's `validate`);
//! - `problem/*`: an error turned into its `application/problem+json` answer
//!   (`ResponseError::error_response`, body serialised);
//! - `page/*`: the hosted checkout page rendered from the tera templates in `templates/`
//!   into an HTML answer with its security headers (`render::html`).

use std::hint::black_box;

use actix_web::http::StatusCode;
use actix_web::ResponseError;
use checkout_domain::session::SessionFlow;
use checkout_domain::values::CallbackRule;
use checkout_domain::{CheckoutError, SvcCode, ValidationErrors};
use checkout_http::dto::StartPaymentRequest;
use checkout_http::json_body::parse_json;
use checkout_http::pages::i18n::Lang;
use checkout_http::pages::render::{self, ChargeView, Frame, ItemView, PayView, PurchaseView};
use checkout_http::problem::ApiError;
use criterion::{criterion_group, criterion_main, Criterion};

/// The body `bench/start-payment.lua` sends: the README walk-through's, three callbacks,
/// USD 25.50, one line item.
const START_PAYMENT: &str = concat!(
    r#"{"callbackSuccessUrl":"https://merchant.example/ok","#,
    r#""callbackFailUrl":"https://merchant.example/fail","#,
    r#""callbackBackUrl":"https://merchant.example/cart","#,
    r#""totalTransactionAmount":25.50,"currencyCode":"USD","#,
    r#""transactionReferenceNumber":"ORDER-1763830000-12345","#,
    r#""generalPurchaseDescription":"Order ORDER-1763830000-12345","#,
    r#""items":[{"itemCode":"SKU-1","quantity":1,"description":"Blue mug","#,
    r#""amount":25.50,"currencyCode":"USD"}]}"#
);

/// Parses and validates `body` the way `POST /pay/api/start-payment` does.
fn parse_and_validate(body: &[u8]) -> bool {
    match parse_json::<StartPaymentRequest>(body) {
        Ok(request) => request
            .into_domain()
            .validate(SessionFlow::IntegratedCheckout, CallbackRule::HttpsOnly)
            .is_ok(),
        Err(_) => false,
    }
}

fn parse_validate(c: &mut Criterion) {
    // 100 items, the largest request the rules allow.
    let item = r#"{"itemCode":"SKU-1","quantity":1,"description":"Blue mug","amount":0.25,"currencyCode":"USD"}"#;
    let items = vec![item; checkout_domain::session::MAX_ITEMS].join(",");
    let largest = START_PAYMENT.replace(
        r#""items":[{"itemCode":"SKU-1","quantity":1,"description":"Blue mug","amount":25.50,"currencyCode":"USD"}]"#,
        &format!(r#""items":[{items}]"#),
    );
    // A body of the wrong shape: refused by the parser, naming the field.
    let wrong_type = START_PAYMENT.replace(r#""quantity":1"#, r#""quantity":"one""#);
    assert!(parse_and_validate(START_PAYMENT.as_bytes()));
    assert!(parse_and_validate(largest.as_bytes()));
    assert!(!parse_and_validate(wrong_type.as_bytes()));

    let mut group = c.benchmark_group("parse_validate");
    group.bench_function("start_payment", |b| {
        b.iter(|| parse_and_validate(black_box(START_PAYMENT.as_bytes())))
    });
    group.bench_function("start_payment_100_items", |b| {
        b.iter(|| parse_and_validate(black_box(largest.as_bytes())))
    });
    group.bench_function("wrong_type", |b| {
        b.iter(|| parse_and_validate(black_box(wrong_type.as_bytes())))
    });
    group.finish();
}

fn problem(c: &mut Criterion) {
    // A validation 400 with an errors dictionary of four fields.
    let mut errors = ValidationErrors::new();
    errors.add(
        "TotalTransactionAmount",
        "TotalTransactionAmount must be greater than 0.",
    );
    errors.add(
        "CurrencyCode",
        "CurrencyCode must be an ISO 4217 code the service supports.",
    );
    errors.add(
        "CallbackSuccessUrl",
        "CallbackSuccessUrl must be an absolute https URL.",
    );
    errors.add(
        "Items[0].Amount",
        "Items[0].Amount has a value of the wrong type or format.",
    );
    let validation = ApiError::from(errors);
    // An SVC 422: a duplicate merchant reference.
    let duplicate = ApiError::from(CheckoutError::svc(SvcCode::Svc001));
    assert_eq!(
        validation.error_response().status(),
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        duplicate.error_response().status(),
        StatusCode::UNPROCESSABLE_ENTITY
    );

    let mut group = c.benchmark_group("problem");
    group.bench_function("validation_400", |b| {
        b.iter(|| black_box(&validation).error_response())
    });
    group.bench_function("svc_001_422", |b| {
        b.iter(|| black_box(&duplicate).error_response())
    });
    group.finish();
}

/// The checkout page's view of the README's start-payment, with `items` line items.
fn pay_view(items: usize) -> PayView {
    let lang = Lang::En;
    PayView {
        title_prefix: None,
        frame: Frame::new(lang, ""),
        purchase: PurchaseView {
            merchant: "Bench Store".to_owned(),
            description: Some("Order ORDER-1763830000-12345".to_owned()),
            items: (0..items)
                .map(|_| ItemView {
                    code: "SKU-1".to_owned(),
                    description: "Blue mug".to_owned(),
                    quantity: 1,
                    unit_price: "$25.50".to_owned(),
                    line_total: "$25.50".to_owned(),
                })
                .collect(),
            charges: vec![ChargeView {
                name: "Shipping".to_owned(),
                amount: "5.00".to_owned(),
            }],
            total: "25.50".to_owned(),
            currency: "USD",
            reference: "ORDER-1763830000-12345".to_owned(),
            expires: None,
        },
        session_id: "0b6d2c47-3f1e-4a8b-9c5d-7e2f1a0b3c4d".to_owned(),
        csrf: "q5kQ1l0m3v8c2Yt7Zb9xW4nR6sJ1uH0aE3dF5gK7pLw".to_owned(),
        can_cancel: true,
        errors: Default::default(),
        summary: Vec::new(),
        banner: None,
        holder: String::new(),
        expiry: String::new(),
        proof: None,
    }
}

fn page(c: &mut Criterion) {
    let tera = match render::templates() {
        Ok(tera) => tera,
        Err(e) => panic!("the templates do not compile: {e:#}"),
    };
    let csp = render::content_security_policy(&["https://merchant.example".to_owned()]);
    let one = pay_view(1);
    let hundred = pay_view(checkout_domain::session::MAX_ITEMS);
    let ok = render::html(&tera, StatusCode::OK, "pay.html", &one, &csp);
    assert_eq!(ok.status(), StatusCode::OK);

    let mut group = c.benchmark_group("page");
    group.bench_function("checkout_1_item", |b| {
        b.iter(|| render::html(&tera, StatusCode::OK, "pay.html", black_box(&one), &csp))
    });
    group.bench_function("checkout_100_items", |b| {
        b.iter(|| render::html(&tera, StatusCode::OK, "pay.html", black_box(&hundred), &csp))
    });
    group.finish();
}

// criterion_group! defines an undocumented `pub fn benches`.
#[allow(missing_docs)]
mod group {
    use super::*;
    criterion_group!(benches, parse_validate, problem, page);
}
criterion_main!(group::benches);
