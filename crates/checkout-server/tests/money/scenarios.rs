//! The nine ways money went wrong before the attempt ledger, each through the whole service.

use std::time::Duration;

use checkout_processor::testing::fake_stripe::{Call, Fault, When};

use crate::support::payer::attempts;

use crate::{
    assert_agrees, charged, fake_stripe, intents_of, pay, service, state_of, wait_while, Answer,
    APPROVED_CARD, CHALLENGE_CARD,
};

/// The id of the one intent of session `id`.
fn only_intent(stripe: &checkout_processor::testing::fake_stripe::FakeStripe, id: &str) -> String {
    let intents = intents_of(stripe, id);
    assert_eq!(intents.len(), 1, "{intents:?}");
    intents[0].id.clone()
}

/// Scenario 1: the intent create outlives the client's timeout and the list does not show it
/// yet. The service neither reopens the session nor charges again: the payer's retry is
/// refused, and reconciliation learns the outcome by replaying the same request.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_timeout_then_a_retry_charges_once() {
    let stripe = fake_stripe().await;
    let server = service("money-timeout", &stripe, &[]).await;

    // The processor works on the request for 2.5 s: the client gives up, its immediate replay
    // finds the first request still running (409).
    stripe.inject(
        Call::CreateIntent,
        When::Before,
        Fault::Delay(Duration::from_millis(2500)),
    );
    let id = server.new_checkout("TIMEOUT").await;
    let (form, first) = pay(&server, &id, APPROVED_CARD).await;
    assert!(!first.status.is_server_error(), "{}", first.status);
    assert_eq!(
        state_of(&server, &id).await,
        "Processing",
        "neither paid nor payable"
    );

    // The payer presses Pay again, and opens a second tab.
    let again = Answer::of(form.submit(&server.http, APPROVED_CARD).await).await;
    assert!(!again.status.is_server_error());
    assert_eq!(attempts(&server, &id).await, 1, "no second attempt");

    let settled = wait_while(&server, &id, "Processing", Duration::from_secs(20)).await;
    assert_eq!(settled, "Successful");
    assert_eq!(charged(&stripe, &id), 1);
    assert_eq!(
        stripe.executions(Call::CreateIntent),
        1,
        "the work was done once"
    );
    assert_eq!(
        stripe.executions(Call::ListIntents),
        0,
        "never resolved by listing"
    );
    assert_agrees(&server, &stripe, &id).await;

    // The answer that arrives after the client gave up (the work done at once): the replay
    // gets the saved answer.
    stripe.inject(
        Call::CreateIntent,
        When::After,
        Fault::Delay(Duration::from_millis(2500)),
    );
    let late = server.new_checkout("LATE-ANSWER").await;
    let (_, answer) = pay(&server, &late, APPROVED_CARD).await;
    assert_eq!(
        answer.status, 303,
        "recovered by the replay: {}",
        answer.body
    );
    assert_eq!(state_of(&server, &late).await, "Successful");
    assert_eq!(charged(&stripe, &late), 1);
}

/// Scenario 2: reading the intent after the payer's return fails with a 4xx: the session is
/// not reopened, and the payer cannot pay again; the next read records the charge.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_4xx_while_completing_a_challenge_never_reopens_the_session() {
    let stripe = fake_stripe().await;
    let server = service("money-3ds-4xx", &stripe, &[]).await;
    let id = server.new_checkout("3DS-4XX").await;
    let (form, answer) = pay(&server, &id, CHALLENGE_CARD).await;
    assert_eq!(answer.status, 303);
    assert_eq!(state_of(&server, &id).await, "ChallengeRequired");
    let intent = only_intent(&stripe, &id);
    assert!(stripe.complete_3ds(&intent, true), "the payer passes 3DS");

    stripe.inject(Call::RetrieveIntent, When::Before, Fault::Status(400));
    let returned = server
        .http
        .get(format!("{}/pay/return/{id}", server.base))
        .send()
        .await
        .unwrap();
    assert!(!returned.status().is_server_error());
    assert_eq!(
        state_of(&server, &id).await,
        "ChallengeRequired",
        "not reopened"
    );
    let retry = Answer::of(form.submit(&server.http, APPROVED_CARD).await).await;
    assert!(!retry.status.is_server_error());
    assert_eq!(
        attempts(&server, &id).await,
        1,
        "the payer cannot pay again"
    );

    let returned = Answer::of(
        server
            .http
            .get(format!("{}/pay/return/{id}", server.base))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(returned.status, 303);
    assert!(returned
        .location
        .unwrap_or_default()
        .starts_with("https://merchant.example/ok?"));
    assert_eq!(assert_agrees(&server, &stripe, &id).await, "Successful");
}

