//! The use cases through `TestKit`: a `Checkout` over in-memory adapters, a manual clock and a
//! scripted processor. Covers each rule of spec section 7.4, tokens, payment links and their
//! expiry, the hosted pages, card payments with their redirects, 3DS, processor failures,
//! reconciliation, the expiry sweep, and what an attempt may keep of a card.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::collections::HashMap;
use std::fmt::Debug;

use checkout_domain::auth::{Claims, ClientCredentials, Role, Secret, Terminal};
use checkout_domain::card::CardBrand;
use checkout_domain::ports::{ProcessorOutcome, SessionRepository};
use checkout_domain::session::{
    AttemptState, PaymentSession, SessionFlow, SessionKind, SessionRequest, SessionState,
};
use checkout_domain::testing::{
    TestKit, FAKE_TOKEN_LIFETIME, TEST_CHECKOUT_VALIDITY, TEST_LINK_VALIDITY,
};
use checkout_domain::usecases::{PaymentLink, PaymentResult};
use checkout_domain::values::{
    CallbackHosts, InternalReference, MerchantReference, SessionId, TerminalNumber,
};
use checkout_domain::{AuthFailure, CheckoutError, SvcCode};
use support::{
    card, card_input, d, link_request, pay, start, start_request, BACK_URL, CARD_CVV, CARD_DIGITS,
    CARD_EXPIRY, CARD_HOLDER, CARD_LAST4, CARD_NUMBER, FAIL_URL, SUCCESS_URL,
};
use time::Duration;

const LINK_BASE: &str = "https://checkout.test/pay/link";

// ---- helpers -------------------------------------------------------------------------------

async fn start_with(kit: &TestKit, request: SessionRequest) -> PaymentSession {
    kit.checkout
        .start_payment(&kit.caller("T-1"), &request)
        .await
        .expect("start payment")
}

async fn link(kit: &TestKit, reference: &str) -> PaymentLink {
    kit.checkout
        .generate_payment_link(&kit.caller("T-1"), &link_request(reference))
        .await
        .expect("generate payment link")
}

/// The state the merchant reads on the status route.
async fn status(kit: &TestKit, id: SessionId) -> SessionState {
    kit.checkout
        .payment_status(&kit.caller("T-1"), id)
        .await
        .expect("payment status")
        .state
}

/// The state as stored, without the lazy expiry of the read paths.
async fn stored_state(kit: &TestKit, id: SessionId) -> SessionState {
    kit.sessions.get(id).await.unwrap().expect("stored").state
}

fn svc<T: Debug>(result: Result<T, CheckoutError>) -> SvcCode {
    match result {
        Err(CheckoutError::Service { code, .. }) => code,
        other => panic!("expected a service error, got {other:?}"),
    }
}

fn auth_failure<T: Debug>(result: Result<T, CheckoutError>) -> AuthFailure {
    match result {
        Err(CheckoutError::Unauthenticated(failure)) => failure,
        other => panic!("expected a 401, got {other:?}"),
    }
}

fn validation_keys<T: Debug>(result: Result<T, CheckoutError>) -> Vec<String> {
    match result {
        Err(CheckoutError::Validation(errors)) => errors.fields().keys().cloned().collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

/// Asserts the payer's browser goes to `target` with the session id, reference and state
/// appended.
fn assert_redirects_to(session: &PaymentSession, target: &str) {
    let url = session
        .redirect_url()
        .expect("an integrated checkout redirects");
    let mut bare = url.clone();
    bare.set_query(None);
    assert_eq!(bare.as_str(), target, "{url}");
    let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(query.len(), 3, "{url}");
    assert_eq!(query["state"], session.state.name());
    assert_eq!(query["checkoutSessionId"], session.id.to_string());
    assert_eq!(
        query["transactionReferenceNumber"],
        session.reference.as_str()
    );
}

/// The next authorisation asks for a challenge (hosted by the processor at `challenge_url`).
fn push_challenge(kit: &TestKit, challenge_url: Option<&str>) {
    kit.processor
        .push_authorize(Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference: "pi_3ds".into(),
            challenge_url: challenge_url.map(str::to_owned),
        }));
}

