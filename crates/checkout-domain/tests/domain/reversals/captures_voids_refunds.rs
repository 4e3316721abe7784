//! Capture, void, refund and cancel after a payment, each recorded in the reversal ledger
//! before the processor is asked; lost answers settled by a retry under the same key or by
//! the reconciliation sweep, never by a second processor operation.

use checkout_domain::events::EventType;
use checkout_domain::ports::{EventLog, ProcessorOutcome, RefundOutcome, ReversalLedger};
use checkout_domain::session::{LedgerState, SessionRequest, SessionState};
use checkout_domain::terminal::CaptureMethod;
use checkout_domain::testing::TestKit;
use checkout_domain::usecases::{IdempotentAnswer, IdempotentRequest};
use checkout_domain::values::{IdempotencyKey, RequestFingerprint, SessionId, TerminalNumber};
use checkout_domain::{CheckoutError, SvcCode};
use time::Duration;

use crate::{d, pay, start};

/// A session of `T-1` paid with capture (Successful, 25.00 USD); its processor reference.
pub(super) async fn paid(kit: &TestKit, reference: &str) -> (SessionId, String) {
    let session = start(kit, reference).await;
    pay(kit, session.id()).await;
    (session.id(), processor_reference(kit, session.id()).await)
}

/// A session of `T-1` authorised without capture (ApprovedTransaction, 25.00 USD).
pub(super) async fn held(kit: &TestKit, reference: &str) -> SessionId {
    let session = start(kit, reference).await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Approved {
        processor_reference: format!("pi_held_{reference}"),
        captured: false,
    }));
    let outcome = pay(kit, session.id()).await;
    assert_eq!(outcome.session.state(), SessionState::ApprovedTransaction);
    session.id()
}

/// The processor's reference of the session's payment.
pub(super) async fn processor_reference(kit: &TestKit, id: SessionId) -> String {
    let attempt = crate::support::latest_attempt(kit, id).await;
    attempt.processor_reference.unwrap()
}

fn once(key: &str, body: u8) -> IdempotentRequest {
    IdempotentRequest {
        key: IdempotencyKey::parse(key).unwrap(),
        fingerprint: RequestFingerprint::from_bytes([body; 32]),
    }
}

/// The SVC code of an error, for assertions.
pub(super) fn code<T: std::fmt::Debug>(result: Result<T, CheckoutError>) -> Option<SvcCode> {
    result.expect_err("an error").svc_code()
}

/// The status a rendered answer carries, and whether it was a replay.
fn status_of(answer: &IdempotentAnswer) -> (u16, bool) {
    (answer.response().status, answer.is_replay())
}

/// Renders like the HTTP layer: 200 for a success, the SVC code's status otherwise.
fn render<T>(result: &Result<T, CheckoutError>) -> checkout_domain::ports::SavedResponse {
    checkout_domain::ports::SavedResponse {
        status: match result {
            Ok(_) => 200,
            Err(e) => e.svc_code().map_or(500, |c| c.spec().http_status),
        },
        content_type: "application/json".into(),
        body: Vec::new(),
    }
}

pub(super) async fn events_of(kit: &TestKit, kind: EventType) -> usize {
    let terminal = TerminalNumber::parse("T-1").unwrap();
    let page = kit
        .sessions
        .events_after(&terminal, None, 100)
        .await
        .unwrap();
    page.iter().filter(|e| e.kind == kind).count()
}

