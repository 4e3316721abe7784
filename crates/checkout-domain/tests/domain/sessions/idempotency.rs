//! Creates sent with an `Idempotency-Key`, through `TestKit` and its in-memory key store:
//! replays, a key reused with another request, a key still running, lapsed claims, faults that
//! release the key, the 24-hour window, terminals kept apart, and racing retries.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use std::sync::Arc;

use crate::support::{link_request, start, start_request};
use async_trait::async_trait;
use checkout_domain::ports::{
    Claim, ClaimTimes, IdempotencyStore, SavedResponse, TerminalDirectory,
};
use checkout_domain::session::{PaymentSession, SessionRequest};
use checkout_domain::terminal::Terminal;
use checkout_domain::testing::{NoProcessorEvents, SequentialIds, TestKit};
use checkout_domain::usecases::{IdempotentAnswer, IdempotentRequest, PaymentLink};
use checkout_domain::values::{IdempotencyKey, RequestFingerprint, TerminalNumber};
use checkout_domain::{Checkout, CheckoutError, IdempotencyConflict, Ports, SvcCode};
use time::Duration;

/// A request with key `key` whose fingerprint is `n` in every byte.
fn once(key: &str, n: u8) -> IdempotentRequest {
    IdempotentRequest {
        key: IdempotencyKey::parse(key).unwrap(),
        fingerprint: RequestFingerprint::from_bytes([n; 32]),
    }
}

/// What an HTTP adapter would render: 200 with the session id, or the error's code.
fn render(result: &Result<PaymentSession, CheckoutError>) -> SavedResponse {
    match result {
        Ok(session) => SavedResponse {
            status: 200,
            content_type: "application/json".into(),
            body: session.id().to_string().into_bytes(),
        },
        Err(CheckoutError::Service { code, session, .. }) => SavedResponse {
            status: code.spec().http_status,
            content_type: "application/problem+json".into(),
            body: format!("{code} {session:?}").into_bytes(),
        },
        Err(e) => SavedResponse {
            status: 400,
            content_type: "application/problem+json".into(),
            body: e.to_string().into_bytes(),
        },
    }
}

fn render_link(result: &Result<PaymentLink, CheckoutError>) -> SavedResponse {
    match result {
        Ok(link) => render(&Ok(link.session.clone())),
        Err(e) => SavedResponse {
            status: 422,
            content_type: "application/problem+json".into(),
            body: e.to_string().into_bytes(),
        },
    }
}

async fn start_once(
    kit: &TestKit,
    terminal: &str,
    request: &SessionRequest,
    once: &IdempotentRequest,
) -> Result<IdempotentAnswer, CheckoutError> {
    let caller = kit.caller(terminal);
    let create = kit.checkout.start_payment(&caller, request);
    kit.checkout
        .create_once(&caller, once, create, render)
        .await
}

fn fresh(answer: Result<IdempotentAnswer, CheckoutError>) -> SavedResponse {
    match answer {
        Ok(IdempotentAnswer::Fresh(response)) => response,
        other => panic!("expected a fresh answer, got {other:?}"),
    }
}

fn replayed(answer: Result<IdempotentAnswer, CheckoutError>) -> SavedResponse {
    match answer {
        Ok(IdempotentAnswer::Replayed(response)) => response,
        other => panic!("expected a replay, got {other:?}"),
    }
}

fn conflict(answer: Result<IdempotentAnswer, CheckoutError>) -> IdempotencyConflict {
    match answer {
        Err(CheckoutError::Idempotency(conflict)) => conflict,
        other => panic!("expected an idempotency conflict, got {other:?}"),
    }
}

fn terminal(number: &str) -> TerminalNumber {
    TerminalNumber::parse(number).unwrap()
}

#[tokio::test]
async fn a_retry_with_the_same_key_and_request_replays_the_first_response() {
    let kit = TestKit::new();
    let request = start_request("IDEM-1");
    let first = fresh(start_once(&kit, "T-1", &request, &once("k-1", 1)).await);
    assert_eq!(first.status, 200);
    let again = replayed(start_once(&kit, "T-1", &request, &once("k-1", 1)).await);
    assert_eq!(again, first);
    assert_eq!(kit.sessions.len(), 1, "the retry created nothing");

    // The link route too.
    let caller = kit.caller("T-1");
    let link = kit
        .checkout
        .create_once(
            &caller,
            &once("k-2", 2),
            kit.checkout
                .generate_payment_link(&caller, &link_request("IDEM-L")),
            render_link,
        )
        .await;
    let link = fresh(link);
    let again = kit
        .checkout
        .create_once(
            &caller,
            &once("k-2", 2),
            kit.checkout
                .generate_payment_link(&caller, &link_request("IDEM-L")),
            render_link,
        )
        .await;
    assert_eq!(replayed(again), link);
    assert_eq!(kit.sessions.len(), 2);
}