fn credentials(client_id: &str, secret: &str) -> ClientCredentials {
    ClientCredentials {
        client_id: client_id.into(),
        client_secret: Secret::new(secret),
    }
}

fn terminal(number: &str) -> TerminalNumber {
    TerminalNumber::parse(number).unwrap()
}

/// Fails when `text` shows any secret part of the test card.
fn assert_no_card_secrets(text: &str) {
    for secret in [
        CARD_DIGITS,
        &CARD_DIGITS[..12],
        CARD_NUMBER,
        CARD_CVV,
        CARD_EXPIRY,
        "2031",
        CARD_HOLDER,
    ] {
        assert!(!text.contains(secret), "{secret:?} leaked into {text}");
    }
}

// ---- tokens and authentication (spec 5) ----------------------------------------------------

#[tokio::test]
async fn a_token_issued_for_the_right_secret_authenticates_as_the_clients_terminal() {
    let kit = TestKit::new();
    let issued = kit
        .checkout
        .issue_token(&credentials("client-1", "secret-1"))
        .await
        .unwrap();
    assert_eq!(issued.expires_in, FAKE_TOKEN_LIFETIME);
    assert!(!issued.token.expose().is_empty());

    let bearer = issued.token.expose();
    let claims = kit.checkout.authenticate(Some(bearer)).await.unwrap();
    assert_eq!(claims.client_id, "client-1");
    assert_eq!(claims.terminal, terminal("T-1"));
    assert!(claims.has_role(Role::SvcTerminal));
}

#[tokio::test]
async fn a_wrong_or_missing_secret_or_unknown_client_gets_no_token() {
    let kit = TestKit::new();
    for (client, secret) in [
        ("client-1", "secret-2"),
        ("client-1", "SECRET-1"),
        ("client-1", ""),
        ("client-9", "secret-1"),
        ("", "secret-1"),
        ("   ", "secret-1"),
        ("client-1\u{0}", "secret-1"),
    ] {
        let result = kit.checkout.issue_token(&credentials(client, secret)).await;
        assert_eq!(
            auth_failure(result),
            AuthFailure::InvalidCredentials,
            "{client:?}/{secret:?}"
        );
    }
}

#[tokio::test]
async fn an_inactive_client_gets_no_token_even_with_its_secret() {
    let kit = TestKit::new();
    kit.clients.add_client(
        "client-2",
        "secret-2",
        "T-1",
        vec![Role::SvcTerminal],
        false,
    );
    let result = kit
        .checkout
        .issue_token(&credentials("client-2", "secret-2"))
        .await;
    assert_eq!(auth_failure(result), AuthFailure::InvalidCredentials);
}

#[tokio::test]
async fn a_missing_bearer_token_is_unauthenticated() {
    let kit = TestKit::new();
    for bearer in [None, Some(""), Some("   ")] {
        let result = kit.checkout.authenticate(bearer).await;
        assert_eq!(
            auth_failure(result),
            AuthFailure::MissingToken,
            "{bearer:?}"
        );
    }
}

#[tokio::test]
async fn an_unknown_bearer_token_is_unauthenticated() {
    let kit = TestKit::new();
    for bearer in ["fake-token-0", "eyJhbGciOiJub25lIn0.e30.", "garbage"] {
        let result = kit.checkout.authenticate(Some(bearer)).await;
        assert_eq!(auth_failure(result), AuthFailure::InvalidToken, "{bearer}");
    }
}

#[tokio::test]
async fn a_token_without_the_svc_terminal_role_is_unauthenticated() {
    let kit = TestKit::new();
    let claims = Claims {
        roles: vec![],
        ..kit.caller("T-1")
    };
    kit.identity.accept("token-without-role", claims);
    let result = kit.checkout.authenticate(Some("token-without-role")).await;
    assert_eq!(auth_failure(result), AuthFailure::MissingRole);

    // a client registered without the role gets a token, but it opens no protected route
    kit.clients
        .add_client("client-3", "secret-3", "T-1", vec![], true);
    let issued = kit
        .checkout
        .issue_token(&credentials("client-3", "secret-3"))
        .await
        .unwrap();
    let result = kit.checkout.authenticate(Some(issued.token.expose())).await;
    assert_eq!(auth_failure(result), AuthFailure::MissingRole);
}

