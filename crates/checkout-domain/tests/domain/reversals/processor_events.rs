//! The processor's own news: each event is read as a hint about one object, which is then
//! read from the processor and recorded through the ledgers' compare-and-set. Duplicates are
//! no-ops, late and reordered events change nothing the ledger already knows, and objects the
//! service does not know are answered and left alone.

use checkout_domain::events::{EventSubject, EventType};
use checkout_domain::ports::{EventLog, NoticeSubject, ProcessorNotice, SessionRepository};
use checkout_domain::session::{DisputeStatus, LedgerState, SessionState};
use checkout_domain::testing::TestKit;
use checkout_domain::usecases::NoticeOutcome;
use checkout_domain::values::{SessionId, TerminalNumber};
use checkout_domain::SvcCode;

use crate::reversals::captures_voids_refunds::{code, events_of, held, paid, processor_reference};
use crate::{d, pay, start};

fn notice(id: &str, subject: NoticeSubject) -> ProcessorNotice {
    ProcessorNotice {
        id: id.to_owned(),
        kind: "test.event".to_owned(),
        subject,
    }
}

fn about_refund(reference: &str) -> NoticeSubject {
    NoticeSubject::Refund {
        reference: reference.to_owned(),
        refund: None,
    }
}

fn about_payment(reference: &str) -> NoticeSubject {
    NoticeSubject::Payment {
        reference: reference.to_owned(),
        attempt: None,
    }
}

fn about_dispute(reference: &str) -> NoticeSubject {
    NoticeSubject::Dispute {
        reference: reference.to_owned(),
    }
}

async fn absorb(kit: &TestKit, notice: &ProcessorNotice) -> NoticeOutcome {
    kit.checkout.absorb_processor_event(notice).await.unwrap()
}

/// The subjects of the events of `kind`, in order.
async fn subjects(kit: &TestKit, kind: EventType) -> Vec<Option<EventSubject>> {
    let terminal = TerminalNumber::parse("T-1").unwrap();
    let events = kit
        .sessions
        .events_after(&terminal, None, 100)
        .await
        .unwrap();
    events
        .into_iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.about)
        .collect()
}

async fn state_of(kit: &TestKit, id: SessionId) -> SessionState {
    kit.sessions.get(id).await.unwrap().unwrap().state()
}

#[tokio::test]
async fn a_refund_the_processor_fails_after_confirming_it_is_given_back_and_announced() {
    let kit = TestKit::new();
    let (id, _) = paid(&kit, "LATE-FAIL").await;
    let caller = kit.caller("T-1");
    let done = kit
        .checkout
        .refund_payment(&caller, id, Some(d("25.00")))
        .await
        .unwrap();
    let refund = done.refund;
    let reference = refund.processor_reference.clone().unwrap();
    assert_eq!(done.session.money().refunded().value(), d("25.00"));
    // Nothing more can be refunded while it stands.
    let more = kit
        .checkout
        .refund_payment(&caller, id, Some(d("1.00")))
        .await;
    assert_eq!(code(more), Some(SvcCode::Svc011));

    assert!(kit.processor.fail_refund_later(&reference));
    let applied = absorb(&kit, &notice("evt_1", about_refund(&reference))).await;
    assert_eq!(applied, NoticeOutcome::Applied);

    let (session, refunds) = kit.checkout.payment_refunds(&caller, id).await.unwrap();
    assert_eq!(refunds[0].state, LedgerState::Failed);
    assert_eq!(
        session.money().refunded().value(),
        d("0"),
        "the money is the merchant's again"
    );
    assert_eq!(
        subjects(&kit, EventType::PaymentRefundFailed).await,
        [Some(EventSubject::Refund(refund.id))]
    );
    // Its amount is free again: the merchant can refund it anew.
    let again = kit
        .checkout
        .refund_payment(&caller, id, Some(d("25.00")))
        .await;
    assert!(again.is_ok(), "{again:?}");
}

#[tokio::test]
async fn an_event_id_is_absorbed_once_and_a_late_repeat_changes_nothing() {
    let kit = TestKit::new();
    let (id, _) = paid(&kit, "DUP-EVENT").await;
    let caller = kit.caller("T-1");
    let done = kit
        .checkout
        .refund_payment(&caller, id, Some(d("5.00")))
        .await
        .unwrap();
    let reference = done.refund.processor_reference.clone().unwrap();
    kit.processor.fail_refund_later(&reference);
    let event = notice("evt_dup", about_refund(&reference));
    assert_eq!(absorb(&kit, &event).await, NoticeOutcome::Applied);
    assert_eq!(absorb(&kit, &event).await, NoticeOutcome::Duplicate);
    // Another event about the same refund (a retry under a new id) reads it again: still
    // failed, nothing changes, nothing is announced twice.
    let other = notice("evt_other", about_refund(&reference));
    assert_eq!(absorb(&kit, &other).await, NoticeOutcome::Applied);
    assert_eq!(events_of(&kit, EventType::PaymentRefundFailed).await, 1);
    let (session, _) = kit.checkout.payment_refunds(&caller, id).await.unwrap();
    assert_eq!(session.money().refunded().value(), d("0"));
}

