//! The lookup of a terminal's sessions by merchant reference, through `TestKit`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use crate::support::start;
use checkout_domain::ports::SessionRepository;
use checkout_domain::session::SessionState;
use checkout_domain::testing::TestKit;
use checkout_domain::values::SessionId;
use checkout_domain::CheckoutError;
use time::Duration;

#[tokio::test]
async fn a_lookup_lists_an_expired_session_and_its_successor_newest_first() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let (old, successor) = crate::support::expired_link_and_successor(&kit, "REF-L").await;
    start(&kit, "REF-OTHER").await;

    let found = kit
        .checkout
        .payments_by_reference(&caller, Some("REF-L"))
        .await
        .unwrap();
    let ids: Vec<SessionId> = found.iter().map(|s| s.id()).collect();
    assert_eq!(ids, [successor.session.id(), old.session.id()]);
    assert_eq!(found[0].state(), SessionState::Pending);
    assert_eq!(found[1].state(), SessionState::Expired);
    // The reference is trimmed like the create request's.
    let trimmed = kit
        .checkout
        .payments_by_reference(&caller, Some("  REF-L "))
        .await
        .unwrap();
    assert_eq!(trimmed.len(), 2);
}

#[tokio::test]
async fn a_lookup_writes_a_passed_expiry_like_the_status_route() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let session = start(&kit, "REF-LAZY").await;
    kit.clock.advance(Duration::hours(2));
    let found = kit
        .checkout
        .payments_by_reference(&caller, Some("REF-LAZY"))
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].state(), SessionState::Expired);
    let stored = kit.sessions.get(session.id()).await.unwrap().unwrap();
    assert_eq!(stored.state(), SessionState::Expired);
}

#[tokio::test]
async fn a_lookup_never_shows_another_terminals_sessions() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    start(&kit, "REF-MINE").await;
    let theirs = kit
        .checkout
        .payments_by_reference(&kit.caller("T-2"), Some("REF-MINE"))
        .await
        .unwrap();
    assert!(theirs.is_empty());
    let unknown = kit
        .checkout
        .payments_by_reference(&kit.caller("T-1"), Some("REF-NONE"))
        .await
        .unwrap();
    assert!(unknown.is_empty());
}

#[tokio::test]
async fn a_missing_or_invalid_reference_is_a_validation_error() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let too_long = "R".repeat(65);
    for (value, message) in [
        (None, "The TransactionReferenceNumber field is required."),
        (
            Some("   "),
            "The TransactionReferenceNumber field is required.",
        ),
        (
            Some(too_long.as_str()),
            "TransactionReferenceNumber must be at most 64 characters long.",
        ),
        (
            Some("caf\u{e9}"),
            "TransactionReferenceNumber contains characters that are not allowed.",
        ),
    ] {
        match kit.checkout.payments_by_reference(&caller, value).await {
            Err(CheckoutError::Validation(errors)) => {
                assert_eq!(
                    errors.messages("TransactionReferenceNumber"),
                    Some(&[message.to_owned()][..]),
                    "{value:?}"
                );
                assert_eq!(errors.fields().len(), 1);
            }
            other => panic!("{value:?}: expected a validation error, got {other:?}"),
        }
    }
}
