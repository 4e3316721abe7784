//! The session state machine (spec section 3): every legal transition, every other
//! (state, event) pair refused, terminal states frozen, and the stable numeric codes and names
//! that the status route reports.

use std::collections::{HashSet, VecDeque};

use checkout_domain::session::{IllegalTransition, SessionEvent, SessionState};

use SessionEvent as E;
use SessionState as S;

/// Every event. `event_index` below fails to compile when an event is added and not listed.
const ALL_EVENTS: [SessionEvent; 13] = [
    E::CardSubmitted,
    E::ChallengeIssued,
    E::ChallengeAnswered,
    E::Captured,
    E::Authorized,
    E::Declined,
    E::AttemptVoided,
    E::PayerCancelled,
    E::ExpiryPassed,
    E::MerchantCaptured,
    E::MerchantVoided,
    E::DeclinedRetryable,
    E::AuthorizationExpired,
];

fn event_index(event: SessionEvent) -> usize {
    match event {
        E::CardSubmitted => 0,
        E::ChallengeIssued => 1,
        E::ChallengeAnswered => 2,
        E::Captured => 3,
        E::Authorized => 4,
        E::Declined => 5,
        E::AttemptVoided => 6,
        E::PayerCancelled => 7,
        E::ExpiryPassed => 8,
        E::MerchantCaptured => 9,
        E::MerchantVoided => 10,
        E::DeclinedRetryable => 11,
        E::AuthorizationExpired => 12,
    }
}

/// The expected code and name of each state; fails to compile when a state is added.
fn expected_code_and_name(state: SessionState) -> (i16, &'static str) {
    match state {
        S::Pending => (0, "Pending"),
        S::Successful => (1, "Successful"),
        S::Failed => (2, "Failed"),
        S::ApprovedTransaction => (3, "ApprovedTransaction"),
        S::Processing => (4, "Processing"),
        S::ChallengeRequired => (5, "ChallengeRequired"),
        S::Expired => (6, "Expired"),
        S::Cancelled => (7, "Cancelled"),
        S::Voided => (8, "Voided"),
    }
}

/// Every legal move: (from, event, to).
const LEGAL: [(SessionState, SessionEvent, SessionState); 20] = [
    (S::Pending, E::CardSubmitted, S::Processing),
    (S::Pending, E::PayerCancelled, S::Cancelled),
    (S::Pending, E::ExpiryPassed, S::Expired),
    (S::Processing, E::ChallengeIssued, S::ChallengeRequired),
    (S::Processing, E::Captured, S::Successful),
    (S::Processing, E::Authorized, S::ApprovedTransaction),
    (S::Processing, E::Declined, S::Failed),
    (S::Processing, E::AttemptVoided, S::Pending),
    // A decline while the terminal allows another card (`maxCardAttempts`).
    (S::Processing, E::DeclinedRetryable, S::Pending),
    (S::ChallengeRequired, E::ChallengeAnswered, S::Processing),
    (S::ChallengeRequired, E::PayerCancelled, S::Cancelled),
    (S::ChallengeRequired, E::ExpiryPassed, S::Expired),
    // What the processor says after a challenge it hosted, read on the payer's return.
    (S::ChallengeRequired, E::Captured, S::Successful),
    (S::ChallengeRequired, E::Authorized, S::ApprovedTransaction),
    (S::ChallengeRequired, E::Declined, S::Failed),
    (S::ChallengeRequired, E::AttemptVoided, S::Pending),
    (S::ChallengeRequired, E::DeclinedRetryable, S::Pending),
    // The merchant settles an authorisation held without capture.
    (S::ApprovedTransaction, E::MerchantCaptured, S::Successful),
    (S::ApprovedTransaction, E::MerchantVoided, S::Voided),
    // The processor released an authorisation never captured.
    (S::ApprovedTransaction, E::AuthorizationExpired, S::Expired),
];

/// The merchant's events and the processor's release of an authorisation: the only ones a
/// final state (ApprovedTransaction) still accepts.
const MERCHANT_EVENTS: [SessionEvent; 3] = [
    E::MerchantCaptured,
    E::MerchantVoided,
    E::AuthorizationExpired,
];