#[tokio::test]
async fn an_event_about_an_unknown_object_is_answered_and_changes_nothing() {
    let kit = TestKit::new();
    let unknown = [
        notice("evt_u1", about_payment("pi_someone_else")),
        notice("evt_u2", about_refund("re_someone_else")),
        notice("evt_u3", about_dispute("dp_someone_else")),
    ];
    for event in &unknown {
        assert_eq!(absorb(&kit, event).await, NoticeOutcome::Unknown);
    }
    let other = notice("evt_o", NoticeSubject::Other);
    assert_eq!(absorb(&kit, &other).await, NoticeOutcome::Ignored);
    // Absorbed: a redelivery is a no-op.
    assert_eq!(absorb(&kit, &unknown[0]).await, NoticeOutcome::Duplicate);
    let terminal = TerminalNumber::parse("T-1").unwrap();
    let events = kit
        .sessions
        .events_after(&terminal, None, 10)
        .await
        .unwrap();
    assert!(events.is_empty());
}

#[tokio::test]
async fn an_authorisation_that_expires_at_the_processor_is_recorded_and_announced() {
    let kit = TestKit::new();
    let id = held(&kit, "EXPIRES").await;
    let reference = processor_reference(&kit, id).await;
    // A hint that says nothing new changes nothing: the processor still holds it.
    let early = notice("evt_e0", about_payment(&reference));
    assert_eq!(absorb(&kit, &early).await, NoticeOutcome::Applied);
    assert_eq!(state_of(&kit, id).await, SessionState::ApprovedTransaction);

    assert!(kit.processor.expire_authorization(&reference));
    let expired = notice("evt_e1", about_payment(&reference));
    assert_eq!(absorb(&kit, &expired).await, NoticeOutcome::Applied);
    assert_eq!(state_of(&kit, id).await, SessionState::Expired);
    assert_eq!(
        events_of(&kit, EventType::PaymentAuthorizationExpired).await,
        1
    );
    // A capture now is refused, naming the expiry; nothing was charged.
    let caller = kit.caller("T-1");
    let capture = kit.checkout.capture_payment(&caller, id, None).await;
    assert_eq!(code(capture), Some(SvcCode::Svc008));
    assert_eq!(kit.processor.charges_for(id), 0);
}

#[tokio::test]
async fn a_capture_refused_because_the_authorisation_expired_records_the_expiry() {
    let kit = TestKit::new();
    let id = held(&kit, "EXPIRED-CAPTURE").await;
    let reference = processor_reference(&kit, id).await;
    kit.processor.expire_authorization(&reference);
    // No event came (or it is still on its way): the refused capture finds out.
    let caller = kit.caller("T-1");
    let capture = kit.checkout.capture_payment(&caller, id, None).await;
    let error = capture.expect_err("refused");
    assert_eq!(error.svc_code(), Some(SvcCode::Svc008));
    assert!(error.to_string().contains("expired"), "{error}");
    assert_eq!(state_of(&kit, id).await, SessionState::Expired);
    assert_eq!(
        events_of(&kit, EventType::PaymentAuthorizationExpired).await,
        1
    );
    // The event arriving afterwards changes nothing.
    let late = notice("evt_late", about_payment(&reference));
    assert_eq!(absorb(&kit, &late).await, NoticeOutcome::Applied);
    assert_eq!(
        events_of(&kit, EventType::PaymentAuthorizationExpired).await,
        1
    );
}

#[tokio::test]
async fn an_event_resolves_an_attempt_whose_answer_was_lost() {
    let kit = TestKit::new();
    let session = start(&kit, "LOST-THEN-EVENT").await;
    // The authorisation's answers are lost; the processor does it afterwards (its retry).
    kit.processor.time_out_authorizations(true);
    pay(&kit, session.id()).await;
    assert_eq!(state_of(&kit, session.id()).await, SessionState::Processing);
    kit.processor.time_out_authorizations(false);
    let attempt = crate::support::latest_attempt(&kit, session.id()).await;
    // The event carries the attempt the intent was made for: it is settled now, not at the
    // sweep's next turn, with the attempt's own key.
    let event = notice(
        "evt_pi",
        NoticeSubject::Payment {
            reference: "pi_lost".into(),
            attempt: Some(attempt.id),
        },
    );
    assert_eq!(absorb(&kit, &event).await, NoticeOutcome::Applied);
    assert_eq!(state_of(&kit, session.id()).await, SessionState::Successful);
    assert_eq!(kit.processor.charges_for(session.id()), 1);
    assert_eq!(events_of(&kit, EventType::PaymentSucceeded).await, 1);
}

