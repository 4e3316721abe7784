//! [`HashingPool`]: the Argon2 memories of the secret verifications under way, kept from one
//! verification to the next while a burst lasts and given back to the operating system when
//! the last verification of the burst ends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::secrets::HashingMemory;

/// Argon2 memories shared by the verifications of one provider. A verification holds a
/// [`Turn`] from before it waits for its permit until it is done; while any turn is held,
/// the memories given back are kept for the next verification (no fresh 19 MiB to fault in
/// per token in a burst); when the last turn ends, every kept memory is dropped, so an idle
/// service holds none.
#[derive(Debug, Default)]
pub(crate) struct HashingPool {
    memories: Mutex<Vec<HashingMemory>>,
    turns: AtomicUsize,
}

impl HashingPool {
    /// Counts the caller as waiting or verifying until the returned turn is dropped.
    pub(crate) fn turn(self: &Arc<Self>) -> Turn {
        self.turns.fetch_add(1, Ordering::SeqCst);
        Turn {
            pool: Arc::clone(self),
        }
    }

    /// The bytes of Argon2 memory kept, not counting those in use.
    #[cfg(test)]
    pub(crate) fn kept_bytes(&self) -> usize {
        lock(&self.memories)
            .iter()
            .map(HashingMemory::size_bytes)
            .sum()
    }
}

/// One verification's place in a [`HashingPool`].
#[derive(Debug)]
pub(crate) struct Turn {
    pool: Arc<HashingPool>,
}

impl Turn {
    /// A kept memory, or an empty one (allocated by the verification that needs it).
    pub(crate) fn take(&self) -> HashingMemory {
        lock(&self.pool.memories).pop().unwrap_or_default()
    }

    /// Keeps `memory` for the next verification; it is dropped with the others when the
    /// last turn ends.
    pub(crate) fn give_back(&self, memory: HashingMemory) {
        lock(&self.pool.memories).push(memory);
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        // Every give_back happens before its turn ends, so the turn that ends last sees them
        // all. A turn that starts meanwhile at worst allocates a memory of its own.
        if self.pool.turns.fetch_sub(1, Ordering::SeqCst) == 1 {
            lock(&self.pool.memories).clear();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::{hash_secret, verify_secret_with_memory};

    /// A memory that has verified a default-cost hash (19 MiB).
    fn used_memory(turn: &Turn, hash: &str) -> HashingMemory {
        let mut memory = turn.take();
        assert!(verify_secret_with_memory(hash, "s3cret", &mut memory));
        memory
    }

    #[test]
    fn memories_are_kept_while_a_turn_is_held_and_dropped_when_the_last_ends() {
        let hash = hash_secret("s3cret").unwrap();
        let pool = Arc::new(HashingPool::default());
        let (first, second) = (pool.turn(), pool.turn());
        let memory = used_memory(&first, &hash);
        let size = memory.size_bytes();
        assert!(size >= 19 * 1024 * 1024, "{size}");
        first.give_back(memory);
        drop(first);
        // The second turn is still held: the memory waits for it, and it gets it.
        assert_eq!(pool.kept_bytes(), size);
        let reused = second.take();
        assert_eq!(reused.size_bytes(), size);
        assert_eq!(pool.kept_bytes(), 0);
        second.give_back(reused);
        drop(second);
        assert_eq!(
            pool.kept_bytes(),
            0,
            "nothing is kept once every turn ended"
        );
    }

    #[test]
    fn a_turn_dropped_while_waiting_releases_what_others_gave_back() {
        let hash = hash_secret("s3cret").unwrap();
        let pool = Arc::new(HashingPool::default());
        let (verifying, waiting) = (pool.turn(), pool.turn());
        let memory = used_memory(&verifying, &hash);
        verifying.give_back(memory);
        drop(verifying);
        assert!(pool.kept_bytes() > 0);
        // The waiting request goes away (its client disconnected) before its permit.
        drop(waiting);
        assert_eq!(pool.kept_bytes(), 0);
    }
}
