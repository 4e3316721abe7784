//! Card payments under contention and processor faults, through the whole service: the real
//! binary, Postgres, the card form over HTTP, and (for faults) the Stripe adapter talking to a
//! fault-injecting stand-in on loopback.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use checkout_processor::testing::stand_in::{Recorded, Reply, StandIn};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::payer::{attempts, CardForm};
use crate::support::{Mode, TestServer};

const APPROVED_CARD: &str = "4242424242424242";
/// The processor timeout of the fault tests, milliseconds.
const TIMEOUT_MS: u64 = 1000;

/// Creates an integrated checkout session; returns its id.
async fn new_session(server: &TestServer, label: &str) -> String {
    let reference = format!("{label}-{}", &crate::support::server::uuid_like()[..8]);
    let body = json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "totalTransactionAmount": 12.34,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference
    });
    let token = server.token().await;
    let reply = server
        .post("/pay/api/start-payment", Some(&token), &body)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.str("checkoutSessionId").to_owned()
}

/// The status record the merchant reads.
async fn status_record(server: &TestServer, id: &str) -> Value {
    let token = server.token().await;
    let reply = server
        .get(&format!("/pay/api/payment/{id}"), Some(&token))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

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
        let id = new_session(&server, "CARD-RACE").await;
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
        let final_state = status_record(&server, &id).await["state"]
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

/// What the stand-in processor does with payment intent creations and with lookups.
#[derive(Clone)]
struct Script {
    create_intent: Reply,
    list_intents: Reply,
}

/// A Stripe-shaped stand-in whose answers the test changes between payments.
struct FaultyProcessor {
    stand_in: StandIn,
    script: Arc<Mutex<Script>>,
}

impl FaultyProcessor {
    async fn start() -> FaultyProcessor {
        let script = Arc::new(Mutex::new(Script {
            create_intent: Reply::Json(200, intent("pi_ok", "succeeded", "")),
            list_intents: empty_list(),
        }));
        let answers = script.clone();
        let stand_in = StandIn::answering(move |request: &Recorded| {
            let script = answers.lock().unwrap().clone();
            match (request.method.as_str(), request.path()) {
                ("POST", "/v1/payment_methods") => Reply::Json(
                    200,
                    json!({ "id": "pm_standin", "object": "payment_method" }),
                ),
                ("POST", "/v1/payment_intents") => script.create_intent,
                ("GET", "/v1/payment_intents") => script.list_intents,
                _ => Reply::Json(404, json!({ "error": { "type": "invalid_request_error" } })),
            }
        })
        .await;
        FaultyProcessor { stand_in, script }
    }

    fn set(&self, create_intent: Reply, list_intents: Reply) {
        *self.script.lock().unwrap() = Script {
            create_intent,
            list_intents,
        };
    }

    /// The payment intent creations received so far: each is one authorisation request.
    fn intent_creations(&self) -> Vec<Recorded> {
        self.stand_in
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path() == "/v1/payment_intents")
            .collect()
    }
}

fn intent(id: &str, status: &str, attempt: &str) -> Value {
    json!({ "id": id, "object": "payment_intent", "status": status,
            "client_secret": format!("{id}_secret"), "metadata": { "attempt": attempt } })
}

fn empty_list() -> Reply {
    Reply::Json(
        200,
        json!({ "object": "list", "data": [], "has_more": false }),
    )
}

/// One card submission against the faulty processor: its answer, how long it took, and the
/// session's state afterwards.
struct Submission {
    status: StatusCode,
    location: Option<String>,
    body: String,
    took: Duration,
    state: String,
}

impl Submission {
    /// The SVC code of the banner above the re-shown card form.
    fn banner_code(&self) -> Option<&str> {
        let (_, rest) = self.body.split_once("id=\"banner\" data-code=\"")?;
        rest.split('"').next()
    }
}