/// Scenario 3: the payer cancels during an open challenge: the intent is cancelled at the
/// processor first, so completing 3DS there afterwards charges nothing; and when the payer had
/// already passed 3DS, the cancel records the payment instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_during_a_challenge_cancels_at_the_processor_first() {
    let stripe = fake_stripe().await;
    let server = service("money-3ds-cancel", &stripe, &[]).await;

    let id = server.new_checkout("3DS-CANCEL").await;
    let (form, _) = pay(&server, &id, CHALLENGE_CARD).await;
    let intent = only_intent(&stripe, &id);
    let cancelled = Answer::of(form.cancel(&server.http).await).await;
    assert_eq!(cancelled.status, 303);
    assert!(cancelled
        .location
        .unwrap_or_default()
        .starts_with("https://merchant.example/cart?"));
    assert_eq!(stripe.intent(&intent).unwrap().status, "canceled");
    assert!(
        !stripe.complete_3ds(&intent, true),
        "too late at the processor"
    );
    assert_eq!(assert_agrees(&server, &stripe, &id).await, "Cancelled");

    let paid_first = server.new_checkout("3DS-PAID-FIRST").await;
    let (form, _) = pay(&server, &paid_first, CHALLENGE_CARD).await;
    let intent = only_intent(&stripe, &paid_first);
    assert!(stripe.complete_3ds(&intent, true));
    let cancelled = Answer::of(form.cancel(&server.http).await).await;
    assert!(cancelled
        .location
        .unwrap_or_default()
        .starts_with("https://merchant.example/ok?"));
    assert_eq!(
        assert_agrees(&server, &stripe, &paid_first).await,
        "Successful"
    );
}

/// Scenario 4: a challenge left open expires: the read cancels the intent first and reports
/// Expired, freeing the reference; one passed at the processor before expiry is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_challenge_expires_only_after_the_processor_cancelled_it() {
    let stripe = fake_stripe().await;
    let server = service("money-3ds-expiry", &stripe, &[]).await;

    let reference = format!("3DS-EXPIRE-{}", &crate::support::server::uuid_like()[..8]);
    let id = server.start_checkout(&reference).await;
    pay(&server, &id, CHALLENGE_CARD).await;
    let intent = only_intent(&stripe, &id);
    server.expire_session(&id).await;
    assert_eq!(state_of(&server, &id).await, "Expired");
    assert_eq!(stripe.intent(&intent).unwrap().status, "canceled");
    assert!(
        !stripe.complete_3ds(&intent, true),
        "too late at the processor"
    );
    assert_eq!(assert_agrees(&server, &stripe, &id).await, "Expired");
    // The reference is free again.
    server.start_checkout(&reference).await;

    let paid = server.new_checkout("3DS-PAID-THEN-EXPIRED").await;
    pay(&server, &paid, CHALLENGE_CARD).await;
    let intent = only_intent(&stripe, &paid);
    assert!(stripe.complete_3ds(&intent, true));
    server.expire_session(&paid).await;
    assert_eq!(assert_agrees(&server, &stripe, &paid).await, "Successful");

    // Left alone, the expiry sweep does the same without any read.
    let swept = server.new_checkout("3DS-SWEPT").await;
    pay(&server, &swept, CHALLENGE_CARD).await;
    let intent = only_intent(&stripe, &swept);
    server.expire_session(&swept).await;
    let started = std::time::Instant::now();
    while stripe.intent(&intent).unwrap().status != "canceled" {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the sweep cancels it"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(assert_agrees(&server, &stripe, &swept).await, "Expired");
}

