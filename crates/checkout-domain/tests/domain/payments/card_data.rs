//! What an attempt may keep of a card, and what card data may print.

use crate::*;

#[tokio::test]
async fn an_attempt_keeps_only_the_brand_and_the_last_four_digits() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "declined".into(),
    }));
    let outcome = pay(&kit, session.id()).await;
    let attempts = kit.sessions.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].card_brand, CardBrand::Visa);
    assert_eq!(attempts[0].card_last4, CARD_LAST4);
    assert_no_card_secrets(&format!("{attempts:?}"));
    assert_no_card_secrets(&format!("{outcome:?}"));
    let page = kit
        .checkout
        .open_page(session.id(), SessionFlow::IntegratedCheckout)
        .await
        .unwrap();
    assert_no_card_secrets(&format!("{page:?}"));
}

#[test]
fn card_data_never_prints_its_secret_parts() {
    let input = card_input();
    let details = card(time::macros::datetime!(2026-01-15 12:00 UTC));
    assert_no_card_secrets(&format!("{input:?}"));
    assert_no_card_secrets(&format!("{details:?}"));
    assert_no_card_secrets(&format!("{:?}", details.number));
    assert_no_card_secrets(&format!("{}", details.number));
    assert_no_card_secrets(&format!("{:?}", details.cvv));
    assert_no_card_secrets(&format!("{:?}", details.expiry));
    assert_no_card_secrets(&format!("{:?}", details.holder));
    assert_eq!(details.number.to_string(), format!("**** {CARD_LAST4}"));
    // the parts are still there for the one processor call
    assert_eq!(details.number.expose_digits(), CARD_DIGITS);
    assert_eq!(details.cvv.expose_digits(), CARD_CVV);
    assert_eq!((details.expiry.month(), details.expiry.year()), (7, 2031));
}
