//! Builders of domain values for tests of every crate: one source, so that a new field of a
//! session or an attempt is filled in one place.

// Test code: a value that does not parse, or a broken promise, is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hash::{BuildHasher, Hasher};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use rust_decimal::Decimal;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

use crate::card::{CardBrand, CardDetails};
use crate::ports::{AuthorizationRequest, CardProcessor, ProcessorError, ProcessorOutcome};
use crate::session::{
    AttemptState, Callbacks, Charge, Item, LedgerState, PaymentAttempt, PaymentSession, Refund,
    SessionKind, SessionMoney, SessionRecord, SessionState,
};
use crate::values::{
    Amount, AttemptId, CallbackUrl, Culture, Currency, DisplayText, Email, InternalReference,
    ItemCode, LineAmount, MerchantReference, RefundId, SessionId, TerminalNumber,
};

/// 16 bytes that differ on every call (in this process), for ids.
pub fn random_bytes() -> [u8; 16] {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut bytes = [0u8; 16];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_usize(i);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    bytes
}

/// A UTC instant with whole microseconds (what PostgreSQL keeps), `micros` after a fixed
/// base.
pub fn at(micros: i64) -> OffsetDateTime {
    datetime!(2026-03-01 10:20:30.123456 UTC) + Duration::microseconds(micros)
}

/// A terminal number; panics when `s` is not one.
pub fn terminal(s: &str) -> TerminalNumber {
    TerminalNumber::parse(s).unwrap()
}

/// A merchant reference; panics when `s` is not one.
pub fn reference(s: &str) -> MerchantReference {
    MerchantReference::parse(s).unwrap()
}

