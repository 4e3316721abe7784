//! What moves money after the charge: captures, voids, refunds, cancels, and the processor's own events.

mod captures_voids_refunds;
mod processor_events;
