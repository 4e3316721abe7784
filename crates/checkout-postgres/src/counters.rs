//! Counters of what the store committed: sessions created, by type, and sessions that reached
//! a final state, by state. Counted here, at the adapter, after the commit, so that the domain
//! stays free of metrics and every path that settles a session (a payer's page, the
//! reconciliation and expiry sweeps, another instance's retry) is counted exactly where it
//! lands. Labels are fixed names, never ids or references.

use checkout_domain::session::{PaymentSession, SessionKind, SessionState};

/// Counter: sessions created, by `type` (`IntegratedCheckout`, `PaymentLink`).
pub const SESSIONS_CREATED: &str = "checkout_sessions_created_total";
/// Counter: sessions moved into a final state, by `state` (its name).
pub const SESSIONS_SETTLED: &str = "checkout_sessions_settled_total";

/// Counter: statements that wrote new sessions (each one commit, for one or more sessions:
/// write combining).
pub const SESSION_INSERT_STATEMENTS: &str = "checkout_session_insert_statements_total";
/// Counter: sessions sent in those statements (inserted or refused as a duplicate).
pub const SESSION_INSERT_ROWS: &str = "checkout_session_insert_rows_total";

/// Counts one statement that carried `sessions` new sessions.
pub(crate) fn insert_statement(sessions: usize) {
    metrics::counter!(SESSION_INSERT_STATEMENTS).increment(1);
    metrics::counter!(SESSION_INSERT_ROWS).increment(u64::try_from(sessions).unwrap_or(u64::MAX));
}

/// Counts a committed new session.
pub(crate) fn session_created(session: &PaymentSession) {
    let kind = match session.kind() {
        SessionKind::IntegratedCheckout(_) => "IntegratedCheckout",
        SessionKind::PaymentLink => "PaymentLink",
    };
    metrics::counter!(SESSIONS_CREATED, "type" => kind).increment(1);
}

/// Counts `count` committed moves into `to`, when `to` is a final state.
pub(crate) fn sessions_moved(to: SessionState, count: u64) {
    if to.is_terminal() && count > 0 {
        metrics::counter!(SESSIONS_SETTLED, "state" => to.name()).increment(count);
    }
}