/// A decimal; panics when `s` is not one.
pub fn decimal(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

/// A session amount; panics when invalid.
pub fn amount(value: &str, currency: &str) -> Amount {
    Amount::new(decimal(value), Currency::parse(currency).unwrap()).unwrap()
}

/// An item or charge amount; panics when invalid.
pub fn line(value: &str, currency: &str) -> LineAmount {
    LineAmount::new(decimal(value), Currency::parse(currency).unwrap()).unwrap()
}

/// A callback URL; panics when invalid.
pub fn url(s: &str) -> CallbackUrl {
    CallbackUrl::parse(s).unwrap()
}

/// A Pending payment-link session in USD 25.00, without items or charges, created at
/// [`at(0)`](at) and expiring an hour later.
pub fn session(terminal_number: &str, merchant_reference: &str) -> PaymentSession {
    PaymentSession::restore(session_record(terminal_number, merchant_reference))
}

/// The record of [`session`], for a test to change any field of before
/// [`PaymentSession::restore`] (see [`edit`]).
pub fn session_record(terminal_number: &str, merchant_reference: &str) -> SessionRecord {
    SessionRecord {
        id: SessionId::from_random_bytes(random_bytes()),
        terminal: terminal(terminal_number),
        reference: reference(merchant_reference),
        internal_reference: InternalReference::from_random_bytes(random_bytes()),
        kind: SessionKind::PaymentLink,
        amount: amount("25.00", "USD"),
        description: Some(DisplayText::parse("A link payment").unwrap()),
        email: Some(Email::parse("payer@example.com").unwrap()),
        culture: Some(Culture::En),
        items: Vec::new(),
        charges: Vec::new(),
        metadata: Default::default(),
        capture_method: None,
        state: SessionState::Pending,
        current_attempt: None,
        created_at: at(0),
        updated_at: at(0),
        expires_at: at(3_600_000_000),
        money: SessionMoney::nothing(Currency::parse("USD").unwrap()),
        attempts: Vec::new(),
        disputes: Vec::new(),
    }
}

/// `session` with `change` made to its record: for tests that need a session in a state or
/// with fields no use case would give it (a store test's fixtures).
pub fn edit(session: PaymentSession, change: impl FnOnce(&mut SessionRecord)) -> PaymentSession {
    let mut record = session.into_record();
    change(&mut record);
    PaymentSession::restore(record)
}

/// An integrated-checkout session with every field set: callbacks with a back URL, items and
/// charges in a deliberate order, microsecond timestamps.
pub fn full_checkout_session(terminal_number: &str, merchant_reference: &str) -> PaymentSession {
    let mut s = session_record(terminal_number, merchant_reference);
    s.kind = SessionKind::IntegratedCheckout(Box::new(Callbacks {
        success: url("https://shop.example/pay/ok?order=7&lang=es"),
        fail: url("https://shop.example/pay/fail"),
        back: Some(url("https://shop.example/cart#top")),
    }));
    s.amount = amount("10.5", "USD");
    s.description = Some(DisplayText::parse("Café y pan — pedido nº 7").unwrap());
    s.email = Some(Email::parse("ana.perez@correo.example.cr").unwrap());
    s.culture = Some(Culture::Es);
    s.items = vec![
        Item {
            code: Some(ItemCode::parse("SKU-9").unwrap()),
            quantity: 3,
            description: Some(DisplayText::parse("Zebra mug").unwrap()),
            amount: line("2.5", "USD"),
        },
        Item {
            code: None,
            quantity: 1,
            description: None,
            amount: line("0", "USD"),
        },
        Item {
            code: Some(ItemCode::parse("A-1").unwrap()),
            quantity: 1_000_000,
            description: Some(DisplayText::parse("Apple").unwrap()),
            amount: line("1.99", "USD"),
        },
    ];
    s.charges = vec![
        Charge {
            name: Some(DisplayText::parse("Shipping").unwrap()),
            amount: line("1.25", "USD"),
        },
        Charge {
            name: None,
            amount: line("0.01", "USD"),
        },
        Charge {
            name: Some(DisplayText::parse("Handling").unwrap()),
            amount: line("0.24", "USD"),
        },
    ];
    s.metadata = crate::values::Metadata::parse([
        ("orderId".to_owned(), "7".to_owned()),
        (
            "nota".to_owned(),
            "entregar después de las 5 — puerta \"B\"".to_owned(),
        ),
        ("empty".to_owned(), String::new()),
    ])
    .unwrap();
    s.capture_method = Some(crate::terminal::CaptureMethod::Manual);
    s.created_at = at(1);
    s.updated_at = at(2);
    s.expires_at = datetime!(2026-03-01 11:20:30.999999 UTC);
    PaymentSession::restore(s)
}

/// A new attempt of `session` begun at `when` (Sent, due for a check 30 s later).
pub fn attempt(session: &PaymentSession, when: OffsetDateTime) -> PaymentAttempt {
    PaymentAttempt {
        id: AttemptId::from_random_bytes(random_bytes()),
        session_id: session.id(),
        card_brand: CardBrand::Visa,
        card_last4: "4242".to_owned(),
        payment_method: "pm_test".to_owned(),
        return_url: format!("https://pay.example/pay/return/{}", session.id()),
        capture_method: crate::terminal::CaptureMethod::Automatic,
        processor_reference: None,
        challenge_url: None,
        state: AttemptState::Sent,
        svc_code: None,
        checks: 0,
        next_check_at: Some(when + Duration::seconds(30)),
        created_at: when,
        updated_at: when,
    }
}

/// A new refund of `value` of `session`, recorded (Sent) at `when`.
pub fn refund(session: &PaymentSession, value: &str, when: OffsetDateTime) -> Refund {
    Refund {
        id: RefundId::from_random_bytes(random_bytes()),
        session_id: session.id(),
        amount: decimal(value),
        state: LedgerState::Sent,
        processor_reference: None,
        svc_code: None,
        key: None,
        next_check_at: Some(when + time::Duration::seconds(30)),
        created_at: when,
        updated_at: when,
    }
}

/// The CVV of every test card (chosen so that it appears in no error text by chance).
pub const TEST_CVV: &str = "737";

/// A valid card with `number`, expiring in three years, CVV [`TEST_CVV`].
pub fn card(number: &str) -> CardDetails {
    card_with(number, TEST_CVV)
}

/// A valid card with `number` and `cvv`, expiring in three years.
pub fn card_with(number: &str, cvv: &str) -> CardDetails {
    let now = OffsetDateTime::now_utc();
    crate::card::CardInput {
        cardholder_name: "Ada Lovelace".into(),
        card_number: number.into(),
        expiry: format!("12/{}", now.year() + 3),
        cvv: cvv.into(),
    }
    .validate(now)
    .unwrap_or_else(|errors| panic!("test card refused: {errors:?}"))
}

/// A card payment as the service sends it to a processor: everything an authorisation
/// request borrows.
pub struct Payment {
    /// The attempt (its id is the idempotency key).
    pub attempt: AttemptId,
    /// The session paid.
    pub session: SessionId,
    /// The session's internal reference.
    pub reference: InternalReference,
    /// How much.
    pub amount: Amount,
    /// The card.
    pub card: CardDetails,
    /// Where the processor sends the payer back after a challenge.
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
        let session = SessionId::from_random_bytes(random_bytes());
        Payment {
            attempt: AttemptId::from_random_bytes(random_bytes()),
            session,
            reference: InternalReference::from_random_bytes(random_bytes()),
            amount: amount(value, currency),
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
            capture: crate::terminal::CaptureMethod::Automatic,
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
