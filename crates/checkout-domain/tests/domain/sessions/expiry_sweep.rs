//! The expiry sweep.

use crate::*;

#[tokio::test]
async fn the_expiry_sweep_expires_due_sessions_and_cancels_due_challenges_first() {
    let kit = TestKit::new();
    let checkout_pending = start(&kit, "A").await; // due after 1 h
    let link_pending = link(&kit, "B").await.session; // due after 24 h
    let paid = start(&kit, "C").await;
    pay(&kit, paid.id()).await;
    let challenged = start(&kit, "D").await;
    push_challenge(&kit, None);
    pay(&kit, challenged.id()).await;

    let report = kit.checkout.expire_due_sessions().await.unwrap();
    assert_eq!(
        (report.expired, report.challenges_examined),
        (0, 0),
        "nothing due"
    );

    kit.clock.advance(Duration::hours(2));
    let report = kit.checkout.expire_due_sessions().await.unwrap();
    assert_eq!(report.expired, 1);
    assert_eq!(report.challenges_expired, 1);
    assert_eq!(
        kit.processor.cancel_calls(),
        1,
        "the challenge is cancelled first"
    );
    assert_eq!(
        stored_state(&kit, checkout_pending.id()).await,
        SessionState::Expired
    );
    assert_eq!(
        stored_state(&kit, link_pending.id()).await,
        SessionState::Pending
    );
    assert_eq!(
        stored_state(&kit, paid.id()).await,
        SessionState::Successful
    );
    assert_eq!(
        stored_state(&kit, challenged.id()).await,
        SessionState::Expired
    );
    let report = kit.checkout.expire_due_sessions().await.unwrap();
    assert_eq!(
        (report.expired, report.challenges_examined),
        (0, 0),
        "idempotent"
    );

    kit.clock.advance(Duration::hours(23));
    assert_eq!(kit.checkout.expire_due_sessions().await.unwrap().expired, 1);
    assert_eq!(
        stored_state(&kit, link_pending.id()).await,
        SessionState::Expired
    );
}
