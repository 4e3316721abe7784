//! Use case: a merchant catches up with its events (after downtime, or instead of webhooks).

use super::Checkout;
use crate::auth::Claims;
use crate::error::{CheckoutError, ValidationErrors};
use crate::events::{EventCursor, PaymentEvent};

/// The most events one page holds.
pub const MAX_EVENTS_PER_PAGE: u32 = 100;

/// One page of a terminal's event feed.
#[derive(Debug, Clone)]
pub struct EventPage {
    /// The events, in the order of the transactions that wrote them.
    pub events: Vec<PaymentEvent>,
    /// Where the next page starts: the last event's cursor, else the one asked with.
    pub cursor: Option<EventCursor>,
    /// True when more events were already available after this page.
    pub has_more: bool,
}

impl Checkout {
    /// GET /pay/api/events: the caller's terminal's events after `after`, in feed order, at
    /// most `limit` (1..=[`MAX_EVENTS_PER_PAGE`]; the HTTP edge checks it). A cursor never
    /// skips an event that commits late. A well-formed cursor that the feed never handed out
    /// to this terminal is a validation error naming `After` (not an empty page).
    pub async fn list_events(
        &self,
        caller: &Claims,
        after: Option<EventCursor>,
        limit: u32,
    ) -> Result<EventPage, CheckoutError> {
        let limit = limit.clamp(1, MAX_EVENTS_PER_PAGE);
        if let Some(cursor) = after {
            if !self
                .ports
                .events
                .cursor_issued(&caller.terminal, cursor)
                .await?
            {
                let mut errors = ValidationErrors::new();
                errors.add("After", "Not a cursor this service handed out.");
                return Err(CheckoutError::Validation(errors));
            }
        }
        let mut events = self
            .ports
            .events
            .events_after(&caller.terminal, after, limit + 1)
            .await?;
        let has_more = events.len() > limit as usize;
        events.truncate(limit as usize);
        let cursor = events.last().map(|e| e.cursor).or(after);
        Ok(EventPage {
            events,
            cursor,
            has_more,
        })
    }
}
