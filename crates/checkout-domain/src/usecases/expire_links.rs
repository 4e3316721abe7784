//! Use case: the periodic sweep that expires unpaid sessions.

use super::Checkout;
use crate::error::CheckoutError;

impl Checkout {
    /// Marks every Pending session whose expiry has passed as Expired, freeing its merchant
    /// reference; returns how many. Reads also expire sessions lazily, so the sweep only keeps
    /// stored states current for reporting.
    pub async fn expire_links(&self) -> Result<u64, CheckoutError> {
        Ok(self.ports.sessions.expire_due(self.now()).await?)
    }
}