/// Scenario 5: with the processor down, more unknown attempts than one sweep takes; once it
/// is back, every one is settled, each sweep within its bound of processor calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reconciliation_settles_a_backlog_in_bounded_sweeps() {
    let stripe = fake_stripe().await;
    let server = service(
        "money-backlog",
        &stripe,
        &[("CHECKOUT__CHECKOUT__RECONCILE_BATCH", "10")],
    )
    .await;
    stripe.inject_always(Call::CreateIntent, When::Before, Fault::Status(503));
    let mut ids = Vec::new();
    for n in 0..30 {
        let id = server.new_checkout(&format!("BACKLOG-{n}")).await;
        let (_, answer) = pay(&server, &id, APPROVED_CARD).await;
        assert!(!answer.status.is_server_error());
        ids.push(id);
    }
    for id in &ids {
        assert_eq!(state_of(&server, id).await, "Processing");
    }
    stripe.clear_faults();
    for id in &ids {
        let state = wait_while(&server, id, "Processing", Duration::from_secs(60)).await;
        assert_eq!(state, "Successful", "{id}");
        assert_eq!(charged(&stripe, id), 1);
    }
    // Every sweep kept to its bound.
    let log = server.log();
    let calls: Vec<u64> = log
        .lines()
        .filter(|l| l.contains("reconciled attempts whose answer was lost"))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["fields"]["processor_calls"].as_u64())
        .collect();
    assert!(!calls.is_empty(), "the sweeps logged their calls");
    assert!(calls.iter().all(|c| *c <= 10), "{calls:?}");
    eprintln!(
        "backlog of 30 settled in {} sweeps with at most {} calls each",
        calls.len(),
        calls.iter().max().unwrap_or(&0)
    );
}

/// Scenario 6: a process killed while its attempt is in flight: after the restart the attempt
/// is still the session's one attempt, no second attempt can begin, and the first one's late
/// outcome settles the session it belongs to.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_attempt_in_flight_during_a_crash_is_settled_once_and_no_other_attempt_begins() {
    let stripe = fake_stripe().await;
    let mut server = service("money-crash", &stripe, &[]).await;
    stripe.inject(
        Call::CreateIntent,
        When::Before,
        Fault::Delay(Duration::from_millis(3000)),
    );
    let id = server.new_checkout("CRASH").await;
    let form = crate::support::payer::CardForm::open(&server.http, &server.base, &id).await;
    let http = server.http.clone();
    let posting = tokio::spawn({
        let form = form.clone();
        // The connection dies with the server: no answer is expected.
        async move {
            http.post(&form.action)
                .header("Cookie", &form.cookie)
                .form(&[
                    ("checkoutSessionId", form.session_id.as_str()),
                    ("csrfToken", form.csrf_token.as_str()),
                    ("cardholderName", "Ada Lovelace"),
                    ("cardNumber", APPROVED_CARD),
                    ("cardExpiry", "11/34"),
                    ("cardCvv", "918"),
                ])
                .send()
                .await
                .map(|r| r.status())
        }
    });
    // Kill the server while the processor works on the request.
    let started = std::time::Instant::now();
    while stripe
        .requests()
        .iter()
        .all(|r| r.call != Some(Call::CreateIntent))
    {
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill_hard();
    let _ = posting.await;
    server.restart().await;
    assert_eq!(state_of(&server, &id).await, "Processing");
    // The payer's open page posts again, to the restarted server (its port may differ).
    let mut form = form;
    form.action = format!("{}/pay/process-payment", server.base);
    let again = form.submit(&server.http, APPROVED_CARD).await;
    assert!(!again.status().is_server_error());
    assert_eq!(
        attempts(&server, &id).await,
        1,
        "no second attempt while the first is open"
    );
    let settled = wait_while(&server, &id, "Processing", Duration::from_secs(20)).await;
    assert_eq!(settled, "Successful");
    assert_eq!(assert_agrees(&server, &stripe, &id).await, "Successful");
    assert_eq!(stripe.executions(Call::CreateIntent), 1);
}