#[tokio::test]
async fn a_lost_refund_answer_is_kept_unknown_and_the_keyed_retry_refunds_once() {
    let kit = TestKit::new();
    let (id, reference) = paid(&kit, "REFUND-LOST").await;
    let caller = kit.caller("T-1");
    // The refund is done at the processor; both answers of the request path are lost.
    kit.processor.lose_refund_answers(2);
    let first = kit
        .checkout
        .refund_payment_once(&caller, id, Some(d("4.00")), &once("r-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&first), (422, false), "SVC_009: not confirmed");
    let (_, refunds) = kit.checkout.payment_refunds(&caller, id).await.unwrap();
    assert_eq!(refunds.len(), 1);
    assert_eq!(refunds[0].state, LedgerState::Unknown);
    assert_eq!(kit.processor.refunds_of(&reference), [d("4.00")]);

    // The retry is not a replay of a frozen SVC_009: it asks about the same refund.
    let retry = kit
        .checkout
        .refund_payment_once(&caller, id, Some(d("4.00")), &once("r-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&retry), (200, false));
    let again = kit
        .checkout
        .refund_payment_once(&caller, id, Some(d("4.00")), &once("r-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&again), (200, true), "settled: replayed");
    assert_eq!(
        kit.processor.refunds_of(&reference),
        [d("4.00")],
        "refunded once"
    );
    let (session, refunds) = kit.checkout.payment_refunds(&caller, id).await.unwrap();
    assert_eq!(refunds.len(), 1);
    assert_eq!(session.money().refunded().value(), d("4.00"));
    assert_eq!(events_of(&kit, EventType::PaymentRefunded).await, 1);
}

#[tokio::test]
async fn a_key_outlives_its_replay_window_and_still_names_one_refund() {
    let kit = TestKit::new();
    let (id, reference) = paid(&kit, "REFUND-KEY-AGES").await;
    let caller = kit.caller("T-1");
    let first = kit
        .checkout
        .refund_payment_once(&caller, id, Some(d("3.00")), &once("r-2", 2), render)
        .await
        .unwrap();
    assert_eq!(status_of(&first), (200, false));
    // The idempotency store forgets the key after its window; the ledger does not.
    kit.clock.advance(Duration::hours(25));
    kit.checkout.forget_idempotency_keys().await.unwrap();
    let late = kit
        .checkout
        .refund_payment_once(&caller, id, Some(d("3.00")), &once("r-2", 2), render)
        .await
        .unwrap();
    assert_eq!(status_of(&late), (200, false));
    assert_eq!(kit.processor.refunds_of(&reference), [d("3.00")]);
    // The same key for another amount names the refund already made: refused.
    let other = kit
        .checkout
        .refund_payment_once(&caller, id, Some(d("5.00")), &once("r-2", 9), render)
        .await;
    assert!(
        matches!(other, Err(CheckoutError::Idempotency(_))),
        "{other:?}"
    );
    assert_eq!(kit.processor.refunds_of(&reference), [d("3.00")]);
}

#[tokio::test]
async fn the_sweep_settles_a_lost_refund_and_announces_it() {
    let kit = TestKit::new();
    let (id, reference) = paid(&kit, "REFUND-SWEEP").await;
    let caller = kit.caller("T-1");
    kit.processor.lose_refund_answers(2);
    let lost = kit
        .checkout
        .refund_payment(&caller, id, Some(d("6.00")))
        .await;
    assert_eq!(code(lost), Some(SvcCode::Svc009));
    // Reserved: only 19.00 remains refundable.
    let above = kit
        .checkout
        .refund_payment(&caller, id, Some(d("20.00")))
        .await;
    assert_eq!(code(above), Some(SvcCode::Svc011));

    let early = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(early.reversals_examined, 0, "not due yet");
    kit.clock.advance(Duration::seconds(31));
    let report = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(
        (report.reversals_examined, report.reversals_settled),
        (1, 1)
    );
    let (session, refunds) = kit.checkout.payment_refunds(&caller, id).await.unwrap();
    assert_eq!(refunds[0].state, LedgerState::Succeeded);
    assert_eq!(refunds[0].next_check_at, None);
    assert_eq!(session.money().refunded().value(), d("6.00"));
    assert_eq!(kit.processor.refunds_of(&reference), [d("6.00")]);
    assert_eq!(events_of(&kit, EventType::PaymentRefunded).await, 1);
    kit.clock.advance(Duration::hours(2));
    let after = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(
        after.reversals_examined, 0,
        "settled rows are never asked again"
    );
}

#[tokio::test]
async fn a_refund_without_a_reference_is_left_for_review_after_the_key_lifetime() {
    let kit = TestKit::new();
    let (id, reference) = paid(&kit, "REFUND-REVIEW").await;
    let caller = kit.caller("T-1");
    // The processor is unreachable: nothing is refunded, nothing is known.
    kit.processor.set_down(true);
    let lost = kit
        .checkout
        .refund_payment(&caller, id, Some(d("2.00")))
        .await;
    assert_eq!(code(lost), Some(SvcCode::Svc009));
    kit.clock.advance(Duration::hours(24));
    let report = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(report.reversals_given_up, 1);
    kit.processor.set_down(false);
    kit.clock.advance(Duration::hours(2));
    let later = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(
        later.reversals_examined, 0,
        "never replayed once the key may be forgotten"
    );
    assert!(kit.processor.refunds_of(&reference).is_empty());
    let refunds = kit.sessions.refunds(id).await.unwrap();
    assert_eq!(
        refunds[0].state,
        LedgerState::Unknown,
        "reserved, never reported refunded"
    );
}

#[tokio::test]
async fn of_two_different_captures_one_wins_and_each_answer_reports_its_own_amount() {
    let kit = TestKit::new();
    let id = held(&kit, "CAPTURE-RACE").await;
    let caller = kit.caller("T-1");
    let (seven, three) = tokio::join!(
        kit.checkout.capture_payment(&caller, id, Some(d("7.00"))),
        kit.checkout.capture_payment(&caller, id, Some(d("3.00"))),
    );
    let (won, lost, amount) = match (seven, three) {
        (Ok(s), Err(e)) => (s, e, d("7.00")),
        (Err(e), Ok(s)) => (s, e, d("3.00")),
        other => panic!("exactly one capture wins: {other:?}"),
    };
    assert_eq!(
        won.money().captured().map(|c| c.value()),
        Some(amount),
        "the 200 reports what it asked"
    );
    assert_eq!(lost.svc_code(), Some(SvcCode::Svc008));
    let detail = format!("{lost:?}");
    assert!(
        detail.contains("Successful") || detail.contains("pending"),
        "{detail}"
    );
    assert_eq!(
        kit.processor.capture_calls(),
        1,
        "one capture at the processor"
    );
}

#[tokio::test]
async fn a_capture_whose_answer_was_lost_is_retried_with_its_own_key_and_captures_once() {
    let kit = TestKit::new();
    let id = held(&kit, "CAPTURE-LOST").await;
    let caller = kit.caller("T-1");
    kit.processor.lose_capture_answers(1);
    let first = kit
        .checkout
        .capture_payment_once(&caller, id, Some(d("10.00")), &once("c-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&first), (422, false), "SVC_003: lost");
    let status = kit.checkout.payment_status(&caller, id).await.unwrap();
    assert_eq!(
        status.state(),
        SessionState::ApprovedTransaction,
        "not reported captured"
    );

    let retry = kit
        .checkout
        .capture_payment_once(&caller, id, Some(d("10.00")), &once("c-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&retry), (200, false));
    let status = kit.checkout.payment_status(&caller, id).await.unwrap();
    assert_eq!(status.state(), SessionState::Successful);
    assert_eq!(
        status.money().captured().map(|c| c.value()),
        Some(d("10.00"))
    );
    assert_eq!(
        kit.processor.captured_of("pi_held_CAPTURE-LOST"),
        Some(d("10.00"))
    );
    assert_eq!(events_of(&kit, EventType::PaymentCaptured).await, 1);
}

#[tokio::test]
async fn a_lost_capture_without_a_key_is_settled_by_its_retry_or_by_the_sweep() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let by_retry = held(&kit, "CAPTURE-NOKEY").await;
    kit.processor.lose_capture_answers(1);
    let lost = kit.checkout.capture_payment(&caller, by_retry, None).await;
    assert_eq!(code(lost), Some(SvcCode::Svc003));
    let retried = kit
        .checkout
        .capture_payment(&caller, by_retry, None)
        .await
        .unwrap();
    assert_eq!(
        retried.money().captured().map(|c| c.value()),
        Some(d("25.00"))
    );

    let by_sweep = held(&kit, "CAPTURE-SWEEP").await;
    kit.processor.lose_capture_answers(1);
    let lost = kit.checkout.capture_payment(&caller, by_sweep, None).await;
    assert_eq!(code(lost), Some(SvcCode::Svc003));
    let void = kit.checkout.void_payment(&caller, by_sweep).await;
    assert_eq!(code(void), Some(SvcCode::Svc008), "a capture is pending");
    kit.clock.advance(Duration::seconds(31));
    let report = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(report.reversals_settled, 1);
    let status = kit
        .checkout
        .payment_status(&caller, by_sweep)
        .await
        .unwrap();
    assert_eq!(status.state(), SessionState::Successful);
    assert_eq!(events_of(&kit, EventType::PaymentCaptured).await, 2);
}

#[tokio::test]
async fn a_void_releases_the_authorisation_and_a_captured_payment_cannot_be_voided() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let id = held(&kit, "VOID-1").await;
    let keyed = kit
        .checkout
        .void_payment_once(&caller, id, &once("v-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&keyed), (200, false));
    let replay = kit
        .checkout
        .void_payment_once(&caller, id, &once("v-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&replay), (200, true));
    let status = kit.checkout.payment_status(&caller, id).await.unwrap();
    assert_eq!(status.state(), SessionState::Voided);
    let capture = kit.checkout.capture_payment(&caller, id, None).await;
    assert_eq!(code(capture), Some(SvcCode::Svc008));
    assert_eq!(kit.processor.capture_calls(), 0);

    let captured = held(&kit, "VOID-2").await;
    kit.checkout
        .capture_payment(&caller, captured, None)
        .await
        .unwrap();
    let void = kit.checkout.void_payment(&caller, captured).await;
    assert_eq!(code(void), Some(SvcCode::Svc011));
    assert_eq!(events_of(&kit, EventType::PaymentVoided).await, 1);
}

#[tokio::test]
async fn a_keyed_cancel_is_replayed_and_a_paid_session_is_not_cancelled() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let session = start(&kit, "CANCEL-KEY").await;
    let first = kit
        .checkout
        .withdraw_payment_once(&caller, session.id(), &once("x-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&first), (200, false));
    let replay = kit
        .checkout
        .withdraw_payment_once(&caller, session.id(), &once("x-1", 1), render)
        .await
        .unwrap();
    assert_eq!(status_of(&replay), (200, true));
    let (paid_id, _) = paid(&kit, "CANCEL-PAID").await;
    let refused = kit.checkout.withdraw_payment(&caller, paid_id).await;
    assert_eq!(code(refused), Some(SvcCode::Svc008));
}

#[tokio::test]
async fn a_refused_refund_reserves_nothing_and_is_final() {
    let kit = TestKit::new();
    let (id, reference) = paid(&kit, "REFUND-REFUSED").await;
    let caller = kit.caller("T-1");
    kit.processor.push_refund(Ok(RefundOutcome::Failed {
        refund_reference: Some("re_refused".into()),
        reason: "refund_failed".into(),
    }));
    let first = kit
        .checkout
        .refund_payment_once(&caller, id, Some(d("25.00")), &once("r-3", 3), render)
        .await
        .unwrap();
    assert_eq!(status_of(&first), (422, false));
    let replay = kit
        .checkout
        .refund_payment_once(&caller, id, Some(d("25.00")), &once("r-3", 3), render)
        .await
        .unwrap();
    assert_eq!(
        status_of(&replay),
        (422, true),
        "a refusal is final: replayed"
    );
    let whole = kit
        .checkout
        .refund_payment(&caller, id, Some(d("25.00")))
        .await
        .unwrap();
    assert_eq!(whole.refund.state, LedgerState::Succeeded);
    assert_eq!(kit.processor.refunds_of(&reference), [d("25.00")]);
}

#[tokio::test]
async fn a_row_the_sweep_cannot_ask_about_never_stops_the_others() {
    use checkout_domain::ports::SessionRepository;
    use checkout_domain::testing::builders::{at, refund, session};
    let kit = TestKit::new();
    // A captured session with no attempt behind it (no processor reference to ask with), and
    // a refund of it due for a check.
    let mut orphan = session("T-1", "ORPHAN");
    orphan =
        checkout_domain::testing::builders::edit(orphan, |r| r.state = SessionState::Successful);
    kit.sessions.insert(&orphan).await.unwrap();
    let mut stuck = refund(&orphan, "1.00", at(0));
    stuck.next_check_at = Some(kit.checkout.now());
    kit.sessions.reserve_refund(&stuck).await.unwrap();
    // A real refund whose answers were lost.
    let (id, reference) = paid(&kit, "REFUND-NEXT").await;
    kit.processor.lose_refund_answers(2);
    let lost = kit
        .checkout
        .refund_payment(&kit.caller("T-1"), id, Some(d("2.00")))
        .await;
    assert_eq!(code(lost), Some(SvcCode::Svc009));

    kit.clock.advance(Duration::seconds(31));
    let report = kit.checkout.reconcile_due().await.unwrap();
    assert_eq!(report.reversals_failed, 1, "{report:?}");
    assert!(report.first_reversal_error.is_some());
    assert_eq!(report.reversals_settled, 1, "the other refund is settled");
    assert_eq!(kit.processor.refunds_of(&reference), [d("2.00")]);
}

#[tokio::test]
async fn a_session_created_for_manual_capture_is_held_on_an_automatic_terminal() {
    let kit = TestKit::new();
    let request = SessionRequest {
        capture_method: Some("manual".into()),
        ..crate::support::start_request("MANUAL-1")
    };
    let session = kit
        .checkout
        .start_payment(&kit.caller("T-1"), &request)
        .await
        .unwrap();
    assert_eq!(session.capture_method(), Some(CaptureMethod::Manual));
    let outcome = pay(&kit, session.id()).await;
    // The processor was asked to hold the authorisation, and the merchant captures it.
    assert_eq!(outcome.session.state(), SessionState::ApprovedTransaction);
    let attempt = crate::support::latest_attempt(&kit, session.id()).await;
    assert_eq!(attempt.capture_method, CaptureMethod::Manual);
    let captured = kit
        .checkout
        .capture_payment(&kit.caller("T-1"), session.id(), Some(d("10.00")))
        .await
        .unwrap();
    assert_eq!(captured.state(), SessionState::Successful);

    // Without the field, the terminal's method (automatic) applies.
    let plain = start(&kit, "MANUAL-2").await;
    assert_eq!(plain.capture_method(), None);
    assert_eq!(
        pay(&kit, plain.id()).await.session.state(),
        SessionState::Successful
    );
}
