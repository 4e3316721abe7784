//! Use case: the merchant looks its sessions up by `transactionReferenceNumber`.

use super::Checkout;
use crate::auth::Claims;
use crate::error::CheckoutError;
use crate::session::{parse_transaction_reference, PaymentSession};

/// The most sessions one lookup returns (the newest).
pub const MAX_SESSIONS_BY_REFERENCE: u32 = 100;

impl Checkout {
    /// GET /pay/api/payment?transactionReferenceNumber=...: the caller's terminal's sessions
    /// with that reference, newest first (an expired session and its successor share a
    /// reference, so both are listed), at most [`MAX_SESSIONS_BY_REFERENCE`]. Another
    /// terminal's sessions are never listed. Each session is read as the status route reads
    /// it: a passed expiry is written first.
    ///
    /// A missing or invalid reference is a validation error naming
    /// `TransactionReferenceNumber`, by the create request's rule.
    pub async fn payments_by_reference(
        &self,
        caller: &Claims,
        reference: Option<&str>,
    ) -> Result<Vec<PaymentSession>, CheckoutError> {
        let reference = parse_transaction_reference(reference)?;
        let found = self
            .ports
            .sessions
            .find_by_reference(&caller.terminal, &reference, MAX_SESSIONS_BY_REFERENCE)
            .await?;
        let mut sessions = Vec::with_capacity(found.len());
        for session in found {
            sessions.push(self.settle_expiry(session).await?);
        }
        Ok(sessions)
    }
}
