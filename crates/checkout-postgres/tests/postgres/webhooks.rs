//! `WebhookStore` on PostgreSQL: the fair claim (turns across endpoints and terminals, bounds
//! in flight per endpoint and per terminal that hold for racing claims, nothing of an open
//! circuit or a disabled endpoint), the endpoint health compare-and-set, the endpoints and
//! redelivery limits under races, and the deliveries log's pages.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use checkout_domain::ports::{SessionRepository, WebhookStore};
use checkout_domain::session::SessionState;
use checkout_domain::webhooks::{
    Disabled, DueDelivery, EndpointHealth, EventFilter, FairShare, Redelivered, RedeliveryLimits,
    SealedSecret, WebhookEndpoint,
};
use checkout_postgres::PgStore;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::support::*;

/// A new endpoint of `terminal_number` receiving every type; returns its id.
async fn add_endpoint(store: &PgStore, terminal_number: &str) -> Uuid {
    let endpoint = WebhookEndpoint {
        id: Uuid::from_bytes(random_bytes()),
        terminal: terminal(terminal_number),
        url: "https://merchant.example/hooks".into(),
        events: EventFilter::All,
        created_at: OffsetDateTime::now_utc(),
        health: EndpointHealth::default(),
    };
    assert!(store
        .insert_endpoint(&endpoint, &SealedSecret(vec![7; 40]), 16)
        .await
        .unwrap());
    endpoint.id
}

/// `n` events of `terminal_number` (sessions cancelled), each queued for its endpoints; returns
/// the events' sessions.
async fn events(store: &PgStore, terminal_number: &str, n: usize) {
    for _ in 0..n {
        let s = session(
            terminal_number,
            &format!("REF-{}", Uuid::from_bytes(random_bytes()).simple()),
        );
        store.insert(&s).await.unwrap();
        assert!(store
            .transition(
                s.id(),
                SessionState::Pending,
                SessionState::Cancelled,
                at(10)
            )
            .await
            .unwrap());
    }
}

/// The ids of `terminal_number`'s events, in the order they were written (read directly: the
/// feed holds events back while any transaction of the shared cluster runs).
async fn event_ids(db: &checkout_test_db::TestDatabase, terminal_number: &str) -> Vec<Uuid> {
    use diesel::sql_types::{Text, Uuid as SqlUuid};
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = SqlUuid)]
        id: Uuid,
    }
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let rows: Vec<Id> =
        diesel::sql_query("SELECT id FROM events WHERE terminal_number = $1 ORDER BY seq")
            .bind::<Text, _>(terminal_number)
            .load(&mut conn)
            .await
            .unwrap();
    rows.into_iter().map(|r| r.id).collect()
}

/// The deliveries queued by now are due at this instant (whole microseconds, as PostgreSQL
/// keeps it).
fn soon() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc() + Duration::seconds(1);
    t.replace_nanosecond(t.nanosecond() / 1000 * 1000)
        .unwrap_or(t)
}

async fn claim(
    store: &PgStore,
    now: OffsetDateTime,
    limit: u32,
    share: FairShare,
) -> Vec<DueDelivery> {
    store
        .claim_due(now, now + Duration::seconds(30), limit, share)
        .await
        .unwrap()
}

fn per_endpoint(claimed: &[DueDelivery]) -> BTreeMap<Uuid, usize> {
    let mut counts = BTreeMap::new();
    for d in claimed {
        *counts.entry(d.endpoint_id).or_default() += 1;
    }
    counts
}

const SHARE: FairShare = FairShare {
    per_endpoint: 2,
    per_terminal: 5,
};

#[tokio::test]
async fn another_endpoints_first_delivery_comes_before_one_endpoints_backlog() {
    let (_db, store) = database().await;
    let noisy = add_endpoint(&store, "T-1").await;
    events(&store, "T-1", 20).await;
    // Queued after all of the noisy backlog.
    let quiet = add_endpoint(&store, "T-2").await;
    events(&store, "T-2", 1).await;
    let now = soon();
    let first = claim(&store, now, 2, SHARE).await;
    let counts = per_endpoint(&first);
    assert_eq!(counts.get(&quiet), Some(&1), "{counts:?}");
    assert_eq!(counts.get(&noisy), Some(&1), "{counts:?}");
    // Within one terminal too: the endpoint served longest ago goes first.
    let (_db, store) = database().await;
    let busy = add_endpoint(&store, "T-1").await;
    events(&store, "T-1", 10).await;
    let taken = claim(&store, soon(), 1, SHARE).await;
    assert_eq!(per_endpoint(&taken).get(&busy), Some(&1));
    let idle = add_endpoint(&store, "T-1").await;
    events(&store, "T-1", 1).await;
    let next = claim(&store, soon(), 1, SHARE).await;
    assert_eq!(next.len(), 1);
    assert_eq!(
        next[0].endpoint_id, idle,
        "the endpoint never served goes first"
    );
}

