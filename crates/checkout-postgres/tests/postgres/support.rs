//! Builders of domain values for the tests.

use std::hash::{BuildHasher, Hasher};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use checkout_domain::card::CardBrand;
use checkout_domain::session::{
    AttemptState, Callbacks, Charge, Item, PaymentAttempt, PaymentSession, SessionKind,
    SessionState,
};
use checkout_domain::terminal::Terminal;
use checkout_domain::values::{
    Amount, AttemptId, CallbackUrl, Culture, Currency, DisplayText, Email, InternalReference,
    ItemCode, LineAmount, MerchantReference, SessionId, TerminalNumber,
};
use checkout_postgres::PgStore;
use checkout_test_db::TestDatabase;
use rust_decimal::Decimal;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

/// 16 bytes that differ on every call.
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

/// A UTC instant with whole microseconds (PostgreSQL keeps microseconds), `micros` after
/// a fixed base.
pub fn at(micros: i64) -> OffsetDateTime {
    datetime!(2026-03-01 10:20:30.123456 UTC) + Duration::microseconds(micros)
}

pub fn terminal(s: &str) -> TerminalNumber {
    TerminalNumber::parse(s).unwrap()
}

pub fn reference(s: &str) -> MerchantReference {
    MerchantReference::parse(s).unwrap()
}

pub fn decimal(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

pub fn amount(value: &str, currency: &str) -> Amount {
    Amount::new(decimal(value), Currency::parse(currency).unwrap()).unwrap()
}

pub fn line(value: &str, currency: &str) -> LineAmount {
    LineAmount::new(decimal(value), Currency::parse(currency).unwrap()).unwrap()
}

pub fn url(s: &str) -> CallbackUrl {
    CallbackUrl::parse(s).unwrap()
}

/// A Pending payment-link session in USD, without items or charges, expiring in an hour.
pub fn session(terminal_number: &str, merchant_reference: &str) -> PaymentSession {
    PaymentSession {
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
        state: SessionState::Pending,
        current_attempt: None,
        created_at: at(0),
        updated_at: at(0),
        expires_at: at(3_600_000_000),
        money: Default::default(),
        attempts: Vec::new(),
    }
}

/// An integrated-checkout session with every field set: callbacks with a back URL, items and
/// charges in a deliberate order, microsecond timestamps.
pub fn full_checkout_session(terminal_number: &str, merchant_reference: &str) -> PaymentSession {
    let mut s = session(terminal_number, merchant_reference);
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
    s.created_at = at(1);
    s.updated_at = at(2);
    s.expires_at = datetime!(2026-03-01 11:20:30.999999 UTC);
    s
}

/// A new attempt of `session`, as begun.
pub fn attempt(session: &PaymentSession, when: OffsetDateTime) -> PaymentAttempt {
    PaymentAttempt {
        id: AttemptId::from_random_bytes(random_bytes()),
        session_id: session.id,
        card_brand: CardBrand::Visa,
        card_last4: "4242".to_owned(),
        payment_method: "pm_test".to_owned(),
        return_url: format!("https://pay.example/pay/return/{}", session.id),
        processor_reference: None,
        challenge_url: None,
        state: AttemptState::Sent,
        svc_code: None,
        checks: 0,
        next_check_at: Some(when + time::Duration::seconds(30)),
        created_at: when,
        updated_at: when,
    }
}

/// A fresh database with the terminals `T-1` and `T-2`.
pub async fn database() -> (TestDatabase, PgStore) {
    let db = TestDatabase::create().await.unwrap();
    let store = db.store();
    for number in ["T-1", "T-2"] {
        store
            .create_terminal(&Terminal {
                number: terminal(number),
                display_name: format!("Merchant {number}"),
                active: true,
                callback_hosts: None,
                max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
            })
            .await
            .unwrap();
    }
    (db, store)
}

/// Runs one SQL query returning a count on the test's database.
pub async fn count(db: &TestDatabase, query: &str) -> i64 {
    use diesel::sql_types::BigInt;
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let row: Count = diesel::sql_query(query)
        .get_result(&mut conn)
        .await
        .unwrap();
    row.n
}