// ---- rule 7.4.1: a reference is unique per terminal ----------------------------------------

#[tokio::test]
async fn reusing_the_reference_of_an_in_flight_session_is_svc_001() {
    let kit = TestKit::new();
    let first = start(&kit, "ORD-1").await;
    let caller = kit.caller("T-1");

    let again = kit
        .checkout
        .start_payment(&caller, &start_request("ORD-1"))
        .await;
    assert_eq!(svc(again), SvcCode::Svc001);
    let as_link = kit
        .checkout
        .generate_payment_link(&caller, &link_request("ORD-1"))
        .await;
    assert_eq!(svc(as_link), SvcCode::Svc001);

    assert_eq!(kit.sessions.len(), 1);
    assert_eq!(status(&kit, first.id).await, SessionState::Pending);
}

#[tokio::test]
async fn reusing_the_reference_of_a_link_still_open_is_svc_001() {
    let kit = TestKit::new();
    link(&kit, "LNK-1").await;
    kit.clock.advance(TEST_LINK_VALIDITY - Duration::seconds(1));
    let again = kit
        .checkout
        .generate_payment_link(&kit.caller("T-1"), &link_request("LNK-1"))
        .await;
    assert_eq!(svc(again), SvcCode::Svc001);
}

#[tokio::test]
async fn reusing_the_reference_of_a_completed_session_is_svc_001() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");

    let paid = start(&kit, "ORD-PAID").await;
    assert_eq!(
        pay(&kit, paid.id).await.session.state,
        SessionState::Successful
    );

    let failed = start(&kit, "ORD-FAILED").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "insufficient funds".into(),
    }));
    assert_eq!(
        pay(&kit, failed.id).await.session.state,
        SessionState::Failed
    );

    let cancelled = start(&kit, "ORD-CANCELLED").await;
    kit.checkout.cancel_payment(cancelled.id).await.unwrap();

    // even long after, a completed session keeps its reference
    kit.clock.advance(Duration::days(30));
    for reference in ["ORD-PAID", "ORD-FAILED", "ORD-CANCELLED"] {
        let again = kit
            .checkout
            .start_payment(&caller, &start_request(reference))
            .await;
        assert_eq!(svc(again), SvcCode::Svc001, "{reference}");
    }
}

#[tokio::test]
async fn another_terminal_may_use_the_same_reference() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    let mine = start(&kit, "ORD-1").await;
    let theirs = kit
        .checkout
        .start_payment(&kit.caller("T-2"), &start_request("ORD-1"))
        .await
        .unwrap();
    assert_ne!(mine.id, theirs.id);
    assert_eq!(theirs.terminal, terminal("T-2"));
    assert_eq!(theirs.reference, mine.reference);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_creations_with_one_reference_create_exactly_one_session() {
    let kit = TestKit::new();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let checkout = kit.checkout.clone();
            let caller = kit.caller("T-1");
            tokio::spawn(async move {
                checkout
                    .start_payment(&caller, &start_request("ORD-RACE"))
                    .await
            })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => created += 1,
            Err(e) => assert_eq!(e.svc_code(), Some(SvcCode::Svc001), "{e:?}"),
        }
    }
    assert_eq!(created, 1);
    assert_eq!(kit.sessions.len(), 1);
}

// ---- rule 7.4.2: the terminal must be provisioned ------------------------------------------

#[tokio::test]
async fn a_terminal_never_provisioned_is_svc_005() {
    let kit = TestKit::new();
    let result = kit
        .checkout
        .start_payment(&kit.caller("T-9"), &start_request("ORD-1"))
        .await;
    assert_eq!(svc(result), SvcCode::Svc005);
    let result = kit
        .checkout
        .generate_payment_link(&kit.caller("T-9"), &link_request("ORD-1"))
        .await;
    assert_eq!(svc(result), SvcCode::Svc005);
    assert!(kit.sessions.is_empty());
}

#[tokio::test]
async fn an_inactive_terminal_is_svc_005() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", false);
    let result = kit
        .checkout
        .start_payment(&kit.caller("T-2"), &start_request("ORD-1"))
        .await;
    assert_eq!(svc(result), SvcCode::Svc005);
    assert!(kit.sessions.is_empty());
}

