//! The events feed through the SDK: read to the end, its cursor saved, then resumed by a
//! new client from that cursor: only the events written since, none skipped, none repeated.

use std::time::{Duration, Instant};

use checkout_client::{Client, Event, EventType};

use crate::support::TestServer;
use crate::{checkout, paid, reference, sdk, APPROVED, DECLINED};

/// Reads `feed` until it has nothing new, waiting (up to 10 s) until at least `at_least`
/// events were read (a transaction's events are shown once it committed).
async fn read_to_end(feed: &mut checkout_client::EventFeed, at_least: usize) -> Vec<Event> {
    let started = Instant::now();
    let mut events = Vec::new();
    loop {
        while let Some(event) = feed.next_event().await.unwrap() {
            events.push(event);
        }
        if events.len() >= at_least {
            return events;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{} of {at_least} events: {events:#?}",
            events.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn kinds(events: &[Event]) -> Vec<(EventType, String)> {
    events
        .iter()
        .map(|e| (e.kind.clone(), e.data.checkout_session_id.clone()))
        .collect()
}

#[tokio::test]
async fn the_feed_resumes_from_a_saved_cursor() {
    let server = TestServer::sandbox("sdk-events").await;
    let client = sdk(&server, &server.base);

    let succeeded = paid(&server, &client, "EV-OK", APPROVED).await;
    let pending = client
        .start_payment(&checkout(&reference("EV-CANCEL"), "2.00"))
        .await
        .unwrap();
    client
        .cancel_payment(&pending.checkout_session_id)
        .await
        .unwrap();

    let mut feed = client.events(None).page_size(2);
    let before = read_to_end(&mut feed, 2).await;
    assert_eq!(
        kinds(&before),
        vec![
            (EventType::PaymentSucceeded, succeeded.clone()),
            (
                EventType::PaymentCancelled,
                pending.checkout_session_id.clone()
            ),
        ]
    );
    let saved = feed
        .cursor()
        .expect("a cursor once events were read")
        .to_owned();

    // Meanwhile: a decline (two events: the attempt, then the session).
    let declined = paid(&server, &client, "EV-DECLINED", DECLINED).await;

    // Another process resumes from the saved cursor.
    let restarted = Client::builder(&server.base, &server.client_id, &server.client_secret)
        .build()
        .unwrap();
    let mut resumed = restarted.events(Some(saved.clone())).page_size(1);
    let after = read_to_end(&mut resumed, 2).await;
    let mut seen = kinds(&after);
    seen.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    assert_eq!(
        seen,
        vec![
            (EventType::PaymentAttemptFailed, declined.clone()),
            (EventType::PaymentFailed, declined.clone()),
        ]
    );
    assert_ne!(resumed.cursor(), Some(saved.as_str()));
    for event in &after {
        assert!(before.iter().all(|b| b.id != event.id), "no repeat");
    }
    assert!(after
        .iter()
        .all(|e| e.data.attempts[0].code.as_deref() == Some("SVC_006")));

    // Caught up: nothing more, the cursor stays.
    let end = resumed.cursor().map(str::to_owned);
    assert!(resumed.next_event().await.unwrap().is_none());
    assert_eq!(resumed.cursor().map(str::to_owned), end);

    // Page by page from the start: the same four events.
    let mut pages = client.events(None).page_size(2);
    let mut all = Vec::new();
    loop {
        let page = pages.next_page().await.unwrap();
        all.extend(page.events);
        if !page.has_more {
            break;
        }
    }
    assert_eq!(all.len(), 4, "{:#?}", kinds(&all));
    assert_eq!(pages.cursor(), end.as_deref());
}
