//! Combining: requests of one kind that arrive while others of that kind are in the database
//! are queued and carried out together, in one statement, instead of one round trip each.
//!
//! At most [`Combiner::runners`] statements of a kind are in flight. A request that finds one
//! of them free starts a runner at once with whatever is queued (itself, when alone: it never
//! waits for company, there is no timer). Otherwise it queues, and the next runner to finish
//! takes the whole queue (up to [`MAX_BATCH`], and one request of each [key](Combined::key))
//! as its next statement. Each request learns its own answer. A statement is atomic: when one
//! of many fails, nothing of it was written, and each of its requests is carried out again on
//! its own, so that one bad row fails only its own request; when it failed because the
//! database cannot be reached, they all get that (retryable) error at once. A request is
//! answered after its statement returned (for a write, after the commit).
//!
//! Runners are tasks of their own, so a request whose caller goes away (a dropped request)
//! never abandons the statement that carries the others.

use std::collections::HashSet;
use std::future::Future;
use std::marker::PhantomData;
use std::mem;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use crate::availability::{classified, is_unavailable};
use crate::pool::NoConnection;
use crate::store::PgStore;

/// The most requests carried out in one statement. At 512 connections, creates ran at 19,026
/// and 19,326 per second with 256 against 16,193 and 17,061 with 64 (docs/performance.md,
/// third round); at 128 connections the two were alike.
pub(crate) const MAX_BATCH: usize = 256;

/// The number of runners of each kind for a pool of `pool_size` connections: one per 16
/// connections, at least one. Each statement costs PostgreSQL a fixed overhead whatever it
/// carries (and a write, a commit), so fewer runners mean larger statements and less work per
/// request (docs/performance.md):
/// - writes: at 32 connections PostgreSQL spent 96 to 104 µs of CPU per create with one
///   writer against 115 to 128 with two, and one writer was also the faster (so was it
///   against four: 78 to 83 µs per create in the benchmark against 114 to 117); starting a
///   second writer only when 16 creates wait gained nothing;
/// - reads: status reads of random sessions at 32 connections ran at 33,600 to 39,900 per
///   second with one reader, 29,700 to 33,000 with two and 28,200 to 29,100 with four, with
///   7 to 9 µs of PostgreSQL CPU per read against 14 to 15 and 19 to 22.
pub(crate) fn runners_for(pool_size: usize) -> usize {
    (pool_size / 16).max(1)
}

/// A kind of request that can be combined.
pub(crate) trait Combined: Sized + Send + Sync + 'static {
    /// What one request carries.
    type Item: Send + Sync + 'static;
    /// What one request learns from a statement that succeeded.
    type Answer: Send + 'static;
    /// The kind, for errors ("session read").
    const KIND: &'static str;

    /// The request, for errors and logs ("reading payment session …").
    fn describe(item: &Self::Item) -> String;

    /// What two requests that never share a statement have in common (the session two card
    /// attempts' writes are about), or `None` when any requests may share one. Of queued
    /// requests with one key, the oldest goes into the next statement and the others wait
    /// for the statements after it, in their order.
    fn key(_item: &Self::Item) -> Option<u128> {
        None
    }

    /// The combiner of this kind in `store`.
    fn combiner(store: &PgStore) -> &Combiner<Self>;

    /// Carries out `items` in one statement: one answer per item, in their order.
    ///
    /// MUST write all or nothing (one statement in autocommit, or one transaction): when it
    /// fails, its requests are carried out again one by one.
    fn statement(
        store: &PgStore,
        items: &[&Self::Item],
    ) -> impl Future<Output = anyhow::Result<Vec<Self::Answer>>> + Send;
}

/// A queued request.
struct Pending<K: Combined> {
    item: K::Item,
    reply: oneshot::Sender<anyhow::Result<K::Answer>>,
}

/// The queue and the number of runners running.
struct Queue<K: Combined> {
    waiting: Vec<Pending<K>>,
    running: usize,
}

