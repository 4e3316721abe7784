//! Write combining of session creates: creates that arrive while others are being written are
//! queued and written together, in one [`InsertSessions`] statement and one commit (one WAL
//! flush) for them all.
//!
//! At most [`Combiner::writers`] statements are in flight. A create that finds one of them
//! free starts a writer at once with whatever is queued (itself, when alone: it never waits
//! for company, there is no timer). Otherwise it queues, and the next writer to finish takes
//! the whole queue (up to [`MAX_BATCH`]) as its next statement. Each create learns its own
//! outcome from the statement's `RETURNING`: inserted, or its reference held. When a
//! statement of many fails, each of its sessions is written again on its own, so that one bad
//! row fails only its own create; when it failed because the database cannot be reached, they
//! all get that (retryable) error at once. A create is answered after its statement returned, that is
//! after the commit.
//!
//! Writers run as tasks of their own, so a create whose caller goes away (a dropped request)
//! never abandons the statement that carries the others.

use std::collections::HashSet;
use std::mem;
use std::sync::{Mutex, MutexGuard, PoisonError};

use checkout_domain::ports::InsertError;
use checkout_domain::session::PaymentSession;
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::availability::is_unavailable;
use crate::counters;
use crate::pool::NoConnection;
use crate::session_insert::InsertSessions;
use crate::store::PgStore;

/// The most sessions written in one statement.
pub(crate) const MAX_BATCH: usize = 64;

/// What one create learns.
type Outcome = Result<(), InsertError>;

/// A queued create.
struct Pending {
    session: PaymentSession,
    reply: oneshot::Sender<Outcome>,
}

/// The queue and the number of writers running.
#[derive(Default)]
struct Queue {
    waiting: Vec<Pending>,
    running: usize,
}

/// The shared state of write combining, one per store.
pub(crate) struct Combiner {
    queue: Mutex<Queue>,
    writers: usize,
}

