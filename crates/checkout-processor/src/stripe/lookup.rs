//! Finding what became of an attempt: the PaymentIntent whose `metadata[attempt]` names it.
//!
//! localstripe has no search API, so the adapter pages through the list of intents. Real Stripe
//! lists the newest first, so a recent attempt is found on the first page.

use checkout_domain::ports::{ProcessorError, ProcessorOutcome};
use checkout_domain::values::AttemptId;

use super::api::{List, PaymentIntent};
use super::client::Client;
use super::failure_of;
use super::outcome::{holding_of, most_significant};

/// Intents per page (Stripe's maximum).
const PAGE_SIZE: usize = 100;
/// Pages read at most before giving up.
const MAX_PAGES: usize = 10;

/// What the processor holds for `attempt`: `Ok(None)` only when every intent was read and none
/// holds a charge for it.
pub(crate) async fn find(
    client: &Client,
    attempt: AttemptId,
) -> Result<Option<ProcessorOutcome>, ProcessorError> {
    let wanted = attempt.to_string();
    let limit = PAGE_SIZE.to_string();
    let mut holdings = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut query = vec![("limit", limit.as_str())];
        if let Some(id) = &after {
            query.push(("starting_after", id.as_str()));
        }
        let page: List<PaymentIntent> = client
            .get("list payment intents", &["v1", "payment_intents"], &query)
            .await
            .map_err(failure_of)?;
        holdings.extend(
            page.data
                .iter()
                .filter(|intent| intent.metadata("attempt") == Some(wanted.as_str()))
                .map(holding_of),
        );
        if !page.has_more {
            return most_significant(holdings);
        }
        after = match page.data.last() {
            Some(last) => Some(last.id.clone()),
            None => {
                return Err(ProcessorError::Communication(
                    "list payment intents: an empty page claims more".into(),
                ))
            }
        };
    }
    if holdings.is_empty() {
        Err(ProcessorError::Communication(format!(
            "attempt {attempt} is not among the {} most recent payment intents; its outcome is unknown",
            PAGE_SIZE * MAX_PAGES
        )))
    } else {
        most_significant(holdings)
    }
}
