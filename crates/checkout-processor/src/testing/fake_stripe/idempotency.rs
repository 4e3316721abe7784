//! Stripe's idempotency keys. The first request with a key that begins work has its final
//! status and body saved; a later request with the key and the same parameters gets that
//! answer again without the work being done twice; other parameters are refused; a request
//! whose key's first request is still executing gets 409. A refusal by validation saves
//! nothing. Keys are scoped per API key, as Stripe scopes them per account. Stripe forgets a
//! key after 24 hours; the fake keeps every key until it stops.

use std::collections::hash_map::Entry as MapEntry;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::http::Response;

/// What a request's key allows.
pub(super) enum Claim {
    /// The key is new: this request executes (the key now reads "in progress").
    Started,
    /// The key's first request finished with this answer, for the same parameters.
    Replay(Response),
    /// The key's first request is still executing.
    InProgress,
    /// The key was first used with other parameters.
    Mismatch,
}

struct Entry {
    fingerprint: u64,
    saved: Option<Response>,
}

/// The keys seen, by (API key, idempotency key).
#[derive(Default)]
pub(super) struct Keys {
    entries: HashMap<(String, String), Entry>,
}

impl Keys {
    pub fn claim(&mut self, scope: &str, key: &str, fingerprint: u64) -> Claim {
        match self.entries.entry((scope.to_owned(), key.to_owned())) {
            MapEntry::Vacant(vacant) => {
                vacant.insert(Entry {
                    fingerprint,
                    saved: None,
                });
                Claim::Started
            }
            MapEntry::Occupied(occupied) => {
                let entry = occupied.get();
                match &entry.saved {
                    None => Claim::InProgress,
                    Some(saved) if entry.fingerprint == fingerprint => Claim::Replay(saved.clone()),
                    Some(_) => Claim::Mismatch,
                }
            }
        }
    }

    /// Ends a started request: saves its answer, or forgets the key when nothing is saved.
    pub fn finish(&mut self, scope: &str, key: &str, saved: Option<Response>) {
        let id = (scope.to_owned(), key.to_owned());
        match saved {
            Some(response) => {
                if let Some(entry) = self.entries.get_mut(&id) {
                    entry.saved = Some(response);
                }
            }
            None => {
                self.entries.remove(&id);
            }
        }
    }
}

/// A digest of a request's endpoint and parameters, in any order. A digest rather than the
/// fields themselves, so that no card number is kept.
pub(super) fn fingerprint(method: &str, path: &str, form: &[(String, String)]) -> u64 {
    let mut fields: Vec<&(String, String)> = form.iter().collect();
    fields.sort();
    let mut hasher = DefaultHasher::new();
    (method, path, fields).hash(&mut hasher);
    hasher.finish()
}