#[tokio::test]
async fn the_same_key_with_another_request_is_refused_and_runs_nothing() {
    let kit = TestKit::new();
    fresh(start_once(&kit, "T-1", &start_request("IDEM-2"), &once("k", 1)).await);
    let other = start_once(&kit, "T-1", &start_request("IDEM-3"), &once("k", 2)).await;
    assert_eq!(conflict(other), IdempotencyConflict::KeyReused);
    assert_eq!(kit.sessions.len(), 1);
    // The refusal kept nothing: the first response still replays.
    replayed(start_once(&kit, "T-1", &start_request("IDEM-2"), &once("k", 1)).await);
}

#[tokio::test]
async fn a_retry_while_the_first_request_runs_is_in_progress() {
    let kit = TestKit::new();
    let now = kit.clock.now_value();
    let request = once("k-running", 7);
    // Another instance holds the key and has not answered yet.
    let claim = kit
        .idempotency
        .claim(
            &terminal("T-1"),
            &request.key,
            &request.fingerprint,
            ClaimTimes {
                now,
                lease_until: now + Duration::seconds(60),
                forget_before: now - Duration::hours(24),
            },
        )
        .await
        .unwrap();
    assert!(matches!(claim, Claim::Claimed(_)));

    let retry = start_once(&kit, "T-1", &start_request("IDEM-4"), &request).await;
    assert_eq!(conflict(retry), IdempotencyConflict::InProgress);
    // Another request under the running key is a reuse, not a wait.
    let other = start_once(&kit, "T-1", &start_request("IDEM-5"), &once("k-running", 8)).await;
    assert_eq!(conflict(other), IdempotencyConflict::KeyReused);
    assert!(kit.sessions.is_empty());

    // The holder died: once its lease is over, a retry runs.
    kit.clock.advance(Duration::seconds(60));
    let retry = fresh(start_once(&kit, "T-1", &start_request("IDEM-4"), &request).await);
    assert_eq!(retry.status, 200);
    assert_eq!(kit.sessions.len(), 1);
}

#[tokio::test]
async fn a_first_answer_of_svc_001_is_kept_and_replayed() {
    let kit = TestKit::new();
    let holder = start(&kit, "IDEM-DUP").await;
    let first = fresh(start_once(&kit, "T-1", &start_request("IDEM-DUP"), &once("k", 1)).await);
    assert_eq!(first.status, 422);
    assert_eq!(
        String::from_utf8(first.body.clone()).unwrap(),
        format!("SVC_001 Some({:?})", holder.id())
    );
    let again = replayed(start_once(&kit, "T-1", &start_request("IDEM-DUP"), &once("k", 1)).await);
    assert_eq!(again, first);
}

#[tokio::test]
async fn a_validation_error_is_kept_and_replayed() {
    let kit = TestKit::new();
    let mut request = start_request("IDEM-BAD");
    request.currency_code = Some("DOLLARS".into());
    let first = fresh(start_once(&kit, "T-1", &request, &once("k", 1)).await);
    assert_eq!(first.status, 400);
    assert_eq!(
        replayed(start_once(&kit, "T-1", &request, &once("k", 1)).await),
        first
    );
}

/// A terminal directory whose database is down.
struct DownTerminals;

#[async_trait]
impl TerminalDirectory for DownTerminals {
    async fn get_terminal(&self, _: &TerminalNumber) -> anyhow::Result<Option<Terminal>> {
        anyhow::bail!("the terminal directory is unreachable")
    }
}

#[tokio::test]
async fn a_fault_releases_the_key_so_that_a_retry_runs_again() {
    let kit = TestKit::new();
    let broken = Checkout::new(
        Ports {
            sessions: kit.sessions.clone(),
            attempts: kit.sessions.clone(),
            sweeps: kit.sessions.clone(),
            reversals: kit.sessions.clone(),
            events: kit.sessions.clone(),
            terminals: Arc::new(DownTerminals),
            processor: kit.processor.clone(),
            identity: kit.identity.clone(),
            clock: kit.clock.clone(),
            ids: Arc::new(SequentialIds::default()),
            idempotency: kit.idempotency.clone(),
            processor_events: Arc::new(NoProcessorEvents),
            notices: kit.sessions.clone(),
            disputes: kit.sessions.clone(),
        },
        kit.checkout.policy().clone(),
    );
    let request = start_request("IDEM-FAULT");
    let caller = kit.caller("T-1");
    let create = broken.start_payment(&caller, &request);
    let fault = broken
        .create_once(&caller, &once("k", 1), create, render)
        .await;
    assert!(matches!(fault, Err(CheckoutError::Unknown(_))), "{fault:?}");
    assert!(kit.idempotency.is_empty(), "the key was released");

    let retry = fresh(start_once(&kit, "T-1", &request, &once("k", 1)).await);
    assert_eq!(retry.status, 200);
    assert_eq!(kit.sessions.len(), 1);
}