/// The shared state of one kind's combining, one per store.
pub(crate) struct Combiner<K: Combined> {
    queue: Mutex<Queue<K>>,
    runners: usize,
}

impl<K: Combined> Combiner<K> {
    /// A combiner that runs at most `runners` statements at once (at least 1).
    pub(crate) fn new(runners: usize) -> Combiner<K> {
        Combiner {
            queue: Mutex::new(Queue {
                waiting: Vec::new(),
                running: 0,
            }),
            runners: runners.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue<K>> {
        // The queue is consistent at every unlock: a panic elsewhere leaves it usable.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Carries out `item` through the combiner of its kind in `store`.
pub(crate) async fn submit<K: Combined>(
    store: &PgStore,
    item: K::Item,
) -> anyhow::Result<K::Answer> {
    let (reply, answer) = oneshot::channel();
    let start = {
        let combiner = K::combiner(store);
        let mut queue = combiner.lock();
        queue.waiting.push(Pending { item, reply });
        if queue.running < combiner.runners {
            queue.running += 1;
            Some(take_batch(&mut queue))
        } else {
            None
        }
    };
    if let Some(batch) = start {
        let runner = Runner::<K> {
            store: store.clone(),
            finished: false,
            kind: PhantomData,
        };
        tokio::spawn(runner.run(batch));
    }
    answer
        .await
        .unwrap_or_else(|_| {
            Err(anyhow::anyhow!(
                "the {} runner stopped before answering",
                K::KIND
            ))
        })
        // Whatever the statement's path, an unreachable database leaves marked.
        .map_err(classified)
}

/// The oldest queued requests, at most [`MAX_BATCH`] and at most one of each
/// [key](Combined::key); the others stay queued in their order.
fn take_batch<K: Combined>(queue: &mut Queue<K>) -> Vec<Pending<K>> {
    let mut keys = HashSet::new();
    let mut batch = Vec::with_capacity(queue.waiting.len().min(MAX_BATCH));
    let mut kept = Vec::new();
    for p in mem::take(&mut queue.waiting) {
        if batch.len() < MAX_BATCH && K::key(&p.item).is_none_or(|key| keys.insert(key)) {
            batch.push(p);
        } else {
            kept.push(p);
        }
    }
    queue.waiting = kept;
    batch
}

/// One running runner. Dropped without finishing (its runtime shut down), it gives its place
/// back, and fails the queued requests only when no other runner is left to take them.
struct Runner<K: Combined> {
    store: PgStore,
    finished: bool,
    kind: PhantomData<K>,
}

impl<K: Combined> Runner<K> {
    async fn run(mut self, mut batch: Vec<Pending<K>>) {
        loop {
            carry_out(&self.store, batch).await;
            let mut queue = K::combiner(&self.store).lock();
            if queue.waiting.is_empty() {
                queue.running -= 1;
                self.finished = true;
                return;
            }
            batch = take_batch(&mut queue);
        }
    }
}

impl<K: Combined> Drop for Runner<K> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut queue = K::combiner(&self.store).lock();
        queue.running -= 1;
        if queue.running == 0 {
            // Their senders drop: each request gets an error, none waits forever.
            queue.waiting.clear();
        }
    }
}

/// Carries out `batch` and answers each request.
async fn carry_out<K: Combined>(store: &PgStore, batch: Vec<Pending<K>>) {
    let items: Vec<&K::Item> = batch.iter().map(|p| &p.item).collect();
    let outcome = K::statement(store, &items).await;
    drop(items);
    match outcome {
        Ok(answers) if answers.len() == batch.len() => {
            for (p, answer) in batch.into_iter().zip(answers) {
                // A request whose caller went away has no one to answer (a write stays done).
                let _ = p.reply.send(Ok(answer));
            }
        }
        Ok(answers) => {
            let e = anyhow::anyhow!(
                "a combined statement answered {} of {} requests",
                answers.len(),
                batch.len()
            );
            fail_all(batch, &e);
        }
        Err(e) if batch.len() == 1 => {
            if let Some(p) = batch.into_iter().next() {
                let e = e.context(K::describe(&p.item));
                let _ = p.reply.send(Err(e));
            }
        }
        Err(e) if is_unavailable(&e) => fail_all(batch, &e),
        Err(e) => {
            tracing::warn!(
                requests = batch.len(),
                error = %format!("{e:#}"),
                "a combined statement failed; carrying out its requests one by one"
            );
            for p in batch {
                let outcome = K::statement(store, &[&p.item])
                    .await
                    .and_then(|answers| {
                        answers
                            .into_iter()
                            .next()
                            .ok_or_else(|| anyhow::anyhow!("the statement answered nothing"))
                    })
                    .map_err(|e| e.context(K::describe(&p.item)));
                let _ = p.reply.send(outcome);
            }
        }
    }
}

/// Answers every request of `batch` with `e`, as an error that is as retryable as `e` (the
/// database cannot be reached: one request at a time would only wait as long again for each).
fn fail_all<K: Combined>(batch: Vec<Pending<K>>, e: &anyhow::Error) {
    let cause = format!("{e:#}");
    let unavailable = is_unavailable(e);
    for p in batch {
        let e = if unavailable {
            anyhow::Error::new(NoConnection(cause.clone()))
        } else {
            anyhow::anyhow!("{cause}")
        };
        let _ = p.reply.send(Err(e.context(K::describe(&p.item))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind whose requests are (key, position).
    struct Keyed;

    impl Combined for Keyed {
        type Item = (u128, usize);
        type Answer = ();
        const KIND: &'static str = "keyed test request";

        fn describe(item: &(u128, usize)) -> String {
            format!("{item:?}")
        }

        fn key(item: &(u128, usize)) -> Option<u128> {
            Some(item.0)
        }

        fn combiner(_: &PgStore) -> &Combiner<Self> {
            panic!("take_batch does not use the store")
        }

        async fn statement(_: &PgStore, _: &[&(u128, usize)]) -> anyhow::Result<Vec<()>> {
            panic!("take_batch runs no statement")
        }
    }

    fn queue_of(keys: &[u128]) -> Queue<Keyed> {
        let waiting = keys
            .iter()
            .enumerate()
            .map(|(position, &key)| Pending {
                item: (key, position),
                reply: oneshot::channel().0,
            })
            .collect();
        Queue {
            waiting,
            running: 1,
        }
    }

    fn positions(batch: &[Pending<Keyed>]) -> Vec<usize> {
        batch.iter().map(|p| p.item.1).collect()
    }

    #[test]
    fn requests_with_one_key_go_into_successive_statements_in_their_order() {
        let mut queue = queue_of(&[7, 3, 7, 9, 7, 3]);
        assert_eq!(positions(&take_batch(&mut queue)), [0, 1, 3]);
        assert_eq!(positions(&take_batch(&mut queue)), [2, 5]);
        assert_eq!(positions(&take_batch(&mut queue)), [4]);
        assert!(take_batch(&mut queue).is_empty());
    }

    #[test]
    fn a_statement_takes_at_most_the_batch_size_oldest_first() {
        let keys: Vec<u128> = (0..MAX_BATCH as u128 + 10).collect();
        let mut queue = queue_of(&keys);
        let first = take_batch(&mut queue);
        assert_eq!(positions(&first), (0..MAX_BATCH).collect::<Vec<_>>());
        assert_eq!(
            positions(&take_batch(&mut queue)),
            (MAX_BATCH..MAX_BATCH + 10).collect::<Vec<_>>()
        );
    }

    #[test]
    fn one_runner_per_sixteen_connections_and_never_none() {
        assert_eq!(runners_for(16), 1);
        assert_eq!(runners_for(32), 2);
        assert_eq!(runners_for(2), 1);
        assert_eq!(runners_for(0), 1);
    }
}