#[tokio::test]
async fn a_terminal_number_other_than_the_callers_is_svc_005() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    let request = SessionRequest {
        terminal_number: Some("T-2".into()),
        ..start_request("ORD-1")
    };
    let result = kit
        .checkout
        .start_payment(&kit.caller("T-1"), &request)
        .await;
    assert_eq!(svc(result), SvcCode::Svc005);
    assert!(kit.sessions.is_empty());
}

#[tokio::test]
async fn an_omitted_terminal_number_is_resolved_from_the_caller() {
    let kit = TestKit::new();
    let omitted = start(&kit, "ORD-1").await;
    assert_eq!(omitted.terminal, terminal("T-1"));

    let explicit = SessionRequest {
        terminal_number: Some("T-1".into()),
        ..start_request("ORD-2")
    };
    assert_eq!(start_with(&kit, explicit).await.terminal, terminal("T-1"));

    // a token issued for client-1 carries its terminal
    let issued = kit
        .checkout
        .issue_token(&credentials("client-1", "secret-1"))
        .await
        .unwrap();
    let caller = kit
        .checkout
        .authenticate(Some(issued.token.expose()))
        .await
        .unwrap();
    let via_token = kit
        .checkout
        .generate_payment_link(&caller, &link_request("ORD-3"))
        .await
        .unwrap();
    assert_eq!(via_token.session.terminal, terminal("T-1"));
}

// ---- rule 7.4.3: validation ----------------------------------------------------------------

#[tokio::test]
async fn an_amount_not_greater_than_zero_is_a_validation_error_on_that_field() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    for amount in ["0", "-10.00"] {
        let request = SessionRequest {
            total_transaction_amount: Some(d(amount)),
            ..start_request("ORD-1")
        };
        let result = kit.checkout.start_payment(&caller, &request).await;
        assert_eq!(validation_keys(result), ["TotalTransactionAmount"]);

        let request = SessionRequest {
            total_transaction_amount: Some(d(amount)),
            ..link_request("ORD-1")
        };
        let result = kit.checkout.generate_payment_link(&caller, &request).await;
        assert_eq!(validation_keys(result), ["TotalTransactionAmount"]);
    }
    assert!(kit.sessions.is_empty());
}

#[tokio::test]
async fn a_missing_required_field_is_a_validation_error_on_that_field() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let request = SessionRequest {
        callback_success_url: None,
        ..start_request("ORD-1")
    };
    let result = kit.checkout.start_payment(&caller, &request).await;
    assert_eq!(validation_keys(result), ["CallbackSuccessUrl"]);

    let request = SessionRequest {
        transaction_reference_number: None,
        ..start_request("ORD-1")
    };
    let result = kit.checkout.start_payment(&caller, &request).await;
    assert_eq!(validation_keys(result), ["TransactionReferenceNumber"]);

    let request = SessionRequest {
        user_email: None,
        ..link_request("ORD-1")
    };
    let result = kit.checkout.generate_payment_link(&caller, &request).await;
    assert_eq!(validation_keys(result), ["UserEmail"]);
    assert!(kit.sessions.is_empty());
}

// ---- rule 7.4.4: a declined card ends Failed -----------------------------------------------

#[tokio::test]
async fn a_declined_card_carries_svc_006_and_the_state_becomes_failed_2() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: Some("ch_declined".into()),
        reason: "card declined".into(),
    }));
    let outcome = pay(&kit, session.id).await;

    assert_eq!(
        outcome.result,
        PaymentResult::Declined {
            reason: "card declined".into()
        }
    );
    assert_eq!(outcome.result.svc_code(), Some(SvcCode::Svc006));
    assert_eq!(outcome.session.state, SessionState::Failed);
    assert_eq!(outcome.session.state.code(), 2);
    assert_redirects_to(&outcome.session, FAIL_URL);

    let polled = status(&kit, session.id).await;
    assert_eq!(polled, SessionState::Failed);
    assert_eq!(polled.code(), 2);

    let attempts = kit.sessions.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].state, AttemptState::Declined);
    assert_eq!(attempts[0].svc_code, Some(SvcCode::Svc006));
}

