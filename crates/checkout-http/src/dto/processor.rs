//! The answer to the card processor's own events (POST /pay/api/processor-events).

use serde::Serialize;
use utoipa::ToSchema;

/// What the service did with a processor event.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProcessorEventReceipt {
    /// Always true: the event need not be sent again.
    pub received: bool,
    /// `applied` (the object was read and the ledger brought up to it), `duplicate` (this
    /// event id was absorbed before), `unknown_object` (about nothing this service made;
    /// logged) or `ignored` (an event type the service does not follow).
    #[schema(example = "applied")]
    pub outcome: &'static str,
}