#[tokio::test]
async fn attempts_in_flight_are_bounded_per_endpoint_and_per_terminal() {
    let (_db, store) = database().await;
    let endpoints = [
        add_endpoint(&store, "T-1").await,
        add_endpoint(&store, "T-1").await,
        add_endpoint(&store, "T-1").await,
    ];
    let other = add_endpoint(&store, "T-2").await;
    events(&store, "T-1", 10).await;
    events(&store, "T-2", 10).await;
    let now = soon();
    let first = claim(&store, now, 100, SHARE).await;
    let counts = per_endpoint(&first);
    assert!(counts.values().all(|n| *n <= 2), "{counts:?}");
    let terminal_one: usize = endpoints.iter().filter_map(|e| counts.get(e)).sum();
    assert_eq!(terminal_one, 5, "{counts:?}");
    assert_eq!(counts.get(&other), Some(&2));
    // The leases are live: nothing more while they last.
    assert!(claim(&store, now, 100, SHARE).await.is_empty());
    // A lease that ran out frees its place (a worker killed mid-attempt).
    let later = now + Duration::seconds(31);
    let again = claim(&store, later, 100, SHARE).await;
    assert_eq!(again.len(), 7);
    assert!(first.iter().all(|d| d.health == EndpointHealth::default()));
}

#[tokio::test]
async fn a_failing_endpoint_gets_one_at_a_time_an_open_one_none_a_disabled_one_nothing() {
    let (db, store) = database().await;
    let failing = add_endpoint(&store, "T-1").await;
    let open = add_endpoint(&store, "T-2").await;
    events(&store, "T-1", 5).await;
    events(&store, "T-2", 5).await;
    let now = soon();
    let failed_once = EndpointHealth {
        consecutive_failures: 1,
        failing_since: Some(at(0)),
        ..EndpointHealth::default()
    };
    assert!(store
        .set_endpoint_health(failing, &EndpointHealth::default(), &failed_once, now)
        .await
        .unwrap());
    let opened = EndpointHealth {
        consecutive_failures: 5,
        failing_since: Some(at(0)),
        circuit_open_until: Some(now + Duration::seconds(60)),
        circuit_openings: 1,
        disabled: None,
    };
    assert!(store
        .set_endpoint_health(open, &EndpointHealth::default(), &opened, now)
        .await
        .unwrap());
    // A stale expectation changes nothing.
    assert!(!store
        .set_endpoint_health(open, &EndpointHealth::default(), &failed_once, now)
        .await
        .unwrap());
    assert_eq!(
        store.endpoint_health(open).await.unwrap(),
        Some(opened.clone())
    );
    let claimed = claim(&store, now, 100, SHARE).await;
    assert_eq!(per_endpoint(&claimed), BTreeMap::from([(failing, 1)]));
    assert_eq!(claimed[0].health, failed_once);
    // Once the circuit's wait has passed: one probe.
    let probe = claim(&store, now + Duration::seconds(61), 100, SHARE).await;
    let counts = per_endpoint(&probe);
    assert_eq!(counts.get(&open), Some(&1), "{counts:?}");

    // Disabled: its pending deliveries are cancelled, no event is queued for it, a
    // redelivery skips it; enabled again, it is healthy and gets the next events.
    let disabled = EndpointHealth {
        disabled: Some(Disabled {
            at: now,
            reason: "failing for days".into(),
        }),
        ..failed_once.clone()
    };
    assert!(store
        .set_endpoint_health(failing, &failed_once, &disabled, now)
        .await
        .unwrap());
    let pending = |id: Uuid| {
        format!(
            "SELECT count(*) AS n FROM webhook_deliveries \
             WHERE endpoint_id = '{id}' AND state = 'pending'"
        )
    };
    assert_eq!(count(&db, &pending(failing)).await, 0);
    events(&store, "T-1", 2).await;
    assert_eq!(count(&db, &pending(failing)).await, 0);
    let listed = store.endpoints(&terminal("T-1")).await.unwrap();
    assert_eq!(
        listed[0]
            .health
            .disabled
            .as_ref()
            .map(|d| d.reason.as_str()),
        Some("failing for days")
    );
    assert!(claim(&store, now + Duration::seconds(200), 100, SHARE)
        .await
        .iter()
        .all(|d| d.endpoint_id != failing));
    let event = event_ids(&db, "T-1").await[0];
    let limits = RedeliveryLimits::default();
    assert_eq!(
        store
            .redeliver(&terminal("T-1"), event, now, &limits)
            .await
            .unwrap(),
        Redelivered::Queued(Vec::new())
    );
    let enabled = store
        .enable_endpoint(&terminal("T-1"), failing)
        .await
        .unwrap()
        .expect("the endpoint");
    assert_eq!(enabled.health, EndpointHealth::default());
    assert!(store
        .enable_endpoint(&terminal("T-2"), failing)
        .await
        .unwrap()
        .is_none());
    events(&store, "T-1", 1).await;
    assert_eq!(count(&db, &pending(failing)).await, 1);
}

