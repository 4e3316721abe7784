//! Use case: the merchant looks its sessions up by `transactionReferenceNumber`, or one up
//! by the `internalTransactionReferenceNumber` support quotes.

use super::Checkout;
use crate::auth::Claims;
use crate::error::{CheckoutError, ValidationErrors};
use crate::session::{parse_transaction_reference, PaymentSession};
use crate::values::InternalReference;

/// The name a bad `internalTransactionReferenceNumber` is reported under.
pub const INTERNAL_REFERENCE_FIELD: &str = "InternalTransactionReferenceNumber";

/// `text` as an internal reference: upper-cased (Crockford base 32 is read without regard to
/// case, as support may type it), then checked; a validation error naming
/// [`INTERNAL_REFERENCE_FIELD`] otherwise.
pub fn parse_internal_reference(text: &str) -> Result<InternalReference, CheckoutError> {
    InternalReference::parse(&text.to_ascii_uppercase()).map_err(|_| {
        let mut errors = ValidationErrors::new();
        errors.add(
            INTERNAL_REFERENCE_FIELD,
            "Must be HC followed by 22 characters of Crockford base 32, as the service gave it.",
        );
        CheckoutError::Validation(errors)
    })
}

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

    /// GET /pay/api/payment?internalTransactionReferenceNumber=...: the caller's session with
    /// that internal reference (a list of one, or `[]`: an unknown reference and another
    /// terminal's session alike), read as the status route reads it (a passed expiry written
    /// first). A malformed reference is a validation error naming
    /// [`INTERNAL_REFERENCE_FIELD`].
    pub async fn payment_by_internal_reference(
        &self,
        caller: &Claims,
        reference: &str,
    ) -> Result<Vec<PaymentSession>, CheckoutError> {
        let reference = parse_internal_reference(reference)?;
        match self
            .ports
            .sessions
            .find_by_internal_reference(&reference)
            .await?
        {
            Some(session) if *session.terminal() == caller.terminal => {
                Ok(vec![self.settle_expiry(session).await?])
            }
            _ => Ok(Vec::new()),
        }
    }
}