impl Combiner {
    /// A combiner that runs at most `writers` statements at once (at least 1).
    pub(crate) fn new(writers: usize) -> Combiner {
        Combiner {
            queue: Mutex::new(Queue::default()),
            writers: writers.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        // The queue is consistent at every unlock: a panic elsewhere leaves it usable.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The number of writers for a pool of `pool_size` connections: one per 16 connections, at
/// least one. Each statement costs PostgreSQL a commit and a fixed overhead whatever it
/// carries, so fewer writers mean larger statements and less work per create: at 32
/// connections (docs/performance.md, second round) PostgreSQL spent 96 to 104 µs of CPU per
/// create with one writer against 115 to 128 with two, and one writer was also the faster
/// (so was it against four: 78 to 83 µs per create in the benchmark against 114 to 117).
/// Starting a second writer only when 16 creates wait gained nothing and was not kept.
pub(crate) fn writers_for(pool_size: usize) -> usize {
    (pool_size / 16).max(1)
}

/// Creates `session` through the combiner of `store`.
pub(crate) async fn insert(store: &PgStore, session: &PaymentSession) -> Outcome {
    let (reply, answer) = oneshot::channel();
    let pending = Pending {
        session: session.clone(),
        reply,
    };
    let start = {
        let mut queue = store.combiner().lock();
        queue.waiting.push(pending);
        if queue.running < store.combiner().writers {
            queue.running += 1;
            Some(take_batch(&mut queue))
        } else {
            None
        }
    };
    if let Some(batch) = start {
        let writer = Writer {
            store: store.clone(),
            finished: false,
        };
        tokio::spawn(writer.run(batch));
    }
    answer.await.unwrap_or_else(|_| {
        Err(InsertError::Store(anyhow::anyhow!(
            "the session writer stopped before writing session {}",
            session.id
        )))
    })
}

/// The oldest queued creates, at most [`MAX_BATCH`].
fn take_batch(queue: &mut Queue) -> Vec<Pending> {
    if queue.waiting.len() <= MAX_BATCH {
        mem::take(&mut queue.waiting)
    } else {
        queue.waiting.drain(..MAX_BATCH).collect()
    }
}

/// One running writer. Dropped without finishing (its runtime shut down), it gives its place
/// back, and fails the queued creates only when no other writer is left to take them.
struct Writer {
    store: PgStore,
    finished: bool,
}

impl Writer {
    async fn run(mut self, mut batch: Vec<Pending>) {
        loop {
            write(&self.store, batch).await;
            let mut queue = self.store.combiner().lock();
            if queue.waiting.is_empty() {
                queue.running -= 1;
                self.finished = true;
                return;
            }
            batch = take_batch(&mut queue);
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut queue = self.store.combiner().lock();
        queue.running -= 1;
        if queue.running == 0 {
            // Their senders drop: each create gets an error, none waits forever.
            queue.waiting.clear();
        }
    }
}

/// Writes `batch` and answers each create.
async fn write(store: &PgStore, mut batch: Vec<Pending>) {
    // The same order in every statement (terminal, then reference), so that two statements
    // never wait on each other's index entries in opposite orders (a deadlock).
    batch.sort_by(|a, b| {
        (a.session.terminal.as_str(), a.session.reference.as_str())
            .cmp(&(b.session.terminal.as_str(), b.session.reference.as_str()))
    });
    match statement(store, batch.iter().map(|p| &p.session)).await {
        Ok(inserted) => answer_all(batch, &inserted),
        Err(e) if batch.len() == 1 => {
            if let Some(p) = batch.pop() {
                let e = e.context(format!("inserting payment session {}", p.session.id));
                let _ = p.reply.send(Err(InsertError::Store(e)));
            }
        }
        Err(e) if is_unavailable(&e) => {
            // The database cannot be reached: one session at a time would only wait as long
            // again for each. Every create gets the same answer (a retryable one).
            let cause = format!("{e:#}");
            for p in batch {
                let e = anyhow::Error::new(NoConnection(cause.clone()))
                    .context(format!("inserting payment session {}", p.session.id));
                let _ = p.reply.send(Err(InsertError::Store(e)));
            }
        }
        Err(e) => {
            tracing::warn!(
                sessions = batch.len(),
                error = %format!("{e:#}"),
                "a combined session insert failed; writing its sessions one by one"
            );
            for p in batch {
                let outcome = statement(store, [&p.session])
                    .await
                    .map_err(|e| e.context(format!("inserting payment session {}", p.session.id)));
                match outcome {
                    Ok(inserted) => answer_all(vec![p], &inserted),
                    Err(e) => {
                        let _ = p.reply.send(Err(InsertError::Store(e)));
                    }
                }
            }
        }
    }
}

/// Runs one [`InsertSessions`] of `sessions` on a connection of its own.
async fn statement<'a>(
    store: &PgStore,
    sessions: impl IntoIterator<Item = &'a PaymentSession>,
) -> anyhow::Result<HashSet<Uuid>> {
    let statement = InsertSessions::of(sessions)?;
    let count = statement.len();
    let mut conn = store.conn().await?;
    let inserted = statement.run(&mut conn).await?;
    counters::insert_statement(count);
    Ok(inserted)
}

/// Answers each create of `batch`: inserted when its id is in `inserted`, else its reference
/// was held.
fn answer_all(batch: Vec<Pending>, inserted: &HashSet<Uuid>) {
    for p in batch {
        let outcome = if inserted.contains(&p.session.id.as_uuid()) {
            counters::session_created(&p.session);
            Ok(())
        } else {
            Err(InsertError::DuplicateReference)
        };
        // A create whose caller went away has no one to answer; its row stays written.
        let _ = p.reply.send(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_writer_per_sixteen_connections_and_never_none() {
        assert_eq!(writers_for(16), 1);
        assert_eq!(writers_for(32), 2);
        assert_eq!(writers_for(2), 1);
        assert_eq!(writers_for(0), 1);
    }
}