const TERMINAL: [SessionState; 6] = [
    S::Successful,
    S::Failed,
    S::ApprovedTransaction,
    S::Expired,
    S::Cancelled,
    S::Voided,
];

fn legal_target(from: SessionState, event: SessionEvent) -> Option<SessionState> {
    LEGAL
        .iter()
        .find(|(f, e, _)| *f == from && *e == event)
        .map(|(_, _, to)| *to)
}

#[test]
fn the_event_list_is_complete_and_has_no_repeats() {
    let indexes: HashSet<usize> = ALL_EVENTS.into_iter().map(event_index).collect();
    assert_eq!(indexes, (0..ALL_EVENTS.len()).collect());
}

#[test]
fn the_state_list_is_complete_and_has_no_repeats() {
    let states: HashSet<SessionState> = S::ALL.into_iter().collect();
    assert_eq!(states.len(), 9);
}

#[test]
fn every_legal_transition_is_accepted_with_its_target() {
    for (from, event, to) in LEGAL {
        assert_eq!(from.apply(event), Ok(to), "{from} --{event:?}-->");
    }
}

#[test]
fn every_pair_outside_the_legal_table_is_refused_naming_state_and_event() {
    let mut refused = 0;
    for from in S::ALL {
        for event in ALL_EVENTS {
            match legal_target(from, event) {
                Some(to) => assert_eq!(from.apply(event), Ok(to)),
                None => {
                    assert_eq!(
                        from.apply(event),
                        Err(IllegalTransition { from, event }),
                        "{from} --{event:?}--> must be refused"
                    );
                    refused += 1;
                }
            }
        }
    }
    assert_eq!(refused, 9 * ALL_EVENTS.len() - LEGAL.len());
}

#[test]
fn a_sample_of_dangerous_moves_is_refused() {
    let samples = [
        // a paid session is never charged again
        (S::Successful, E::CardSubmitted),
        (S::ApprovedTransaction, E::CardSubmitted),
        // a declined session cannot turn into a success
        (S::Failed, E::Captured),
        // an answer never skips the processing step
        (S::Pending, E::Captured),
        (S::Pending, E::Declined),
        // a card cannot be submitted twice while the processor answers
        (S::Processing, E::CardSubmitted),
        // the payer cannot cancel nor the session expire while the processor holds it
        (S::Processing, E::PayerCancelled),
        (S::Processing, E::ExpiryPassed),
        // an expired or cancelled session cannot be paid
        (S::Expired, E::CardSubmitted),
        (S::Cancelled, E::CardSubmitted),
        // a paid session cannot be cancelled or expire
        (S::Successful, E::PayerCancelled),
        (S::Successful, E::ExpiryPassed),
        // a challenge cannot be answered without one
        (S::Pending, E::ChallengeAnswered),
        (S::Processing, E::ChallengeAnswered),
    ];
    for (from, event) in samples {
        let refusal = from.apply(event).expect_err("must be refused");
        assert_eq!(refusal.from, from);
        assert_eq!(refusal.event, event);
        let text = refusal.to_string();
        assert!(text.contains(from.name()), "{text}");
        assert!(text.contains(&format!("{event:?}")), "{text}");
    }
}

#[test]
fn terminal_states_accept_no_payer_or_processor_event() {
    for state in TERMINAL {
        assert!(state.is_terminal(), "{state}");
        for event in ALL_EVENTS {
            let merchant = MERCHANT_EVENTS.contains(&event) && state == S::ApprovedTransaction;
            assert_eq!(
                state.apply(event).is_ok(),
                merchant,
                "{state} --{event:?}-->"
            );
        }
    }
}

#[test]
fn only_the_final_states_are_terminal_and_the_others_can_move() {
    for state in S::ALL {
        let terminal = TERMINAL.contains(&state);
        assert_eq!(state.is_terminal(), terminal, "{state}");
        let can_move = ALL_EVENTS
            .into_iter()
            .filter(|e| !MERCHANT_EVENTS.contains(e))
            .any(|e| state.apply(e).is_ok());
        assert_eq!(can_move, !terminal, "{state}");
    }
}

