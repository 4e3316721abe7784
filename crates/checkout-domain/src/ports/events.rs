//! The merchant event feed.

use async_trait::async_trait;

use crate::events::{EventCursor, PaymentEvent};
use crate::values::TerminalNumber;

/// The events of every terminal, in feed order: the order of the transactions that wrote
/// them (so one session's events in the order they happened).
///
/// An implementation MUST write exactly one event for every change of a session into a state
/// that has an [`EventType`](crate::events::EventType), in the same transaction as the change
/// (no change without its event, no event without its change), whichever code path made the
/// change: a use case, a sweep, a bulk expiry.
#[async_trait]
pub trait EventLog: Send + Sync {
    /// The events of `terminal` after `after` (from the start when `None`), in feed order, at
    /// most `limit`.
    ///
    /// MUST never skip an event: an event that commits after a caller read past its position
    /// MUST NOT exist, so an implementation holds back events while any older transaction
    /// may still commit. MUST show no other terminal's event.
    async fn events_after(
        &self,
        terminal: &TerminalNumber,
        after: Option<EventCursor>,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentEvent>>;

    /// Whether `cursor` is the position of one of `terminal`'s events: the only cursors the
    /// feed hands out (a page's last event's, or on an empty page the one it was asked with).
    ///
    /// MUST answer `false` for a position no event of `terminal` holds (another terminal's
    /// event's included), so that a well-formed cursor the feed never issued is refused
    /// instead of silently reading nothing.
    async fn cursor_issued(
        &self,
        terminal: &TerminalNumber,
        cursor: EventCursor,
    ) -> anyhow::Result<bool>;
}