/// Scenario 7: an anonymous GET of the processor return moves nothing the processor has not
/// moved, and never cancels.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_anonymous_return_moves_nothing_the_processor_has_not_moved() {
    let stripe = fake_stripe().await;
    let server = service("money-return", &stripe, &[]).await;
    let anonymous = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    let pending = server.new_checkout("RETURN-PENDING").await;
    let answer = anonymous
        .get(format!("{}/pay/return/{pending}", server.base))
        .send()
        .await
        .unwrap();
    assert!(!answer.status().is_server_error());
    assert_eq!(state_of(&server, &pending).await, "Pending");

    let id = server.new_checkout("RETURN-3DS").await;
    pay(&server, &id, CHALLENGE_CARD).await;
    let intent = only_intent(&stripe, &id);
    for _ in 0..3 {
        anonymous
            .get(format!("{}/pay/return/{id}", server.base))
            .send()
            .await
            .unwrap();
    }
    assert_eq!(state_of(&server, &id).await, "ChallengeRequired");
    assert_eq!(stripe.executions(Call::CancelIntent), 0, "never cancelled");
    assert_eq!(stripe.intent(&intent).unwrap().status, "requires_action");
    // The payer fails 3DS at the processor: the return records exactly that.
    assert!(stripe.complete_3ds(&intent, false));
    anonymous
        .get(format!("{}/pay/return/{id}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(assert_agrees(&server, &stripe, &id).await, "Failed");
}

/// Scenario 8: a deactivated terminal's open sessions take no payment, and can still be read.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deactivated_terminals_open_sessions_take_no_payment() {
    let stripe = fake_stripe().await;
    let server = service("money-deactivated", &stripe, &[]).await;
    let id = server.new_checkout("DEACTIVATED").await;
    let form = crate::support::payer::CardForm::open(&server.http, &server.base, &id).await;
    server.set_terminal_active(&server.terminal, false).await;
    let answer = Answer::after(&form, &server.http, APPROVED_CARD).await;
    assert_eq!(answer.code(), Some("SVC_005"), "{}", answer.body);
    let page = Answer::of(
        server
            .http
            .get(format!("{}/pay/checkout-payment/{id}", server.base))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(page.code(), Some("SVC_005"));
    assert!(!page.body.contains("id=\"card-form\""));
    assert_eq!(stripe.executions(Call::CreatePaymentMethod), 0);
    assert_eq!(stripe.executions(Call::CreateIntent), 0);
    assert_eq!(state_of(&server, &id).await, "Pending", "still readable");
}

/// Scenario 9: the card post that leads to the processor's 3DS page is allowed to by the
/// page's Content-Security-Policy (Chrome applies `form-action` to the redirect after a form
/// post), with Stripe's default 3DS origin; the whole hosted flow then completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_card_form_may_lead_to_the_processors_3ds_pages() {
    let stripe = fake_stripe().await;
    let server = service("money-csp", &stripe, &[]).await;
    let id = server.new_checkout("CSP").await;
    let (_, answer) = pay(&server, &id, CHALLENGE_CARD).await;
    assert_eq!(answer.status, 303);
    let challenge = answer.location.clone().expect("to the 3DS page");
    let origin = stripe.base_url.origin().ascii_serialization();
    assert!(challenge.starts_with(&origin), "{challenge}");
    let form_action = answer
        .csp
        .split(';')
        .map(str::trim)
        .find(|d| d.starts_with("form-action"))
        .unwrap_or_default()
        .to_owned();
    assert!(form_action.contains(&origin), "{form_action}");
    assert!(
        form_action.contains("https://hooks.stripe.com"),
        "{form_action}"
    );

    // The payer passes 3DS on the processor's page and comes back.
    let page = server.http.get(&challenge).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let intent = only_intent(&stripe, &id);
    let back = server
        .http
        .post(format!("{origin}/3ds/{intent}"))
        .form(&[("result", "pass")])
        .send()
        .await
        .unwrap();
    assert_eq!(back.status(), 303);
    let return_url = back.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        return_url.starts_with(&format!("{}/pay/return/{id}", server.base)),
        "{return_url}"
    );
    let done = Answer::of(server.http.get(&return_url).send().await.unwrap()).await;
    assert_eq!(done.status, 303);
    assert!(done
        .location
        .unwrap_or_default()
        .starts_with("https://merchant.example/ok?"));
    assert_eq!(assert_agrees(&server, &stripe, &id).await, "Successful");
}