async fn submit(server: &TestServer, label: &str) -> (String, CardForm, Submission) {
    let id = new_session(server, label).await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    let started = Instant::now();
    let response = form.submit(&server.http, APPROVED_CARD).await;
    let took = started.elapsed();
    let (status, location, body) = read_answer(response).await;
    let state = status_record(server, &id).await["state"]
        .as_str()
        .unwrap()
        .to_owned();
    (
        id,
        form,
        Submission {
            status,
            location,
            body,
            took,
            state,
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn processor_faults_surface_as_their_codes_and_leave_nothing_processing() {
    let processor = FaultyProcessor::start().await;
    let base_url = processor.stand_in.base_url.to_string();
    let server = TestServer::start(
        "processor-faults",
        Mode::Sandbox,
        &[
            ("CHECKOUT__PROCESSOR__KIND", "stripe"),
            ("CHECKOUT__PROCESSOR__STRIPE_BASE_URL", base_url.as_str()),
            ("CHECKOUT__PROCESSOR__STRIPE_API_KEY", "sk_test_faults"),
            ("CHECKOUT__PROCESSOR__TIMEOUT_MS", "1000"),
            ("CHECKOUT__CHECKOUT__RECONCILE_SWEEP_SECONDS", "1"),
            ("CHECKOUT__CHECKOUT__RECONCILE_AFTER_SECONDS", "4"),
        ],
    )
    .await;
    let limit = Duration::from_millis(TIMEOUT_MS + 1000);
    let mut figures = Vec::new();

    // A hang, a reset and a 500 where the lookup finds no charge: SVC_003, payable again.
    let server_error = Reply::Json(500, json!({ "error": { "type": "api_error" } }));
    for (name, fault) in [
        ("hang", Reply::Hang),
        ("reset", Reply::Reset),
        ("500", server_error),
    ] {
        processor.set(fault, empty_list());
        let (_, _, s) = submit(&server, name).await;
        assert_eq!(s.status, 422, "{name}: the form again");
        assert_eq!(s.banner_code(), Some("SVC_003"), "{name}");
        assert!(s.took <= limit, "{name}: answered in {:?}", s.took);
        assert_eq!(
            s.state, "Pending",
            "{name}: nothing charged, the payer may retry"
        );
        figures.push(format!("{name} → SVC_003 in {} ms", s.took.as_millis()));
    }

    // A 400 about the request: SVC_004, payable again.
    let refusal = json!({ "error": { "type": "invalid_request_error", "message": "Bad amount." } });
    processor.set(Reply::Json(400, refusal), empty_list());
    let (_, _, s) = submit(&server, "400").await;
    assert_eq!((s.status.as_u16(), s.banner_code()), (422, Some("SVC_004")));
    assert_eq!(s.state, "Pending");
    figures.push(format!("400 → SVC_004 in {} ms", s.took.as_millis()));

    // A decline: SVC_006, Failed (2), the browser sent to the fail URL.
    let decline = json!({ "error": { "type": "card_error", "code": "card_declined",
        "decline_code": "generic_decline", "message": "Your card was declined.",
        "payment_intent": { "id": "pi_declined", "status": "requires_payment_method" } } });
    processor.set(Reply::Json(402, decline), empty_list());
    let (id, _, s) = submit(&server, "decline").await;
    assert_eq!(s.status, 303);
    let location = s.location.as_deref().unwrap_or_default();
    assert!(
        location.starts_with("https://merchant.example/fail?") && location.contains("state=Failed"),
        "{location}"
    );
    let record = status_record(&server, &id).await;
    assert_eq!(
        (record["state"].as_str(), record["stateCode"].as_i64()),
        (Some("Failed"), Some(2))
    );
    figures.push(format!(
        "decline → SVC_006, Failed (2) in {} ms",
        s.took.as_millis()
    ));

    // The answer lost and the lookup failing too: the session waits in Processing, and the
    // payer cannot pay again meanwhile. Once the processor answers lookups, reconciliation
    // finds the charge the lost request made, through the attempt's idempotency metadata.
    processor.set(Reply::Hang, Reply::Hang);
    let creations_before = processor.intent_creations().len();
    let (id, form, s) = submit(&server, "lost").await;
    assert!(!s.status.is_server_error(), "{}", s.status);
    assert_eq!(
        s.state, "Processing",
        "unknown outcome: neither paid nor payable"
    );
    let lost = processor.intent_creations();
    assert_eq!(lost.len(), creations_before + 1);
    let attempt = lost
        .last()
        .and_then(|r| r.field("metadata[attempt]"))
        .expect("the attempt id travels with the intent");
    // The payer presses "pay" again on the same form.
    let second = form.submit(&server.http, APPROVED_CARD).await;
    assert!(!second.status().is_server_error());
    assert_eq!(
        processor.intent_creations().len(),
        lost.len(),
        "no second authorisation"
    );

    let charged = intent("pi_lost_but_charged", "succeeded", &attempt);
    processor.set(
        Reply::Hang,
        Reply::Json(
            200,
            json!({ "object": "list", "data": [charged], "has_more": false }),
        ),
    );
    let waiting = Instant::now();
    let settled = loop {
        let state = status_record(&server, &id).await["state"]
            .as_str()
            .unwrap()
            .to_owned();
        if state != "Processing" || waiting.elapsed() > Duration::from_secs(20) {
            break state;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(settled, "Successful", "reconciliation recorded the charge");
    assert_eq!(attempts(&server, &id).await, 1);
    assert_eq!(
        processor.intent_creations().len(),
        lost.len(),
        "charged once"
    );
    figures.push(format!(
        "lost answer and failed lookup → Processing, settled Successful by reconciliation {:.1} s later",
        waiting.elapsed().as_secs_f64()
    ));

    assert!(
        !server.log().contains(APPROVED_CARD),
        "no card number in the server log"
    );
    eprintln!(
        "processor faults (timeout {TIMEOUT_MS} ms): {}",
        figures.join("; ")
    );
}
