//! `IdempotencyStore` on PostgreSQL: claims, saved responses, releases, lapsed and forgotten
//! records, terminals kept apart, and racing claims of one key.

use checkout_domain::ports::{
    Claim, ClaimTimes, ClaimToken, HeldKey, IdempotencyStore, SavedResponse,
};
use checkout_domain::values::{IdempotencyKey, RequestFingerprint};
use checkout_postgres::PgStore;
use time::{Duration, OffsetDateTime};
use tokio::task::JoinSet;

use crate::support::*;

fn key(s: &str) -> IdempotencyKey {
    IdempotencyKey::parse(s).unwrap()
}

fn fingerprint(n: u8) -> RequestFingerprint {
    RequestFingerprint::from_bytes([n; 32])
}

/// The times of a claim made `now`, with a 60 s lease and a 24 h window.
fn times(now: OffsetDateTime) -> ClaimTimes {
    ClaimTimes {
        now,
        lease_until: now + Duration::seconds(60),
        forget_before: now - Duration::hours(24),
    }
}

fn response(status: u16, body: &[u8]) -> SavedResponse {
    SavedResponse {
        status,
        content_type: "application/json".to_owned(),
        body: body.to_vec(),
    }
}

async fn claim(store: &PgStore, t: &str, k: &str, n: u8, now: OffsetDateTime) -> Claim {
    store
        .claim(&terminal(t), &key(k), &fingerprint(n), times(now))
        .await
        .unwrap()
}

fn token(claim: Claim) -> ClaimToken {
    match claim {
        Claim::Claimed(token) => token,
        Claim::Held(held) => panic!("expected to claim the key, found it held: {held:?}"),
    }
}

fn held(claim: Claim) -> HeldKey {
    match claim {
        Claim::Held(held) => held,
        Claim::Claimed(_) => panic!("expected the key held, claimed it"),
    }
}

#[tokio::test]
async fn a_claimed_key_is_held_until_its_response_is_saved_then_replays_it() {
    let (_db, store) = database().await;
    let first = token(claim(&store, "T-1", "k-1", 1, at(0)).await);

    let running = held(claim(&store, "T-1", "k-1", 1, at(1)).await);
    assert_eq!(running.fingerprint, fingerprint(1));
    assert_eq!(running.response, None);
    // Another fingerprint sees the same record (the use case calls it a reuse).
    assert_eq!(
        held(claim(&store, "T-1", "k-1", 2, at(1)).await).fingerprint,
        fingerprint(1)
    );

    // Exact bytes, whatever they are.
    let saved = response(201, b"{\"a\":1}\xff\x00");
    assert!(store
        .complete(&terminal("T-1"), &key("k-1"), first, &saved, at(2))
        .await
        .unwrap());
    let done = held(claim(&store, "T-1", "k-1", 1, at(3)).await);
    assert_eq!(done.response, Some(saved.clone()));
    assert_eq!(done.fingerprint, fingerprint(1));

    // A saved response is never overwritten or released.
    assert!(!store
        .complete(
            &terminal("T-1"),
            &key("k-1"),
            first,
            &response(200, b"x"),
            at(4)
        )
        .await
        .unwrap());
    store
        .release(&terminal("T-1"), &key("k-1"), first)
        .await
        .unwrap();
    assert_eq!(
        held(claim(&store, "T-1", "k-1", 1, at(5)).await).response,
        Some(saved)
    );
}

#[tokio::test]
async fn a_released_key_is_free_and_only_its_claim_may_release_it() {
    let (_db, store) = database().await;
    let first = token(claim(&store, "T-1", "k", 1, at(0)).await);
    let stranger = ClaimToken::from_uuid(uuid::Uuid::from_u128(42));
    store
        .release(&terminal("T-1"), &key("k"), stranger)
        .await
        .unwrap();
    held(claim(&store, "T-1", "k", 1, at(1)).await);

    store
        .release(&terminal("T-1"), &key("k"), first)
        .await
        .unwrap();
    let second = token(claim(&store, "T-1", "k", 2, at(2)).await);
    assert_ne!(second, first);
}