#[tokio::test]
async fn an_endpoint_that_fails_with_more_in_flight_than_its_new_share_gets_nothing_more() {
    let (_db, store) = database().await;
    let endpoint = add_endpoint(&store, "T-1").await;
    events(&store, "T-1", 5).await;
    let now = soon();
    assert_eq!(claim(&store, now, 100, SHARE).await.len(), 2);
    // One of the two in flight fails: the endpoint's share is now one, and two are out.
    let failed = EndpointHealth {
        consecutive_failures: 1,
        failing_since: Some(now),
        ..EndpointHealth::default()
    };
    assert!(store
        .set_endpoint_health(endpoint, &EndpointHealth::default(), &failed, now)
        .await
        .unwrap());
    assert!(claim(&store, now, 100, SHARE).await.is_empty());
}

#[tokio::test]
async fn racing_claims_never_pass_the_bounds_nor_share_a_delivery() {
    let (_db, store) = database().await;
    let mut endpoints = BTreeSet::new();
    for _ in 0..4 {
        endpoints.insert(add_endpoint(&store, "T-1").await);
    }
    events(&store, "T-1", 20).await;
    events(&store, "T-2", 0).await;
    let now = soon();
    let claims: Vec<_> = (0..12)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .claim_due(now, now + Duration::seconds(30), 3, SHARE)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut all = Vec::new();
    for c in claims {
        all.extend(c.await.unwrap());
    }
    let ids: BTreeSet<Uuid> = all.iter().map(|d| d.id).collect();
    assert_eq!(ids.len(), all.len(), "no delivery claimed twice");
    let counts = per_endpoint(&all);
    assert!(counts.values().all(|n| *n <= 2), "{counts:?}");
    assert_eq!(all.len(), 5, "the terminal's bound: {counts:?}");
}

#[tokio::test]
async fn a_terminals_endpoints_are_capped_even_when_created_at_once() {
    let (_db, store) = database().await;
    let creates: Vec<_> = (0..10)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                let endpoint = WebhookEndpoint {
                    id: Uuid::from_bytes(random_bytes()),
                    terminal: terminal("T-1"),
                    url: format!("https://merchant.example/{n}"),
                    events: EventFilter::All,
                    created_at: OffsetDateTime::now_utc(),
                    health: EndpointHealth::default(),
                };
                store
                    .insert_endpoint(&endpoint, &SealedSecret(vec![1; 40]), 4)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut saved = 0;
    for c in creates {
        saved += usize::from(c.await.unwrap());
    }
    assert_eq!(saved, 4);
    assert_eq!(store.endpoints(&terminal("T-1")).await.unwrap().len(), 4);
    // Another terminal has its own.
    add_endpoint(&store, "T-2").await;
}

