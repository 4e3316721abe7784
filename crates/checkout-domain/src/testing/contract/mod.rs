//! Contract suites: the ports' MUST lines as checks that run against every adapter of a
//! port, the in-memory one and the real one alike, so that the domain tests' stand-ins keep
//! the promises the production adapters are held to.
//!
//! An adapter's test crate runs a suite with its macro, given an expression (evaluated in an
//! async test) that yields a guard to keep alive and a fresh, empty store:
//!
//! ```ignore
//! checkout_domain::session_repository_contract!(fresh_store().await);
//! ```

pub mod card_guard;
pub mod notices;
pub mod processor;
pub mod reversals;
pub mod sessions;

/// Declares one `#[tokio::test]` per check of [`sessions`], each on a fresh store from
/// `$fresh` (an expression yielding `(guard, Arc<dyn SessionRepository>)`).
#[macro_export]
macro_rules! session_repository_contract {
    ($fresh:expr) => {
        $crate::session_repository_contract!(@checks $fresh;
            a_held_reference_is_a_duplicate_on_the_same_terminal_only,
            a_guarded_insert_for_a_terminal_not_as_read_writes_nothing,
            every_holding_state_holds_the_reference_and_expired_frees_it,
            an_expired_session_frees_its_reference,
            of_a_hundred_racing_inserts_with_one_reference_exactly_one_wins,
            a_session_is_read_with_its_attempts_oldest_first,
            a_lookup_by_reference_sees_only_the_terminals_own_sessions,
            of_twenty_racing_transitions_from_one_state_exactly_one_wins,
            a_transition_from_another_state_changes_nothing,
            of_racing_attempts_on_one_session_exactly_one_begins,
            recording_an_attempt_in_an_unexpected_state_saves_nothing,
            an_answer_about_an_attempt_that_is_not_current_never_moves_the_session,
            of_racing_answers_about_one_attempt_exactly_one_is_recorded,
            claims_take_due_attempts_oldest_first_and_lease_them,
            racing_claims_never_take_the_same_attempt,
            hold_claims_take_long_held_authorisations_once_until_their_lease_ends,
        );
    };
    (@checks $fresh:expr; $($check:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let (_guard, store) = $fresh;
                $crate::testing::contract::sessions::$check(store).await;
            }
        )*
    };
}

/// Declares one `#[tokio::test]` per check of [`reversals`], each on a fresh store from
/// `$fresh` (an expression yielding `(guard, Arc<dyn LedgerStore>)`).
///
/// [`reversals`]: crate::testing::contract::reversals
#[macro_export]
macro_rules! reversal_ledger_contract {
    ($fresh:expr) => {
        $crate::reversal_ledger_contract!(@checks $fresh;
            of_racing_captures_and_voids_exactly_one_holds_the_authorisation,
            a_settled_capture_moves_the_session_once,
            an_action_key_names_one_action_for_good,
            racing_refunds_never_reserve_more_than_was_captured,
            settling_a_refund_counts_it_once,
            a_refund_key_names_one_refund_for_good,
            claims_take_due_unsettled_reversals_and_lease_them,
        );
    };
    (@checks $fresh:expr; $($check:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let (_guard, store) = $fresh;
                $crate::testing::contract::reversals::$check(store).await;
            }
        )*
    };
}

/// Declares one `#[tokio::test]` per check of [`notices`], each on a fresh store from
/// `$fresh` (an expression yielding `(guard, Arc<dyn NoticeLedgerStore>)`).
///
/// [`notices`]: crate::testing::contract::notices
#[macro_export]
macro_rules! notice_store_contract {
    ($fresh:expr) => {
        $crate::notice_store_contract!(@checks $fresh;
            a_notice_is_seen_once_recorded_and_a_second_record_is_harmless,
            notices_before_an_instant_are_forgotten_and_later_ones_kept,
            rows_are_found_by_the_references_events_carry,
            a_dispute_moves_only_forward_and_each_change_is_announced_once,
            racing_records_of_one_dispute_announce_it_once,
            a_refund_failed_after_it_succeeded_gives_its_amount_back_once,
        );
    };
    (@checks $fresh:expr; $($check:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let (_guard, store) = $fresh;
                $crate::testing::contract::notices::$check(store).await;
            }
        )*
    };
}

/// Declares one `#[tokio::test]` per check of [`processor`] (all of them, or the ones named
/// after `;`), each on a processor from `$fresh` (an expression yielding
/// `(guard, Arc<dyn CardProcessor>, Cards)`: the cards that make it answer each way).
#[macro_export]
macro_rules! card_processor_contract {
    ($fresh:expr) => {
        $crate::card_processor_contract!($fresh;
            tokenize_gives_a_reference_without_card_data,
            an_approved_card_is_approved_and_a_read_reports_it,
            a_manual_capture_holds_the_authorisation,
            a_replayed_authorisation_answers_the_first_outcome,
            a_declined_card_is_declined,
            a_cancelled_challenge_is_confirmed_cancelled_every_time,
            cancelling_a_captured_payment_answers_what_it_holds,
            a_capture_and_its_replay_answer_the_amount_captured,
            a_replayed_refund_answers_the_first_refund,
            a_refund_reads_back_by_its_reference,
        );
    };
    ($fresh:expr; $($check:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let (_guard, processor, cards) = $fresh;
                $crate::testing::contract::processor::$check(processor, cards).await;
            }
        )*
    };
}

/// Declares one `#[tokio::test]` per check of [`card_guard`], each on a fresh store from
/// `$fresh` (an expression yielding `(guard, Arc<dyn GuardStore>)`).
///
/// [`card_guard`]: crate::testing::contract::card_guard
#[macro_export]
macro_rules! card_guard_contract {
    ($fresh:expr) => {
        $crate::card_guard_contract!(@checks $fresh;
            declines_are_counted_per_key_over_sliding_windows,
            a_card_is_counted_by_distinct_sessions_and_terminals,
            a_busy_terminals_capped_counts_decide_as_exact_ones,
            a_proof_is_spent_once_even_under_racing_spends,
            an_alert_is_announced_once_when_raised_and_once_when_lowered,
            a_clear_forgets_the_terminal_only,
            a_late_decline_changes_the_sessions_latest_answer_once,
            alerts_are_listed_and_old_answers_forgotten,
        );
    };
    (@checks $fresh:expr; $($check:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let (_guard, store) = $fresh;
                $crate::testing::contract::card_guard::$check(store).await;
            }
        )*
    };
}
