//! Database statement latency and errors, for the on-call engineer: every connection the
//! store opens reports each statement through diesel's instrumentation hook, once [`install`]
//! was called (the pool's connections through their watchdog's instrumentation, which
//! forwards every event here; others through diesel's default instrumentation).
//!
//! Labels are fixed names: the statement's `kind` (its first SQL keyword: `select`, `insert`,
//! `update`, `delete`, `with`, else `other`) and the error's `kind` (diesel's classification).
//! The statement's text and binds are never kept: only its first keyword is read, from at most
//! a few characters of its display.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use diesel::connection::{Instrumentation, InstrumentationEvent};
use diesel::result::{DatabaseErrorKind, Error};

/// Histogram: seconds from a statement's start to its answer, by `kind`.
pub const STATEMENT_DURATION: &str = "checkout_db_statement_duration_seconds";
/// Counter: statements and connection attempts that failed, by `kind` (`connect`,
/// `closed_connection`, `serialization_failure`, `unique_violation`, `check_violation`,
/// `read_only_transaction`, `database`: any other error the server reported, such as a
/// statement time-out, `client`: the client's own (a bind or a row that could not be read)).
pub const ERRORS_TOTAL: &str = "checkout_db_errors_total";

/// Whether [`install`] was called.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs the instrumentation for every connection established from now on. Idempotent in
/// effect (diesel keeps the last one installed).
pub fn install() -> anyhow::Result<()> {
    INSTALLED.store(true, Ordering::Release);
    diesel::connection::set_default_instrumentation(|| Some(Box::new(StatementMetrics::default())))
        .map_err(|e| anyhow::anyhow!("installing the database statement metrics: {e}"))
}

/// Counts a connection the store could not open (when [`install`] was called).
pub(crate) fn count_failed_connection() {
    if INSTALLED.load(Ordering::Acquire) {
        metrics::counter!(ERRORS_TOTAL, "kind" => "connect").increment(1);
    }
}

/// One connection's statements in flight (pipelined statements answer in order).
#[derive(Default)]
pub(crate) struct StatementMetrics {
    started: VecDeque<(Instant, &'static str)>,
}

impl StatementMetrics {
    /// A connection's metrics when [`install`] was called, else none.
    pub(crate) fn when_installed() -> Option<StatementMetrics> {
        INSTALLED
            .load(Ordering::Acquire)
            .then(StatementMetrics::default)
    }

    /// Records `event` (a statement started or answered, a connection that failed).
    pub(crate) fn observe(&mut self, event: &InstrumentationEvent<'_>) {
        match event {
            InstrumentationEvent::StartQuery { query, .. } => {
                self.started
                    .push_back((Instant::now(), statement_kind(query)));
            }
            InstrumentationEvent::FinishQuery { error, .. } => {
                if let Some((at, kind)) = self.started.pop_front() {
                    metrics::histogram!(STATEMENT_DURATION, "kind" => kind)
                        .record(at.elapsed().as_secs_f64());
                }
                if let Some(kind) = error.and_then(error_kind) {
                    metrics::counter!(ERRORS_TOTAL, "kind" => kind).increment(1);
                }
            }
            // A connection (re)established, or lent again by the pool (the watchdog's reset):
            // statements its previous holder dropped unanswered never finish.
            InstrumentationEvent::StartEstablishConnection { .. } => self.started.clear(),
            InstrumentationEvent::FinishEstablishConnection { error: Some(_), .. } => {
                metrics::counter!(ERRORS_TOTAL, "kind" => "connect").increment(1);
            }
            _ => {}
        }
    }
}

impl Instrumentation for StatementMetrics {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        self.observe(&event);
    }
}

/// The first SQL keyword of `query`, as a label, read from at most 16 characters of its
/// display (the rest, binds included, is never formatted).
fn statement_kind(query: &(impl std::fmt::Display + ?Sized)) -> &'static str {
    let mut head = Head(String::with_capacity(16));
    let _ = write!(head, "{query}");
    let word = head
        .0
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match word.as_str() {
        "select" => "select",
        "insert" => "insert",
        "update" => "update",
        "delete" => "delete",
        "with" => "with",
        _ => "other",
    }
}

/// A writer that keeps the first 16 characters and then refuses, ending the formatting.
struct Head(String);

impl std::fmt::Write for Head {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = 16usize.saturating_sub(self.0.len());
        self.0.extend(s.chars().take(room));
        if self.0.len() >= 16 {
            Err(std::fmt::Error)
        } else {
            Ok(())
        }
    }
}

/// The label of a failed statement's error; `None` for "no row", which is an answer.
fn error_kind(error: &Error) -> Option<&'static str> {
    Some(match error {
        Error::NotFound => return None,
        Error::DatabaseError(kind, _) => match kind {
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand => {
                "closed_connection"
            }
            DatabaseErrorKind::SerializationFailure => "serialization_failure",
            DatabaseErrorKind::UniqueViolation => "unique_violation",
            DatabaseErrorKind::CheckViolation
            | DatabaseErrorKind::NotNullViolation
            | DatabaseErrorKind::ForeignKeyViolation
            | DatabaseErrorKind::RestrictViolation
            | DatabaseErrorKind::ExclusionViolation => "check_violation",
            DatabaseErrorKind::ReadOnlyTransaction => "read_only_transaction",
            _ => "database",
        },
        _ => "client",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_the_first_keyword_and_nothing_else_is_read() {
        assert_eq!(statement_kind(&"SELECT 1"), "select");
        assert_eq!(statement_kind(&"  with u AS (SELECT 1) SELECT 2"), "with");
        assert_eq!(statement_kind(&"INSERT INTO t VALUES ($1)"), "insert");
        assert_eq!(statement_kind(&"BEGIN"), "other");
        assert_eq!(statement_kind(&"selected"), "other");
        // A display that would be long is cut after 16 characters.
        let long = format!("UPDATE t SET a = 1 -- binds: [{}]", "x".repeat(10_000));
        assert_eq!(statement_kind(&long), "update");
    }

    #[test]
    fn no_row_is_not_an_error() {
        assert_eq!(error_kind(&Error::NotFound), None);
        assert_eq!(error_kind(&Error::RollbackTransaction), Some("client"));
    }
}
