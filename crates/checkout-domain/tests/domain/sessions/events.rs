//! The merchant event feed through `TestKit`: one event per change into a reported state,
//! whichever use case or sweep made it, and paging by cursor.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{pay, start};
use checkout_domain::events::EventType;
use checkout_domain::ports::ProcessorOutcome;
use checkout_domain::testing::{TestKit, TEST_CHECKOUT_VALIDITY};
use time::Duration;

#[tokio::test]
async fn every_reported_change_is_an_event_in_order_and_pages_by_cursor() {
    let kit = TestKit::new();
    let paid = start(&kit, "PAID").await;
    pay(&kit, paid.id()).await;
    let declined = start(&kit, "DECLINED").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "card declined".into(),
    }));
    pay(&kit, declined.id()).await;
    let cancelled = start(&kit, "CANCELLED").await;
    kit.checkout.cancel_payment(cancelled.id()).await.unwrap();
    let left = start(&kit, "LEFT").await;
    kit.clock
        .advance(TEST_CHECKOUT_VALIDITY + Duration::minutes(1));
    kit.checkout.expire_due_sessions().await.unwrap();

    let caller = kit.caller("T-1");
    let page = kit.checkout.list_events(&caller, None, 100).await.unwrap();
    let seen: Vec<_> = page
        .events
        .iter()
        .map(|e| (e.session.id(), e.kind))
        .collect();
    assert_eq!(
        seen,
        [
            (paid.id(), EventType::PaymentSucceeded),
            (declined.id(), EventType::PaymentFailed),
            (declined.id(), EventType::PaymentAttemptFailed),
            (cancelled.id(), EventType::PaymentCancelled),
            (left.id(), EventType::PaymentExpired),
        ]
    );
    assert!(!page.has_more);

    let first = kit.checkout.list_events(&caller, None, 4).await.unwrap();
    assert_eq!((first.events.len(), first.has_more), (4, true));
    let rest = kit
        .checkout
        .list_events(&caller, first.cursor, 4)
        .await
        .unwrap();
    assert_eq!(rest.events.len(), 1);
    assert_eq!(
        rest.events[0].id, page.events[4].id,
        "the same id on every read"
    );
    let none = kit
        .checkout
        .list_events(&caller, rest.cursor, 3)
        .await
        .unwrap();
    assert!(none.events.is_empty());
    assert_eq!(none.cursor, rest.cursor);

    kit.add_terminal("T-2", true);
    let other = kit
        .checkout
        .list_events(&kit.caller("T-2"), None, 100)
        .await
        .unwrap();
    assert!(other.events.is_empty(), "another terminal sees none");
}
