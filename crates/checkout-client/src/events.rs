//! The events feed as a resumable reader: page after page, or event after event, keeping a
//! cursor the caller can save and resume from.

use std::collections::VecDeque;

use crate::client::Client;
use crate::error::Error;
use crate::types::{Event, EventPage};

/// Reads the terminal's events in order from a cursor ([`Client::events`]).
///
/// [`EventFeed::cursor`] is where to resume so that no event is skipped: save it after
/// handling events, and give it to [`Client::events`] after a restart. An event may be read
/// twice (a page only partly handled is read again on resume), never skipped:
/// deduplicate by [`Event::id`].
///
/// ```no_run
/// use checkout_client::Client;
///
/// # async fn run(client: Client, saved: Option<String>) -> Result<(), checkout_client::Error> {
/// let mut feed = client.events(saved);
/// while let Some(event) = feed.next_event().await? {
///     println!("{} {} {}", event.id, event.kind, event.data.state);
/// }
/// let resume_from = feed.cursor().map(str::to_owned); // save it
/// # let _ = resume_from;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct EventFeed {
    client: Client,
    limit: Option<u32>,
    /// Every event up to here has been handed out.
    resume: Option<String>,
    /// The cursor after the last page fetched (ahead of `resume` while `buffered` holds
    /// events of that page).
    fetched: Option<String>,
    buffered: VecDeque<Event>,
    has_more: bool,
}

impl EventFeed {
    pub(crate) fn new(client: Client, after: Option<String>) -> EventFeed {
        EventFeed {
            client,
            limit: None,
            resume: after.clone(),
            fetched: after,
            buffered: VecDeque::new(),
            has_more: true,
        }
    }

    /// Events per page, 1 to 100 (the service's default when not set: 50).
    pub fn page_size(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Where to resume from (`None`: from the first event): every event before it has been
    /// handed out by [`next_page`](Self::next_page) or [`next_event`](Self::next_event).
    pub fn cursor(&self) -> Option<&str> {
        self.resume.as_deref()
    }

    /// False once a page said no more events were available after it (a later call may
    /// still find new ones).
    pub fn has_more(&self) -> bool {
        self.has_more || !self.buffered.is_empty()
    }

    /// The next page: the events of a page not yet handed out by
    /// [`next_event`](Self::next_event), else a page fetched after the cursor (empty when
    /// there is nothing new yet). Moves the cursor past the page.
    pub async fn next_page(&mut self) -> Result<EventPage, Error> {
        if !self.buffered.is_empty() {
            let events = self.buffered.drain(..).collect();
            self.resume = self.fetched.clone();
            return Ok(EventPage {
                events,
                cursor: self.resume.clone(),
                has_more: self.has_more,
            });
        }
        let page = self.fetch().await?;
        self.resume = self.fetched.clone();
        Ok(page)
    }

    /// The next event, fetching a page when none is left; `None` when there is nothing new
    /// yet (call again later to poll). The cursor moves past a page once its last event is
    /// handed out.
    pub async fn next_event(&mut self) -> Result<Option<Event>, Error> {
        if self.buffered.is_empty() {
            let page = self.fetch().await?;
            self.buffered.extend(page.events);
            if self.buffered.is_empty() {
                self.resume = self.fetched.clone();
                return Ok(None);
            }
        }
        let event = self.buffered.pop_front();
        if self.buffered.is_empty() {
            self.resume = self.fetched.clone();
        }
        Ok(event)
    }

    /// Fetches the page after `fetched` and moves `fetched` past it.
    async fn fetch(&mut self) -> Result<EventPage, Error> {
        let page = self
            .client
            .events_page(self.fetched.as_deref(), self.limit)
            .await?;
        if let Some(cursor) = &page.cursor {
            self.fetched = Some(cursor.clone());
        }
        self.has_more = page.has_more;
        Ok(page)
    }
}