#[tokio::test]
async fn a_declined_session_is_not_sent_to_the_processor_again() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "do not honour".into(),
    }));
    pay(&kit, session.id).await;
    let second = pay(&kit, session.id).await;
    assert_eq!(second.result, PaymentResult::AlreadyHandled);
    assert_eq!(second.session.state, SessionState::Failed);
    assert_eq!(kit.processor.authorize_calls(), 1);
}

// ---- rule 7.4.5: unknown sessions on the status route --------------------------------------

#[tokio::test]
async fn an_unknown_session_id_on_the_status_route_is_svc_007_404() {
    let kit = TestKit::new();
    start(&kit, "ORD-1").await;
    let unknown = SessionId::from_random_bytes([0x42; 16]);
    let result = kit
        .checkout
        .payment_status(&kit.caller("T-1"), unknown)
        .await;
    let code = svc(result);
    assert_eq!(code, SvcCode::Svc007);
    assert_eq!(code.spec().http_status, 404);
}

#[tokio::test]
async fn another_terminals_session_is_svc_007_as_if_unknown() {
    let kit = TestKit::new();
    kit.add_terminal("T-2", true);
    let session = start(&kit, "ORD-1").await;
    let result = kit
        .checkout
        .payment_status(&kit.caller("T-2"), session.id)
        .await;
    assert_eq!(svc(result), SvcCode::Svc007);
}

#[tokio::test]
async fn the_status_route_reports_the_sessions_state() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    assert_eq!(session.state, SessionState::Pending);
    assert!(InternalReference::parse(session.internal_reference.as_str()).is_ok());

    let before = kit
        .checkout
        .payment_status(&kit.caller("T-1"), session.id)
        .await
        .unwrap();
    assert_eq!(before.state, SessionState::Pending);
    assert_eq!(before.internal_reference, session.internal_reference);
    assert_eq!(before.reference.as_str(), "ORD-1");

    pay(&kit, session.id).await;
    let after = status(&kit, session.id).await;
    assert_eq!(after, SessionState::Successful);
    assert_eq!(after.code(), 1);
}

// ---- payment links -------------------------------------------------------------------------

#[tokio::test]
async fn a_payment_link_is_the_base_slash_the_id_and_expires_after_the_link_validity() {
    let kit = TestKit::new();
    let created_at = kit.clock.now_value();
    let link = link(&kit, "LNK-1").await;
    assert_eq!(link.url, format!("{LINK_BASE}/{}", link.session.id));
    assert_eq!(
        link.url,
        kit.checkout.policy().payment_link(link.session.id)
    );
    assert_eq!(link.session.kind, SessionKind::PaymentLink);
    assert_eq!(link.session.state, SessionState::Pending);
    assert_eq!(link.session.expires_at, created_at + TEST_LINK_VALIDITY);
    assert_eq!(link.session.redirect_url(), None, "links never redirect");
    assert!(link.session.internal_reference.as_str().starts_with("HC"));
}

#[tokio::test]
async fn a_payment_link_can_be_opened_and_paid_until_its_expiry() {
    let kit = TestKit::new();
    let link = link(&kit, "LNK-1").await;
    kit.clock.advance(TEST_LINK_VALIDITY - Duration::seconds(1));

    let page = kit
        .checkout
        .open_page(link.session.id, SessionFlow::PaymentLink)
        .await
        .unwrap();
    assert!(page.is_payable());
    assert_eq!(page.merchant_name, "Merchant T-1");

    let outcome = pay(&kit, link.session.id).await;
    assert_eq!(outcome.result, PaymentResult::Approved);
    assert_eq!(outcome.session.state, SessionState::Successful);
    assert_eq!(outcome.session.redirect_url(), None);
    assert_eq!(
        status(&kit, link.session.id).await,
        SessionState::Successful
    );
}

