//! A processor whose events the service does not take: the sandbox (its answers are final at
//! once), or Stripe while no webhook signing secret is configured.

use checkout_domain::ports::{NoticeRejected, ProcessorNotice, ProcessorNotices};
use time::OffsetDateTime;

/// Refuses every processor event as not configured (the route answers 404).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEvents;

impl ProcessorNotices for NoEvents {
    fn signature_header(&self) -> &'static str {
        "Stripe-Signature"
    }

    fn read(
        &self,
        _payload: &[u8],
        _signature: Option<&str>,
        _now: OffsetDateTime,
    ) -> Result<ProcessorNotice, NoticeRejected> {
        Err(NoticeRejected::NotConfigured)
    }
}