/// Every kind of processor fault at the authorisation, with what the payer is shown, what the
/// merchant reads, and how long it took; printed for `docs/reliability.md`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_processor_fault_ends_as_the_processor_says() {
    let stripe = fake_stripe().await;
    // The first check comes after the card post's own calls (so that the page shows what the
    // post itself learnt).
    let server = service(
        "money-faults",
        &stripe,
        &[("CHECKOUT__CHECKOUT__RECONCILE_AFTER_SECONDS", "4")],
    )
    .await;
    let mut figures = Vec::new();
    let limit = Duration::from_millis(3 * crate::TIMEOUT_MS + 1500);

    // No answer, and nothing done: the replay does the work, or reconciliation does.
    for (name, fault) in [
        ("hang", Fault::Hang),
        ("reset", Fault::Reset),
        ("503", Fault::Status(503)),
    ] {
        stripe.inject(Call::CreateIntent, When::Before, fault);
        let id = server.new_checkout(name).await;
        let started = std::time::Instant::now();
        let (_, answer) = pay(&server, &id, APPROVED_CARD).await;
        let took = started.elapsed();
        assert!(took <= limit, "{name}: answered in {took:?}");
        assert_eq!(
            answer.status, 303,
            "{name}: the replay did the work: {}",
            answer.body
        );
        assert_eq!(assert_agrees(&server, &stripe, &id).await, "Successful");
        figures.push(format!(
            "{name} before any work → the immediate replay authorises, Successful, 1 charge, in {} ms",
            took.as_millis()
        ));
    }

    // No answer although the work was done: the replay gets the saved answer.
    for (name, fault) in [("reset", Fault::Reset), ("close", Fault::Close)] {
        stripe.inject(Call::CreateIntent, When::After, fault);
        let id = server.new_checkout(name).await;
        let (_, answer) = pay(&server, &id, APPROVED_CARD).await;
        assert_eq!(answer.status, 303, "{name}");
        assert_eq!(assert_agrees(&server, &stripe, &id).await, "Successful");
        figures.push(format!(
            "{name} after the work → the replay returns the saved answer, Successful, 1 charge"
        ));
    }

    // Both the request and its replay unanswered: Processing until reconciliation learns it.
    stripe.inject(Call::CreateIntent, When::Before, Fault::Hang);
    stripe.inject(Call::CreateIntent, When::Before, Fault::Hang);
    let id = server.new_checkout("down").await;
    let (_, answer) = pay(&server, &id, APPROVED_CARD).await;
    assert_eq!(
        answer.status, 303,
        "the result is a GET page: {}",
        answer.body
    );
    let location = answer.location.clone().unwrap_or_default();
    assert!(
        location.starts_with(&format!("/pay/checkout-payment/{id}")),
        "{location}"
    );
    let page = Answer::of(
        server
            .http
            .get(format!("{}{location}", server.base))
            .send()
            .await
            .expect("the page"),
    )
    .await;
    assert!(
        page.body.contains("data-state=\"Processing\""),
        "{}",
        page.body
    );
    assert_eq!(state_of(&server, &id).await, "Processing");
    let started = std::time::Instant::now();
    let settled = wait_while(&server, &id, "Processing", Duration::from_secs(20)).await;
    assert_eq!(settled, "Successful");
    assert_eq!(assert_agrees(&server, &stripe, &id).await, "Successful");
    figures.push(format!(
        "request and replay unanswered → Processing, settled Successful by reconciliation {:.1} s later, 1 charge",
        started.elapsed().as_secs_f64()
    ));

    // A 500 Stripe saved under the key: no replay can tell, so the session stays Processing
    // (neither paid nor payable) and never claims a result.
    stripe.inject(Call::CreateIntent, When::After, Fault::Status(500));
    let saved = server.new_checkout("saved-500").await;
    pay(&server, &saved, APPROVED_CARD).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(state_of(&server, &saved).await, "Processing");
    assert_eq!(charged(&stripe, &saved), 1, "the processor did charge");
    figures.push(
        "a 500 saved after the work → stays Processing (unknown, never reported paid or payable)"
            .to_owned(),
    );

    // A refusal naming no intent: nothing was made, the payer may retry (SVC_004).
    stripe.inject(Call::CreateIntent, When::Before, Fault::Status(400));
    let refused = server.new_checkout("400").await;
    let (_, answer) = pay(&server, &refused, APPROVED_CARD).await;
    assert_eq!(
        (answer.status.as_u16(), answer.code()),
        (303, Some("SVC_004"))
    );
    assert_eq!(assert_agrees(&server, &stripe, &refused).await, "Pending");
    figures.push("400 naming no intent → SVC_004, Pending, nothing charged".to_owned());

    // A decline: SVC_006, Failed (2), to the fail URL.
    let declined = server.new_checkout("decline").await;
    let (_, answer) = pay(&server, &declined, "4000000000000002").await;
    assert!(answer
        .location
        .unwrap_or_default()
        .starts_with("https://merchant.example/fail?"));
    let record = server.status_record(&declined).await;
    assert_eq!(
        (record["state"].as_str(), record["stateCode"].as_i64()),
        (Some("Failed"), Some(2))
    );
    assert_eq!(charged(&stripe, &declined), 0);
    figures.push("402 decline → SVC_006, Failed (2), nothing charged".to_owned());

    assert!(
        !server.log().contains(APPROVED_CARD),
        "no card number in the server log"
    );
    eprintln!(
        "processor faults (timeout {} ms):\n  {}",
        crate::TIMEOUT_MS,
        figures.join("\n  ")
    );
}