#[tokio::test]
async fn an_expired_link_cannot_be_opened_or_paid_and_reports_expired() {
    let kit = TestKit::new();
    let link = link(&kit, "LNK-1").await;
    let id = link.session.id;
    kit.clock.advance(TEST_LINK_VALIDITY + Duration::seconds(1));

    let opened = kit.checkout.open_page(id, SessionFlow::PaymentLink).await;
    assert_eq!(svc(opened), SvcCode::Svc002);
    let paid = kit.checkout.process_payment(id, &card_input()).await;
    assert_eq!(svc(paid), SvcCode::Svc002);
    assert_eq!(kit.processor.authorize_calls(), 0);

    let polled = status(&kit, link.session.id).await;
    assert_eq!(polled, SessionState::Expired);
    assert_eq!(polled.code(), 6);
}

#[tokio::test]
async fn an_expired_link_is_expired_on_payment_even_if_nobody_read_it() {
    let kit = TestKit::new();
    let link = link(&kit, "LNK-1").await;
    kit.clock.advance(TEST_LINK_VALIDITY + Duration::minutes(5));
    let paid = kit
        .checkout
        .process_payment(link.session.id, &card_input())
        .await;
    assert_eq!(svc(paid), SvcCode::Svc002);
    assert_eq!(kit.processor.authorize_calls(), 0);
    assert_eq!(
        stored_state(&kit, link.session.id).await,
        SessionState::Expired
    );
}

#[tokio::test]
async fn the_reference_of_an_expired_link_can_be_reused_for_a_new_link() {
    for read_before_reuse in [true, false] {
        let kit = TestKit::new();
        let old = link(&kit, "LNK-1").await;
        kit.clock.advance(TEST_LINK_VALIDITY + Duration::hours(1));
        if read_before_reuse {
            assert_eq!(status(&kit, old.session.id).await, SessionState::Expired);
        }

        let new = link(&kit, "LNK-1").await;
        assert_ne!(new.session.id, old.session.id);
        assert_ne!(
            new.session.internal_reference,
            old.session.internal_reference
        );
        assert_ne!(new.url, old.url);
        assert_eq!(new.session.reference, old.session.reference);
        assert_eq!(new.session.state, SessionState::Pending);
        assert_eq!(
            new.session.expires_at,
            kit.clock.now_value() + TEST_LINK_VALIDITY
        );

        assert_eq!(status(&kit, old.session.id).await, SessionState::Expired);
        assert_eq!(status(&kit, new.session.id).await, SessionState::Pending);
        assert_eq!(
            pay(&kit, new.session.id).await.session.state,
            SessionState::Successful
        );
        // the old link stays dead
        let reopened = kit
            .checkout
            .open_page(old.session.id, SessionFlow::PaymentLink)
            .await;
        assert_eq!(svc(reopened), SvcCode::Svc002);
    }
}

// ---- hosted pages --------------------------------------------------------------------------

#[tokio::test]
async fn a_page_of_the_wrong_flow_or_an_unknown_id_is_svc_002() {
    let kit = TestKit::new();
    let checkout = start(&kit, "ORD-1").await.id;
    let link = link(&kit, "LNK-1").await.session.id;

    let result = kit
        .checkout
        .open_page(checkout, SessionFlow::PaymentLink)
        .await;
    assert_eq!(svc(result), SvcCode::Svc002);
    let result = kit
        .checkout
        .open_page(link, SessionFlow::IntegratedCheckout)
        .await;
    assert_eq!(svc(result), SvcCode::Svc002);

    let unknown = SessionId::from_random_bytes([7; 16]);
    for flow in [SessionFlow::IntegratedCheckout, SessionFlow::PaymentLink] {
        let result = kit.checkout.open_page(unknown, flow).await;
        assert_eq!(svc(result), SvcCode::Svc002);
    }

    assert!(kit
        .checkout
        .open_page(checkout, SessionFlow::IntegratedCheckout)
        .await
        .unwrap()
        .is_payable());
    assert!(kit
        .checkout
        .open_page(link, SessionFlow::PaymentLink)
        .await
        .unwrap()
        .is_payable());
}