#[tokio::test]
async fn a_response_the_renderer_could_not_give_is_not_kept() {
    let kit = TestKit::new();
    let request = start_request("IDEM-500");
    let caller = kit.caller("T-1");
    let create = kit.checkout.start_payment(&caller, &request);
    let answer = kit
        .checkout
        .create_once(&caller, &once("k", 1), create, |_| SavedResponse {
            status: 500,
            content_type: "application/problem+json".into(),
            body: b"{}".to_vec(),
        })
        .await;
    assert_eq!(fresh(answer).status, 500);
    assert!(kit.idempotency.is_empty(), "a 5xx is never replayed");
}

#[tokio::test]
async fn keys_are_forgotten_after_24_hours() {
    let kit = TestKit::new();
    let request = start_request("IDEM-OLD");
    let first = fresh(start_once(&kit, "T-1", &request, &once("k", 1)).await);

    kit.clock
        .advance(Duration::hours(24) - Duration::seconds(1));
    assert_eq!(kit.checkout.forget_idempotency_keys().await.unwrap(), 0);
    assert_eq!(
        replayed(start_once(&kit, "T-1", &request, &once("k", 1)).await),
        first
    );

    // After the window the key is new: the request runs again (the first checkout expired
    // long ago, so this one is its successor).
    kit.clock.advance(Duration::seconds(1));
    let late = fresh(start_once(&kit, "T-1", &request, &once("k", 1)).await);
    assert_eq!(late.status, 200);
    assert_ne!(late.body, first.body);
    assert_eq!(kit.sessions.len(), 2);

    kit.clock.advance(Duration::hours(24));
    assert_eq!(kit.checkout.forget_idempotency_keys().await.unwrap(), 1);
    assert!(kit.idempotency.is_empty());
}

#[tokio::test]
async fn a_key_of_another_terminal_never_replays() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    let request = start_request("IDEM-SHARED");
    let mine = fresh(start_once(&kit, "T-1", &request, &once("k", 1)).await);
    let theirs = fresh(start_once(&kit, "T-2", &request, &once("k", 1)).await);
    assert_ne!(mine.body, theirs.body, "each terminal got its own session");
    assert_eq!(kit.sessions.len(), 2);
    assert_eq!(kit.idempotency.len(), 2);
}

#[tokio::test]
async fn without_a_key_a_repeated_request_is_a_new_request() {
    let kit = TestKit::new();
    start(&kit, "IDEM-NOKEY").await;
    let again = kit
        .checkout
        .start_payment(&kit.caller("T-1"), &start_request("IDEM-NOKEY"))
        .await;
    assert!(
        matches!(
            again,
            Err(CheckoutError::Service {
                code: SvcCode::Svc001,
                ..
            })
        ),
        "{again:?}"
    );
    assert!(kit.idempotency.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_retries_with_one_key_create_exactly_one_session() {
    let kit = TestKit::new();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let checkout = kit.checkout.clone();
            let caller = kit.caller("T-1");
            tokio::spawn(async move {
                let request = start_request("IDEM-RACE");
                let create = checkout.start_payment(&caller, &request);
                checkout
                    .create_once(&caller, &once("k-race", 3), create, render)
                    .await
            })
        })
        .collect();
    let (mut created, mut replays, mut running) = (Vec::new(), Vec::new(), 0);
    for task in tasks {
        match task.await.unwrap() {
            Ok(IdempotentAnswer::Fresh(r)) => created.push(r),
            Ok(IdempotentAnswer::Replayed(r)) => replays.push(r),
            Err(CheckoutError::Idempotency(IdempotencyConflict::InProgress)) => running += 1,
            other => panic!("unexpected answer {other:?}"),
        }
    }
    assert_eq!(created.len(), 1);
    assert!(replays.iter().all(|r| *r == created[0]));
    assert_eq!(1 + replays.len() + running, 20);
    assert_eq!(kit.sessions.len(), 1);
}

#[test]
fn keys_are_1_to_255_visible_ascii_characters() {
    for good in [
        "a",
        "8e03978e-40d5-43e8-bc93-6894a57f9324",
        "\"quoted\"",
        &"k".repeat(255),
    ] {
        assert_eq!(IdempotencyKey::parse(good).unwrap().as_str(), good);
    }
    for bad in [
        "",
        " ",
        "has space",
        "tab\t",
        "é",
        "\u{7f}",
        &"k".repeat(256),
    ] {
        let errors = IdempotencyKey::parse(bad).unwrap_err();
        assert_eq!(
            errors.messages("Idempotency-Key"),
            Some(
                &[
                    "Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces)."
                        .to_owned()
                ][..]
            ),
            "{bad:?}"
        );
    }
}