#[tokio::test]
async fn redeliveries_are_counted_per_event_and_per_terminal_over_the_window() {
    let (_db, store) = database().await;
    add_endpoint(&store, "T-1").await;
    events(&store, "T-1", 3).await;
    let feed = event_ids(&_db, "T-1").await;
    let [e1, e2, e3] = [feed[0], feed[1], feed[2]];
    let limits = RedeliveryLimits {
        window: Duration::hours(1),
        per_event: 2,
        per_terminal: 3,
    };
    let t = terminal("T-1");
    let t0 = OffsetDateTime::now_utc();
    let go = |event: Uuid, minutes: i64| {
        let (store, t) = (store.clone(), t.clone());
        async move {
            store
                .redeliver(&t, event, t0 + Duration::minutes(minutes), &limits)
                .await
                .unwrap()
        }
    };
    assert!(matches!(go(e1, 0).await, Redelivered::Queued(q) if q.len() == 1));
    assert!(matches!(go(e1, 1).await, Redelivered::Queued(_)));
    let refused = go(e1, 2).await;
    let Redelivered::OverLimit {
        event_oldest: Some(oldest),
        terminal_oldest: None,
    } = refused
    else {
        panic!("{refused:?}");
    };
    assert!((oldest - t0).abs() < Duration::milliseconds(1), "{oldest}");
    assert!(matches!(go(e2, 3).await, Redelivered::Queued(_)));
    let refused = go(e3, 4).await;
    assert!(
        matches!(
            refused,
            Redelivered::OverLimit {
                event_oldest: None,
                terminal_oldest: Some(_)
            }
        ),
        "{refused:?}"
    );
    // An hour after the first, one place is free again.
    assert!(matches!(go(e3, 61).await, Redelivered::Queued(_)));
    assert_eq!(
        store
            .redeliver(&terminal("T-2"), e1, t0, &limits)
            .await
            .unwrap(),
        Redelivered::UnknownEvent
    );

    // Racing requests for one event never pass its limit.
    let (_db, store) = database().await;
    add_endpoint(&store, "T-1").await;
    events(&store, "T-1", 1).await;
    let event = event_ids(&_db, "T-1").await[0];
    let racers: Vec<_> = (0..10)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .redeliver(&terminal("T-1"), event, OffsetDateTime::now_utc(), &limits)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut queued = 0;
    for r in racers {
        queued += usize::from(matches!(r.await.unwrap(), Redelivered::Queued(_)));
    }
    assert_eq!(queued, 2);
}

#[tokio::test]
async fn the_deliveries_log_pages_newest_first_and_never_shifts() {
    let (_db, store) = database().await;
    let endpoint = add_endpoint(&store, "T-1").await;
    events(&store, "T-1", 7).await;
    let t = terminal("T-1");
    let first = store
        .deliveries(&t, endpoint, None, 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.deliveries.len(), 3);
    assert!(first.has_more);
    // A delivery queued meanwhile does not shift the next pages.
    events(&store, "T-1", 1).await;
    let second = store
        .deliveries(&t, endpoint, first.cursor, 3)
        .await
        .unwrap()
        .unwrap();
    let third = store
        .deliveries(&t, endpoint, second.cursor, 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((second.deliveries.len(), third.deliveries.len()), (3, 1));
    assert!(second.has_more && !third.has_more);
    let all: Vec<Uuid> = [first, second, third]
        .iter()
        .flat_map(|p| p.deliveries.iter().map(|d| d.id))
        .collect();
    assert_eq!(all.iter().collect::<BTreeSet<_>>().len(), 7);
    // Newest first: the created times never grow down the pages.
    let whole = store
        .deliveries(&t, endpoint, None, 100)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(whole.deliveries.len(), 8);
    assert!(!whole.has_more);
    assert_eq!(whole.deliveries[1..], {
        let again = store
            .deliveries(&t, endpoint, None, 100)
            .await
            .unwrap()
            .unwrap();
        again.deliveries[1..].to_vec()
    });
    assert_eq!(
        &whole.deliveries[1..]
            .iter()
            .map(|d| d.id)
            .collect::<Vec<_>>(),
        &all
    );
    assert!(store
        .deliveries(&terminal("T-2"), endpoint, None, 10)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn a_claim_over_a_1600_delivery_backlog_takes_milliseconds() {
    let (_db, store) = database().await;
    for _ in 0..16 {
        add_endpoint(&store, "T-1").await;
    }
    let victim = add_endpoint(&store, "T-2").await;
    events(&store, "T-1", 100).await;
    events(&store, "T-2", 1).await;
    let share = FairShare::default();
    let now = soon();
    let mut took = Vec::new();
    let mut victim_claimed = false;
    for n in 0..5 {
        let started = Instant::now();
        let claimed = claim(&store, now + Duration::milliseconds(n), 8, share).await;
        took.push(started.elapsed().as_secs_f64() * 1000.0);
        victim_claimed |= claimed.iter().any(|d| d.endpoint_id == victim);
    }
    assert!(
        victim_claimed,
        "the other terminal's delivery is in the first claims"
    );
    took.sort_by(f64::total_cmp);
    eprintln!(
        "fair claim over 1,601 due deliveries (16 + 1 endpoints): {:.1} ms median of 5 claims of 8, \
         slowest {:.1} ms",
        took[2], took[4]
    );
    assert!(took[2] < 250.0, "{took:?}");
}