#[tokio::test]
async fn an_integrated_checkout_expires_after_the_checkout_validity() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    assert_eq!(
        session.expires_at,
        kit.clock.now_value() + TEST_CHECKOUT_VALIDITY
    );
    kit.clock
        .advance(TEST_CHECKOUT_VALIDITY + Duration::seconds(1));
    let result = kit
        .checkout
        .open_page(session.id, SessionFlow::IntegratedCheckout)
        .await;
    assert_eq!(svc(result), SvcCode::Svc002);
    assert_eq!(status(&kit, session.id).await, SessionState::Expired);
}

// ---- card payments and redirects -----------------------------------------------------------

#[tokio::test]
async fn an_approved_payment_is_successful_and_redirects_to_the_success_url() {
    let kit = TestKit::new();
    // a reference that needs escaping in a query string
    let session = start(&kit, "ORD 7&x=1").await;
    let outcome = pay(&kit, session.id).await;
    assert_eq!(outcome.result, PaymentResult::Approved);
    assert_eq!(outcome.result.svc_code(), None);
    assert_eq!(outcome.session.state, SessionState::Successful);
    assert_redirects_to(&outcome.session, SUCCESS_URL);
    assert_eq!(kit.processor.authorize_calls(), 1);

    let attempts = kit.sessions.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].state, AttemptState::Succeeded);
    assert_eq!(attempts[0].session_id, session.id);
    assert!(attempts[0].processor_reference.is_some());
}

#[tokio::test]
async fn an_authorised_but_not_captured_payment_is_approved_transaction() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Approved {
        processor_reference: "ch_auth_only".into(),
        captured: false,
    }));
    let outcome = pay(&kit, session.id).await;
    assert_eq!(outcome.result, PaymentResult::Approved);
    assert_eq!(outcome.session.state, SessionState::ApprovedTransaction);
    assert_eq!(outcome.session.state.code(), 3);
    assert_redirects_to(&outcome.session, SUCCESS_URL);
    assert_eq!(
        status(&kit, session.id).await,
        SessionState::ApprovedTransaction
    );
}

#[tokio::test]
async fn a_cancel_goes_to_the_back_url() {
    let kit = TestKit::new();
    let session = start_with(
        &kit,
        SessionRequest {
            callback_back_url: Some(BACK_URL.into()),
            ..start_request("ORD-1")
        },
    )
    .await;
    let outcome = kit.checkout.cancel_payment(session.id).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::Cancelled);
    assert_eq!(outcome.session.state, SessionState::Cancelled);
    assert_redirects_to(&outcome.session, BACK_URL);
    assert_eq!(status(&kit, session.id).await, SessionState::Cancelled);
    assert_eq!(kit.processor.authorize_calls(), 0);
}

#[tokio::test]
async fn a_cancel_without_a_back_url_goes_to_the_fail_url() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    let outcome = kit.checkout.cancel_payment(session.id).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::Cancelled);
    assert_redirects_to(&outcome.session, FAIL_URL);
}

#[tokio::test]
async fn a_payment_link_cannot_be_cancelled_by_the_payer() {
    let kit = TestKit::new();
    let link = link(&kit, "LNK-1").await;
    let result = kit.checkout.cancel_payment(link.session.id).await;
    assert_eq!(svc(result), SvcCode::Svc002);
    assert_eq!(status(&kit, link.session.id).await, SessionState::Pending);
    let unknown = kit
        .checkout
        .cancel_payment(SessionId::from_random_bytes([9; 16]))
        .await;
    assert_eq!(svc(unknown), SvcCode::Svc002);
}

#[tokio::test]
async fn a_cancel_after_payment_changes_nothing() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    pay(&kit, session.id).await;
    let outcome = kit.checkout.cancel_payment(session.id).await.unwrap();
    assert_eq!(outcome.result, PaymentResult::AlreadyHandled);
    assert_eq!(outcome.session.state, SessionState::Successful);
    assert_redirects_to(&outcome.session, SUCCESS_URL);
}

#[tokio::test]
async fn a_cancelled_session_cannot_be_paid() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.checkout.cancel_payment(session.id).await.unwrap();
    let outcome = pay(&kit, session.id).await;
    assert_eq!(outcome.result, PaymentResult::AlreadyHandled);
    assert_eq!(outcome.session.state, SessionState::Cancelled);
    assert_eq!(kit.processor.authorize_calls(), 0);
}