#[test]
fn payment_outcomes_are_exactly_successful_failed_and_approved_transaction() {
    for state in S::ALL {
        let expected = matches!(state, S::Successful | S::Failed | S::ApprovedTransaction);
        assert_eq!(state.is_payment_outcome(), expected, "{state}");
    }
}

#[test]
fn every_state_but_expired_holds_the_merchant_reference() {
    for state in S::ALL {
        assert_eq!(state.holds_reference(), state != S::Expired, "{state}");
    }
}

#[test]
fn failed_is_numeric_2_as_the_spec_fixes() {
    assert_eq!(S::Failed.code(), 2);
    assert_eq!(S::from_code(2), Some(S::Failed));
}

#[test]
fn numeric_codes_are_stable() {
    for state in S::ALL {
        assert_eq!(state.code(), expected_code_and_name(state).0, "{state}");
    }
    assert_eq!(
        S::ALL.map(SessionState::code),
        [0, 1, 2, 3, 4, 5, 6, 7, 8],
        "ALL is in code order"
    );
}

#[test]
fn numeric_codes_round_trip_and_unknown_codes_are_none() {
    for state in S::ALL {
        assert_eq!(S::from_code(state.code()), Some(state));
    }
    for code in [-1, 9, 10, 100, i16::MIN, i16::MAX] {
        assert_eq!(S::from_code(code), None, "{code}");
    }
}

#[test]
fn names_are_the_ones_the_status_route_reports() {
    for state in S::ALL {
        let name = expected_code_and_name(state).1;
        assert_eq!(state.name(), name);
        assert_eq!(state.to_string(), name);
    }
}

#[test]
fn every_state_is_reachable_from_pending() {
    let mut seen = HashSet::from([S::Pending]);
    let mut queue = VecDeque::from([S::Pending]);
    while let Some(state) = queue.pop_front() {
        for event in ALL_EVENTS {
            if let Ok(next) = state.apply(event) {
                if seen.insert(next) {
                    queue.push_back(next);
                }
            }
        }
    }
    assert_eq!(seen, S::ALL.into_iter().collect());
}

#[test]
fn a_3ds_payment_walks_pending_processing_challenge_processing_successful() {
    let path = [
        (E::CardSubmitted, S::Processing),
        (E::ChallengeIssued, S::ChallengeRequired),
        (E::ChallengeAnswered, S::Processing),
        (E::Captured, S::Successful),
    ];
    let mut state = S::Pending;
    for (event, expected) in path {
        state = state.apply(event).expect("legal step");
        assert_eq!(state, expected);
    }
}

#[test]
fn a_voided_attempt_lets_the_payer_try_again() {
    let state = S::Pending
        .apply(E::CardSubmitted)
        .and_then(|s| s.apply(E::AttemptVoided))
        .and_then(|s| s.apply(E::CardSubmitted))
        .and_then(|s| s.apply(E::Declined));
    assert_eq!(state, Ok(S::Failed));
}

/// A session moves only as [`SessionState::apply`] says: `PaymentSession::moved` takes every
/// (state, event) pair the machine allows to the state it gives (touched at the given time)
/// and refuses every other, leaving nothing half-changed to reuse.
#[test]
fn a_session_moves_only_through_the_state_machine() {
    use checkout_domain::testing::builders::{at, edit, session};
    for from in S::ALL {
        for event in ALL_EVENTS {
            let start = edit(session("T-1", "MOVES"), |r| r.state = from);
            match (from.apply(event), start.clone().moved(event, at(99))) {
                (Ok(to), Ok(moved)) => {
                    assert_eq!(moved.state(), to);
                    assert_eq!(moved.updated_at(), at(99));
                    assert_eq!(moved.id(), start.id());
                    assert_eq!(moved.money(), start.money());
                }
                (Err(refused), Err(also)) => assert_eq!(refused, also),
                (machine, moved) => {
                    panic!("{from} {event:?}: the machine says {machine:?}, the session {moved:?}")
                }
            }
        }
    }
}