#[tokio::test]
async fn disputes_move_only_forward_whatever_order_their_events_arrive_in() {
    let kit = TestKit::new();
    let (id, payment) = paid(&kit, "DISPUTED").await;
    let caller = kit.caller("T-1");
    kit.processor
        .set_dispute("dp_1", &payment, d("25.00"), DisputeStatus::NeedsResponse);
    assert_eq!(
        absorb(&kit, &notice("evt_d1", about_dispute("dp_1"))).await,
        NoticeOutcome::Applied
    );
    let status = kit.checkout.payment_status(&caller, id).await.unwrap();
    assert_eq!(status.disputes().len(), 1);
    assert_eq!(status.disputes()[0].status, DisputeStatus::NeedsResponse);
    assert_eq!(status.disputes()[0].amount, d("25.00"));

    // The bank decides; the "closed" event overtakes an "updated" one.
    kit.processor
        .set_dispute("dp_1", &payment, d("25.00"), DisputeStatus::Lost);
    absorb(&kit, &notice("evt_d3", about_dispute("dp_1"))).await;
    absorb(&kit, &notice("evt_d2", about_dispute("dp_1"))).await;
    let status = kit.checkout.payment_status(&caller, id).await.unwrap();
    assert_eq!(status.disputes()[0].status, DisputeStatus::Lost);
    let opened = subjects(&kit, EventType::PaymentDisputeOpened).await;
    let closed = subjects(&kit, EventType::PaymentDisputeClosed).await;
    assert_eq!((opened.len(), closed.len()), (1, 1), "one event per change");
    assert_eq!(
        closed[0],
        Some(EventSubject::Dispute {
            reference: "dp_1".into(),
            status: DisputeStatus::Lost
        })
    );

    // A dispute first seen already decided is opened and closed at once.
    kit.processor
        .set_dispute("dp_2", &payment, d("5.00"), DisputeStatus::Won);
    absorb(&kit, &notice("evt_d4", about_dispute("dp_2"))).await;
    assert_eq!(events_of(&kit, EventType::PaymentDisputeOpened).await, 2);
    assert_eq!(events_of(&kit, EventType::PaymentDisputeClosed).await, 2);
}

#[tokio::test]
async fn an_event_absorbed_while_the_processor_is_down_is_absorbed_on_its_redelivery() {
    let kit = TestKit::new();
    let (_, payment) = paid(&kit, "DOWN-THEN-UP").await;
    kit.processor
        .set_dispute("dp_9", &payment, d("25.00"), DisputeStatus::NeedsResponse);
    kit.processor.set_down(true);
    let event = notice("evt_down", about_dispute("dp_9"));
    assert!(kit.checkout.absorb_processor_event(&event).await.is_err());
    kit.processor.set_down(false);
    assert_eq!(absorb(&kit, &event).await, NoticeOutcome::Applied);
    assert_eq!(events_of(&kit, EventType::PaymentDisputeOpened).await, 1);
}

#[tokio::test]
async fn an_event_never_replays_an_attempt_past_the_processors_key_lifetime() {
    let kit = TestKit::new();
    let session = start(&kit, "LOST-LONG-AGO").await;
    kit.processor.time_out_authorizations(true);
    pay(&kit, session.id()).await;
    kit.processor.time_out_authorizations(false);
    let attempt = crate::support::latest_attempt(&kit, session.id()).await;
    let sent = kit.processor.authorize_calls();
    // A day later the processor may have forgotten the key: a replay could charge anew.
    kit.clock.advance(time::Duration::hours(24));
    let event = notice(
        "evt_old",
        NoticeSubject::Payment {
            reference: "pi_unknown_to_the_ledger".into(),
            attempt: Some(attempt.id),
        },
    );
    assert_eq!(absorb(&kit, &event).await, NoticeOutcome::Applied);
    assert_eq!(kit.processor.authorize_calls(), sent, "nothing sent again");
    assert_eq!(kit.processor.charges_for(session.id()), 0);
    assert_eq!(state_of(&kit, session.id()).await, SessionState::Processing);
}