#[tokio::test]
async fn a_terminal_allowlist_refuses_callbacks_to_other_hosts_naming_each_field() {
    let kit = TestKit::new();
    kit.terminals.add(Terminal {
        number: TerminalNumber::parse("T-1").unwrap(),
        display_name: "Merchant T-1".into(),
        active: true,
        callback_hosts: Some(CallbackHosts::parse(["merchant.example"]).unwrap()),
        max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
    });
    // The support request's three URLs point to merchant.example: accepted.
    start(&kit, "ALLOWED").await;

    let mut request = start_request("REFUSED");
    request.callback_fail_url = Some("https://evil.example/fail".into());
    request.callback_back_url = Some("https://shop.merchant.example/cart".into());
    let refused = kit
        .checkout
        .start_payment(&kit.caller("T-1"), &request)
        .await;
    assert_eq!(
        validation_keys(refused),
        ["CallbackBackUrl", "CallbackFailUrl"],
        "a subdomain is another host"
    );
    assert!(
        kit.sessions
            .find_holding_reference(
                &TerminalNumber::parse("T-1").unwrap(),
                &MerchantReference::parse("REFUSED").unwrap()
            )
            .await
            .unwrap()
            .is_none(),
        "nothing stored"
    );
    // Links carry no callbacks: the allowlist does not apply.
    link(&kit, "LINK").await;
}

// ---- the expiry sweep ----------------------------------------------------------------------

#[tokio::test]
async fn the_expiry_sweep_expires_due_sessions_and_cancels_due_challenges_first() {
    let kit = TestKit::new();
    let checkout_pending = start(&kit, "A").await; // due after 1 h
    let link_pending = link(&kit, "B").await.session; // due after 24 h
    let paid = start(&kit, "C").await;
    pay(&kit, paid.id).await;
    let challenged = start(&kit, "D").await;
    push_challenge(&kit, None);
    pay(&kit, challenged.id).await;

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
        stored_state(&kit, checkout_pending.id).await,
        SessionState::Expired
    );
    assert_eq!(
        stored_state(&kit, link_pending.id).await,
        SessionState::Pending
    );
    assert_eq!(stored_state(&kit, paid.id).await, SessionState::Successful);
    assert_eq!(
        stored_state(&kit, challenged.id).await,
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
        stored_state(&kit, link_pending.id).await,
        SessionState::Expired
    );
}

// ---- card data -----------------------------------------------------------------------------

#[tokio::test]
async fn an_attempt_keeps_only_the_brand_and_the_last_four_digits() {
    let kit = TestKit::new();
    let session = start(&kit, "ORD-1").await;
    kit.processor.push_authorize(Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "declined".into(),
    }));
    let outcome = pay(&kit, session.id).await;
    let attempts = kit.sessions.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].card_brand, CardBrand::Visa);
    assert_eq!(attempts[0].card_last4, CARD_LAST4);
    assert_no_card_secrets(&format!("{attempts:?}"));
    assert_no_card_secrets(&format!("{outcome:?}"));
    let page = kit
        .checkout
        .open_page(session.id, SessionFlow::IntegratedCheckout)
        .await
        .unwrap();
    assert_no_card_secrets(&format!("{page:?}"));
}

#[test]
fn card_data_never_prints_its_secret_parts() {
    let input = card_input();
    let details = card(time::macros::datetime!(2026-01-15 12:00 UTC));
    assert_no_card_secrets(&format!("{input:?}"));
    assert_no_card_secrets(&format!("{details:?}"));
    assert_no_card_secrets(&format!("{:?}", details.number));
    assert_no_card_secrets(&format!("{}", details.number));
    assert_no_card_secrets(&format!("{:?}", details.cvv));
    assert_no_card_secrets(&format!("{:?}", details.expiry));
    assert_no_card_secrets(&format!("{:?}", details.holder));
    assert_eq!(details.number.to_string(), format!("**** {CARD_LAST4}"));
    // the parts are still there for the one processor call
    assert_eq!(details.number.expose_digits(), CARD_DIGITS);
    assert_eq!(details.cvv.expose_digits(), CARD_CVV);
    assert_eq!((details.expiry.month(), details.expiry.year()), (7, 2031));
}
