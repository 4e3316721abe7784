//! [`TerminalsSeen`]: the active terminals this store has read, so that a create for a
//! terminal already seen active needs no read of its own (`TerminalDirectory::recent_terminal`).
//! What it holds is never trusted on its own: the create inserts under
//! `SessionRepository::insert_for_terminal`, which checks in the same statement that the
//! terminal is still as it was seen, and forgets it here when it is not; every refusal is
//! decided on a fresh read.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use checkout_domain::terminal::Terminal;
use checkout_domain::values::TerminalNumber;

/// At most this many terminals are kept; when full, the cache starts again empty.
const CAPACITY: usize = 4096;

/// Active terminals as last read, by number.
#[derive(Debug, Default)]
pub(crate) struct TerminalsSeen {
    seen: Mutex<HashMap<TerminalNumber, Terminal>>,
}

impl TerminalsSeen {
    /// The terminal as last read, if it was active then.
    pub(crate) fn get(&self, number: &TerminalNumber) -> Option<Terminal> {
        self.lock().get(number).cloned()
    }

    /// Keeps `terminal`, read just now, when it is active; forgets it otherwise.
    pub(crate) fn remember(&self, terminal: &Terminal) {
        let mut seen = self.lock();
        if !terminal.active {
            seen.remove(&terminal.number);
            return;
        }
        if seen.len() >= CAPACITY && !seen.contains_key(&terminal.number) {
            seen.clear();
        }
        seen.insert(terminal.number.clone(), terminal.clone());
    }

    /// Forgets the terminal `number` (it changed since it was read).
    pub(crate) fn forget(&self, number: &TerminalNumber) {
        self.lock().remove(number);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TerminalNumber, Terminal>> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
