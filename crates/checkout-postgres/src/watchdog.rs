//! The stall watchdog: a connection that stops answering is closed within a bound, whatever
//! the network does (`docs/decisions/0018-shutdown-and-database-timeouts.md`).
//!
//! A partitioned database does not close its sockets: a statement sent over one waits until
//! the kernel gives up retransmitting (minutes), and `tcp_user_timeout` and keepalives bound
//! that only when the partition drops packets at this host's edge (a proxy or a NAT in between
//! still acknowledges them). So each pooled connection reports its statements to a
//! [`Watch`] (diesel's instrumentation: a statement started, a statement answered), and the
//! store's watchdog task closes every connection that has had a statement waiting longer than
//! the answer bound without any answer: its pending statements fail at once with a closed
//! connection (a 503 for their requests), the pool drops it at its next checkout, and a new
//! connection replaces it. A live server always answers within the bound, since the bound is
//! longer than the `statement_timeout` every pooled session runs with.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use diesel::connection::{Instrumentation, InstrumentationEvent};
use tokio::sync::oneshot;

/// What one connection is waiting for, and how to close it.
pub(crate) struct Watched {
    /// Statements started and not answered.
    pending: AtomicUsize,
    /// Since when the oldest pending statement has had no answer (any answer moves it).
    waiting_since: Mutex<Option<Instant>>,
    /// Closes the connection: its driving task stops, its socket closes.
    close: Mutex<Option<oneshot::Sender<()>>>,
}

impl Watched {
    fn lock_since(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.waiting_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// How long a statement of this connection has waited for an answer, if one does.
    fn waiting(&self, now: Instant) -> Option<Duration> {
        if self.pending.load(Ordering::Acquire) == 0 {
            return None;
        }
        (*self.lock_since()).map(|since| now.saturating_duration_since(since))
    }

    fn close(&self) -> bool {
        let sender = self
            .close
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        sender.is_some_and(|s| s.send(()).is_ok())
    }
}

/// The instrumentation of one pooled connection: it tells the watchdog when a statement
/// starts and when one is answered.
pub(crate) struct Watch(
    Arc<Watched>,
    Option<crate::statement_metrics::StatementMetrics>,
);

impl Watch {
    fn started(&self) {
        if self.0.pending.fetch_add(1, Ordering::AcqRel) == 0 {
            *self.0.lock_since() = Some(Instant::now());
        }
    }

    fn answered(&self) {
        let before = self
            .0
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                Some(n.saturating_sub(1))
            })
            .unwrap_or(0);
        // An answer came: the next pending statement (pipelined) waits from now.
        *self.0.lock_since() = (before > 1).then(Instant::now);
    }

    fn forget(&self) {
        self.0.pending.store(0, Ordering::Release);
        *self.0.lock_since() = None;
    }
}

impl Instrumentation for Watch {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        if let Some(metrics) = &mut self.1 {
            metrics.observe(&event);
        }
        match event {
            InstrumentationEvent::StartQuery { .. } => self.started(),
            InstrumentationEvent::FinishQuery { .. } => self.answered(),
            // `RESET` ([`reset`]): the connection changes hands; what its previous holder
            // left pending (a request dropped mid-statement never hears its answer) is not
            // the new holder's to wait for.
            InstrumentationEvent::StartEstablishConnection { url, .. } if url == RESET => {
                self.forget()
            }
            _ => {}
        }
    }
}

/// The marker [`reset`] sends.
const RESET: &str = "checkout-postgres:reset-watch";

/// Tells the connection's [`Watch`] that it changes hands (the pool lends it again): the
/// statements its previous holder dropped unanswered are forgotten.
pub(crate) fn reset(conn: &mut diesel_async::AsyncPgConnection) {
    use diesel_async::AsyncConnection;
    conn.instrumentation()
        .on_connection_event(InstrumentationEvent::start_establish_connection(RESET));
}

/// Every pooled connection's [`Watched`] state, and the stalls seen.
#[derive(Default)]
pub(crate) struct Watchdog {
    connections: Mutex<Vec<Weak<Watched>>>,
    /// Connections closed as stalled since the start.
    closed: AtomicU64,
    /// When the last one was closed.
    last_closed: Mutex<Option<Instant>>,
}

impl Watchdog {
    /// A new connection's instrumentation, and the receiver that closes it when sent to.
    pub(crate) fn watch(&self) -> (Watch, oneshot::Receiver<()>) {
        let (close, closed) = oneshot::channel();
        let watched = Arc::new(Watched {
            pending: AtomicUsize::new(0),
            waiting_since: Mutex::new(None),
            close: Mutex::new(Some(close)),
        });
        let mut connections = self
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        connections.retain(|w| w.strong_count() > 0);
        connections.push(Arc::downgrade(&watched));
        (
            Watch(
                watched,
                crate::statement_metrics::StatementMetrics::when_installed(),
            ),
            closed,
        )
    }

    /// Closes every connection with a statement unanswered for longer than `bound`, logging
    /// each at WARN; returns how many it closed.
    pub(crate) fn sweep(&self, bound: Duration) -> usize {
        let now = Instant::now();
        let stalled: Vec<(Arc<Watched>, Duration)> = self
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .filter_map(|w| {
                let waited = w.waiting(now)?;
                (waited > bound).then_some((w, waited))
            })
            .collect();
        let mut closed = 0;
        for (watched, waited) in stalled {
            if watched.close() {
                closed += 1;
                tracing::warn!(
                    waited_ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                    bound_ms = u64::try_from(bound.as_millis()).unwrap_or(u64::MAX),
                    "database connection stalled: a statement had no answer within the bound; \
                     closing the connection (its requests fail with 503) and replacing it"
                );
            }
        }
        if closed > 0 {
            self.closed.fetch_add(closed as u64, Ordering::Relaxed);
            *self
                .last_closed
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(now);
        }
        closed
    }

    /// Whether a connection was closed as stalled within `within`.
    pub(crate) fn stalled_within(&self, within: Duration) -> bool {
        self.last_closed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < within)
    }

    /// Connections closed as stalled since the start.
    pub(crate) fn closed(&self) -> u64 {
        self.closed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_waiting_past_the_bound_closes_its_connection_and_an_answered_one_does_not() {
        let dog = Watchdog::default();
        let (answered, _a) = dog.watch();
        let (stalled, mut closed) = dog.watch();
        answered.started();
        answered.answered();
        stalled.started();
        assert_eq!(dog.sweep(Duration::from_secs(60)), 0);
        assert!(closed.try_recv().is_err());
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(dog.sweep(Duration::from_millis(10)), 1);
        assert!(
            closed.try_recv().is_ok(),
            "the stalled connection is closed"
        );
        assert!(dog.stalled_within(Duration::from_secs(5)));
        assert_eq!(dog.closed(), 1);
    }

    #[test]
    fn a_reset_forgets_what_a_dropped_request_left_pending() {
        let dog = Watchdog::default();
        let (mut w, _closed) = dog.watch();
        w.started();
        w.on_connection_event(InstrumentationEvent::start_establish_connection(RESET));
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(dog.sweep(Duration::from_millis(10)), 0);
        assert!(!dog.stalled_within(Duration::from_millis(10)));
    }
}