#[tokio::test]
async fn a_claim_whose_lease_ended_without_a_response_is_taken_over() {
    let (_db, store) = database().await;
    let dead = token(claim(&store, "T-1", "k", 1, at(0)).await);
    let lease_end = at(0) + Duration::seconds(60);
    held(claim(&store, "T-1", "k", 1, lease_end - Duration::microseconds(1)).await);

    let next = token(claim(&store, "T-1", "k", 1, lease_end).await);
    assert_ne!(next, dead);
    // The dead claim can neither save nor release any more.
    assert!(!store
        .complete(
            &terminal("T-1"),
            &key("k"),
            dead,
            &response(200, b"late"),
            lease_end
        )
        .await
        .unwrap());
    store
        .release(&terminal("T-1"), &key("k"), dead)
        .await
        .unwrap();
    assert!(store
        .complete(
            &terminal("T-1"),
            &key("k"),
            next,
            &response(200, b"ok"),
            lease_end
        )
        .await
        .unwrap());
}

#[tokio::test]
async fn a_record_older_than_the_window_is_forgotten() {
    let (db, store) = database().await;
    let first = token(claim(&store, "T-1", "k", 1, at(0)).await);
    assert!(store
        .complete(
            &terminal("T-1"),
            &key("k"),
            first,
            &response(200, b"old"),
            at(1)
        )
        .await
        .unwrap());
    let day = Duration::hours(24);
    held(
        claim(
            &store,
            "T-1",
            "k",
            2,
            at(0) + day - Duration::microseconds(1),
        )
        .await,
    );
    // At 24 hours the record is forgotten: a claim takes it, even with another request.
    let again = token(claim(&store, "T-1", "k", 2, at(0) + day).await);
    assert_ne!(again, first);
    assert_eq!(
        held(claim(&store, "T-1", "k", 2, at(0) + day).await).response,
        None
    );

    // The sweep deletes what is past the window, and only that.
    token(claim(&store, "T-2", "other", 1, at(0)).await);
    assert_eq!(store.forget_before(at(0)).await.unwrap(), 1);
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM idempotency_keys").await,
        1
    );
    assert_eq!(store.forget_before(at(0) + day).await.unwrap(), 1);
    assert_eq!(
        count(&db, "SELECT count(*) AS n FROM idempotency_keys").await,
        0
    );
}

#[tokio::test]
async fn terminals_are_kept_apart() {
    let (_db, store) = database().await;
    let mine = token(claim(&store, "T-1", "shared", 1, at(0)).await);
    assert!(store
        .complete(
            &terminal("T-1"),
            &key("shared"),
            mine,
            &response(200, b"mine"),
            at(1)
        )
        .await
        .unwrap());
    let theirs = token(claim(&store, "T-2", "shared", 1, at(2)).await);
    assert_ne!(theirs, mine);
    // Each terminal's token works on its own record only.
    assert!(!store
        .complete(
            &terminal("T-2"),
            &key("shared"),
            mine,
            &response(200, b"x"),
            at(3)
        )
        .await
        .unwrap());
    assert_eq!(
        held(claim(&store, "T-1", "shared", 1, at(4)).await).response,
        Some(response(200, b"mine"))
    );
}

#[tokio::test]
async fn of_racing_claims_of_one_key_exactly_one_wins() {
    let (_db, store) = database().await;
    let mut tasks = JoinSet::new();
    for _ in 0..20 {
        let store = store.clone();
        tasks.spawn(async move {
            store
                .claim(
                    &terminal("T-1"),
                    &key("race"),
                    &fingerprint(9),
                    times(at(0)),
                )
                .await
        });
    }
    let (mut won, mut lost) = (0, 0);
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap().unwrap() {
            Claim::Claimed(_) => won += 1,
            Claim::Held(held) => {
                assert_eq!(held.fingerprint, fingerprint(9));
                assert_eq!(held.response, None);
                lost += 1;
            }
        }
    }
    assert_eq!((won, lost), (1, 19));
}
