//! The domain crate's tests, one binary, one module per capability:
//!
//! - `rules`: the model without ports: values, the session rules of spec section 2.2, the
//!   state machine, the SVC table, property tests of the validators;
//! - `sessions`: creating sessions and links (validation, unique references, idempotency),
//!   reading them (status, hosted pages, the event feed) and their expiry;
//! - `payments`: card payments, declines and further cards, the attempt ledger, card data;
//! - `reversals`: captures, voids, refunds, cancels and their reconciliation, and the
//!   processor's own events;
//! - `access`: tokens and the terminals they are provisioned for;
//! - `contracts`: the ports' contract suites against the in-memory adapters.
//!
//! Every use case runs through `TestKit`: a `Checkout` over in-memory adapters, a manual clock
//! and a scripted processor. The helpers the modules share are here and in `support`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

mod access;
mod contracts;
mod payments;
mod reversals;
mod rules;
mod sessions;

use std::collections::HashMap;
use std::fmt::Debug;

use checkout_domain::auth::{Claims, ClientCredentials, Role, Secret};
use checkout_domain::card::CardBrand;
use checkout_domain::ports::{ProcessorOutcome, SessionRepository};
use checkout_domain::session::{
    AttemptState, PaymentSession, SessionFlow, SessionKind, SessionRequest, SessionState,
};
use checkout_domain::terminal::Terminal;
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
        .state()
}

/// The state as stored, without the lazy expiry of the read paths.
async fn stored_state(kit: &TestKit, id: SessionId) -> SessionState {
    kit.sessions.get(id).await.unwrap().expect("stored").state()
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
    assert_eq!(query["state"], session.state().name());
    assert_eq!(query["checkoutSessionId"], session.id().to_string());
    assert_eq!(
        query["transactionReferenceNumber"],
        session.reference().as_str()
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
