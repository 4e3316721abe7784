//! Card payments under contention, through the whole service: the real binary, Postgres, the
//! card form over HTTP. Processor faults are the `money` test binary's (a Stripe-like
//! stand-in with Stripe's idempotency, lags and late answers).

use std::sync::Arc;
use std::time::Instant;

use reqwest::StatusCode;

use crate::support::payer::{attempts, CardForm};
use crate::support::{Mode, TestServer};

const APPROVED_CARD: &str = "4242424242424242";

/// The status, `Location` and body of an answer to the card form.
async fn read_answer(response: reqwest::Response) -> (StatusCode, Option<String>, String) {
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, location, response.text().await.unwrap_or_default())
}

/// What one answer to the card form says the payment's state is: the `state` of the merchant
/// redirect, or the `data-state` of a result page.
fn state_shown(status: StatusCode, location: Option<&str>, body: &str) -> String {
    if let Some(location) = location {
        let url = url::Url::parse(location).expect("an absolute redirect");
        return url
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_else(|| format!("redirect without state: {location}"));
    }
    match body.split_once("data-state=\"") {
        Some((_, rest)) => rest.split('"').next().unwrap_or_default().to_owned(),
        None => format!("HTTP {status} without a state"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_simultaneous_card_submissions_authorise_once_and_agree_on_the_state() {
    let server = TestServer::start(
        "card-race",
        Mode::Sandbox,
        &[("CHECKOUT__DATABASE__POOL_SIZE", "16")],
    )
    .await;
    let rounds = crate::rounds();
    let started = Instant::now();
    for round in 0..rounds {
        let id = server.new_checkout("CARD-RACE").await;
        let form = CardForm::open(&server.http, &server.base, &id).await;
        let barrier = Arc::new(tokio::sync::Barrier::new(20));
        let posts: Vec<_> = (0..20)
            .map(|_| {
                let (form, http, barrier) = (form.clone(), server.http.clone(), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    let (status, location, body) =
                        read_answer(form.submit(&http, APPROVED_CARD).await).await;
                    (status, state_shown(status, location.as_deref(), &body))
                })
            })
            .collect();
        let mut shown = Vec::new();
        for post in posts {
            let (status, state) = post.await.expect("join");
            assert!(
                !status.is_server_error(),
                "round {round}: no 5xx, got {status}"
            );
            shown.push(state);
        }
        let final_state = server.status_record(&id).await["state"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(final_state, "Successful");
        assert!(
            shown.iter().all(|s| *s == final_state),
            "round {round}: every answer shows {final_state}: {shown:?}"
        );
        assert_eq!(
            attempts(&server, &id).await,
            1,
            "round {round}: one authorisation"
        );
    }
    eprintln!(
        "card race: {rounds} rounds of 20 simultaneous card submissions for one session: \
         1 authorisation each, 20 of 20 answers showing Successful, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
