//! Helpers shared by the test binaries: cards and payments, and localstripe (the
//! fault-injecting stand-in is `checkout_processor::testing`).
//!
//! A payment goes through the port as the service sends it: `tokenize` turns the card into a
//! payment-method reference, then `authorize` asks for the money with that reference (the card
//! itself never travels with the authorisation).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod localstripe;

use checkout_domain::card::{CardDetails, CardInput};
use checkout_domain::ports::{
    AuthorizationRequest, CardProcessor, ProcessorError, ProcessorOutcome,
};
use checkout_domain::values::{Amount, AttemptId, Currency, InternalReference, SessionId};
use time::OffsetDateTime;

/// The CVV used by every test card (chosen so that it appears in no error text by chance).
pub const CVV: &str = "737";

/// 16 random bytes, different on every call (the domain's shared builder).
pub use checkout_domain::testing::builders::random_bytes as unique_bytes;

/// A card with `number`, expiring in three years, CVV `cvv`.
pub fn card_with(number: &str, cvv: &str) -> CardDetails {
    let now = OffsetDateTime::now_utc();
    CardInput {
        cardholder_name: "Ada Lovelace".into(),
        card_number: number.into(),
        expiry: format!("12/{}", now.year() + 3),
        cvv: cvv.into(),
    }
    .validate(now)
    .unwrap_or_else(|errors| panic!("test card refused: {errors:?}"))
}

/// A card with `number` and the test CVV.
pub fn card(number: &str) -> CardDetails {
    card_with(number, CVV)
}

/// Everything an authorisation request borrows.
pub struct Payment {
    pub attempt: AttemptId,
    pub session: SessionId,
    pub reference: InternalReference,
    pub amount: Amount,
    pub card: CardDetails,
    pub return_url: String,
    /// The payment-method reference `tokenize` gave (empty until then).
    pub payment_method: String,
}

impl Payment {
    /// A payment of 10.50 USD with `card`, under a fresh attempt.
    pub fn new(card: CardDetails) -> Self {
        Self::of(card, "10.50", "USD")
    }

    /// A payment of `value` `currency` with `card`, under a fresh attempt.
    pub fn of(card: CardDetails, value: &str, currency: &str) -> Self {
        let session = SessionId::from_random_bytes(unique_bytes());
        Payment {
            attempt: AttemptId::from_random_bytes(unique_bytes()),
            session,
            reference: InternalReference::from_random_bytes(unique_bytes()),
            amount: Amount::new(value.parse().unwrap(), Currency::parse(currency).unwrap())
                .unwrap(),
            card,
            return_url: format!("https://checkout.test/pay/challenge/{session}/return"),
            payment_method: String::new(),
        }
    }

    /// A payment that already holds the payment-method reference `payment_method` (for
    /// calling `authorize` alone).
    pub fn with_payment_method(card: CardDetails, payment_method: &str) -> Self {
        let mut payment = Self::new(card);
        payment.payment_method = payment_method.to_owned();
        payment
    }

    /// Hands the card to `processor` and keeps the payment-method reference it gives.
    pub async fn tokenize<P: CardProcessor + ?Sized>(
        &mut self,
        processor: &P,
    ) -> Result<String, ProcessorError> {
        let reference = processor.tokenize(self.attempt, &self.card).await?;
        self.payment_method.clone_from(&reference);
        Ok(reference)
    }

    /// What the service does to pay: `tokenize`, then `authorize` with its reference. A
    /// failed `tokenize` is returned as is, and no authorisation is asked for.
    pub async fn pay<P: CardProcessor + ?Sized>(
        &mut self,
        processor: &P,
    ) -> Result<ProcessorOutcome, ProcessorError> {
        self.tokenize(processor).await?;
        processor.authorize(self.request()).await
    }

    /// The request for this payment.
    pub fn request(&self) -> AuthorizationRequest<'_> {
        AuthorizationRequest {
            attempt: self.attempt,
            session: self.session,
            internal_reference: &self.reference,
            amount: self.amount,
            payment_method: &self.payment_method,
            return_url: &self.return_url,
        }
    }

    /// Panics when `text` carries the card number or the CVV.
    pub fn assert_no_card_data(&self, text: &str) {
        let number = self.card.number.expose_digits();
        assert!(!text.contains(number), "card number leaked: {text}");
        assert!(
            !text.contains(&number[number.len() - 8..]),
            "part of the card number leaked: {text}"
        );
        assert!(
            !text.contains(self.card.cvv.expose_digits()),
            "CVV leaked: {text}"
        );
    }

    /// Panics when the text of `error` (`Display` and `Debug`) carries card data.
    pub fn assert_error_has_no_card_data(&self, error: &ProcessorError) {
        self.assert_no_card_data(&error.to_string());
        self.assert_no_card_data(&format!("{error:?}"));
    }
}
