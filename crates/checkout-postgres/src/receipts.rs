//! [`ReceiptOutbox`] on PostgreSQL: the `receipt_mails` rows that the statement recording a
//! payment's success queues (`attempt_writes`), claimed with `FOR UPDATE SKIP LOCKED`
//! leases as the webhook deliveries are, and read with the session, its paying attempt and
//! its terminal, which hold everything a receipt says (the row holds no address and no card
//! data).

use anyhow::Context;
use async_trait::async_trait;
use checkout_domain::card::CardBrand;
use checkout_domain::ports::ReceiptOutbox;
use checkout_domain::receipts::{DueReceipt, MailState, QueuedReceipt, Receipt};
use checkout_domain::values::{Culture, Currency, SessionId, TerminalNumber};
use checkout_domain::webhooks::NextStep;
use diesel::sql_types::{BigInt, Integer, Nullable, Numeric, Text, Timestamptz};
use diesel::{ExpressionMethods, QueryDsl, QueryableByName};
use diesel_async::RunQueryDsl;
use rust_decimal::Decimal;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::receipt_mails;
use crate::store::PgStore;

type SqlUuid = diesel::sql_types::Uuid;

/// The longest failure text kept (the column's limit).
const MAX_ERROR_CHARS: usize = 500;

/// What a receipt says, read from the session, its paying attempt and its terminal: the
/// columns of [`MailRow`] after the mail's own.
const RECEIPT_COLUMNS: &str = "s.id AS session_id, s.terminal_number, s.email, s.culture, \
     COALESCE(t.display_name, s.terminal_number) AS merchant, s.description, s.amount, \
     s.currency, s.internal_reference, a.card_brand, a.card_last4, a.created_at AS paid_at";

/// The joins [`RECEIPT_COLUMNS`] read through, from `m` (the mails).
const RECEIPT_JOINS: &str = "JOIN payment_sessions s ON s.id = m.session_id \
     JOIN payment_attempts a ON a.id = m.attempt_id \
     LEFT JOIN terminals t ON t.number = s.terminal_number";

/// One mail with what its receipt says.
#[derive(QueryableByName)]
struct MailRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    claim: Option<Uuid>,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Integer)]
    attempts: i32,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    sent_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = SqlUuid)]
    session_id: Uuid,
    #[diesel(sql_type = Text)]
    terminal_number: String,
    #[diesel(sql_type = Nullable<Text>)]
    email: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    culture: Option<String>,
    #[diesel(sql_type = Text)]
    merchant: String,
    #[diesel(sql_type = Nullable<Text>)]
    description: Option<String>,
    #[diesel(sql_type = Numeric)]
    amount: Decimal,
    #[diesel(sql_type = Text)]
    currency: String,
    #[diesel(sql_type = Text)]
    internal_reference: String,
    #[diesel(sql_type = Text)]
    card_brand: String,
    #[diesel(sql_type = Text)]
    card_last4: String,
    #[diesel(sql_type = Timestamptz)]
    paid_at: OffsetDateTime,
}

/// The mail's own columns, in [`MailRow`]'s order.
const MAIL_COLUMNS: &str =
    "m.id, m.claim, m.state, m.attempts, m.created_at, m.sent_at, m.last_error";

impl MailRow {
    fn receipt(&self) -> anyhow::Result<Receipt> {
        Ok(Receipt {
            session_id: SessionId::from_uuid(self.session_id),
            terminal: TerminalNumber::parse(&self.terminal_number)
                .map_err(|e| anyhow::anyhow!("stored terminal number: {e}"))?,
            to: self.email.clone().unwrap_or_default(),
            culture: self
                .culture
                .as_deref()
                .and_then(|c| Culture::parse(c).ok())
                .unwrap_or(Culture::Es),
            merchant: self.merchant.clone(),
            description: self.description.clone(),
            amount: self.amount,
            currency: Currency::parse(&self.currency)
                .map_err(|e| anyhow::anyhow!("stored currency {:?}: {e}", self.currency))?,
            card_brand: CardBrand::parse(&self.card_brand),
            card_last4: self.card_last4.clone(),
            internal_reference: self.internal_reference.clone(),
            paid_at: self.paid_at,
        })
    }

    fn queued(self) -> anyhow::Result<QueuedReceipt> {
        Ok(QueuedReceipt {
            id: self.id,
            queued_at: self.created_at,
            state: MailState::parse(&self.state)
                .with_context(|| format!("stored mail state {:?}", self.state))?,
            attempts: u32::try_from(self.attempts).unwrap_or_default(),
            sent_at: self.sent_at,
            last_error: self.last_error.clone(),
            receipt: self.receipt()?,
        })
    }
}

/// `text` cut to the column's limit, on a character boundary.
fn clipped(text: &str) -> &str {
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

#[async_trait]
impl ReceiptOutbox for PgStore {
    async fn claim_due(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<DueReceipt>> {
        let mut conn = self.conn().await?;
        // One statement: the due mails no live lease holds, locked (skipping those another
        // claim holds), leased under a new claim, and read with their receipts.
        let rows: Vec<MailRow> = diesel::sql_query(format!(
            "WITH due AS ( \
                 SELECT id FROM receipt_mails \
                 WHERE state = 'pending' AND next_attempt_at <= $1 \
                   AND (claimed_until IS NULL OR claimed_until < $1) \
                 ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED \
             ), m AS ( \
                 UPDATE receipt_mails r SET claim = gen_random_uuid(), claimed_until = $2 \
                 FROM due WHERE r.id = due.id \
                 RETURNING r.id, r.claim, r.state, r.attempts, r.created_at, r.sent_at, \
                           r.last_error, r.session_id, r.attempt_id, r.next_attempt_at \
             ) \
             SELECT {MAIL_COLUMNS}, {RECEIPT_COLUMNS} FROM m {RECEIPT_JOINS} \
             ORDER BY m.next_attempt_at, m.id"
        ))
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(lease_until)
        .bind::<BigInt, _>(i64::from(limit))
        .load(&mut conn)
        .await
        .context("claiming due receipt mails")?;
        rows.into_iter()
            .map(|row| {
                Ok(DueReceipt {
                    id: row.id,
                    claim: row.claim.context("a claimed mail has its claim")?,
                    attempts_before: u32::try_from(row.attempts).unwrap_or_default(),
                    receipt: row.receipt()?,
                })
            })
            .collect()
    }

    async fn record_send(
        &self,
        due: &DueReceipt,
        at: OffsetDateTime,
        next: NextStep,
        error: Option<&str>,
    ) -> anyhow::Result<bool> {
        let (state, next_at, sent_at) = match next {
            NextStep::Delivered => (MailState::Sent, None, Some(at)),
            NextStep::RetryAt(when) => (MailState::Pending, Some(when), None),
            NextStep::GiveUp => (MailState::Failed, None, None),
        };
        let mut conn = self.conn().await?;
        let changed = diesel::update(
            receipt_mails::table
                .filter(receipt_mails::id.eq(due.id))
                .filter(receipt_mails::claim.eq(due.claim))
                .filter(receipt_mails::state.eq(MailState::Pending.as_str())),
        )
        .set((
            receipt_mails::attempts.eq(receipt_mails::attempts + 1),
            receipt_mails::state.eq(state.as_str()),
            receipt_mails::next_attempt_at.eq(next_at.unwrap_or(at)),
            receipt_mails::sent_at.eq(sent_at),
            receipt_mails::last_error.eq(error.map(clipped)),
            receipt_mails::claim.eq(None::<Uuid>),
            receipt_mails::claimed_until.eq(None::<OffsetDateTime>),
        ))
        .execute(&mut conn)
        .await
        .with_context(|| format!("recording a sending of receipt mail {}", due.id))?;
        Ok(changed == 1)
    }

    async fn list(
        &self,
        terminal: Option<&TerminalNumber>,
        limit: u32,
    ) -> anyhow::Result<Vec<QueuedReceipt>> {
        let mut conn = self.conn().await?;
        let rows: Vec<MailRow> = diesel::sql_query(format!(
            "SELECT {MAIL_COLUMNS}, {RECEIPT_COLUMNS} FROM receipt_mails m {RECEIPT_JOINS} \
             WHERE $1::text IS NULL OR m.terminal_number = $1 \
             ORDER BY m.created_at DESC, m.id DESC LIMIT $2"
        ))
        .bind::<Nullable<Text>, _>(terminal.map(|t| t.as_str()))
        .bind::<BigInt, _>(i64::from(limit))
        .load(&mut conn)
        .await
        .context("listing receipt mails")?;
        rows.into_iter().map(MailRow::queued).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use checkout_domain::session::{AttemptState, PaymentAttempt, SessionState};
    use checkout_domain::testing::builders::{at, attempt};
    use diesel_async::AsyncPgConnection;

    use super::*;
    use crate::attempt_writes::{Begin, BeginAttempts, Record, RecordAttempts};
    use crate::session_insert::tests::{database, insert};

    /// Begins `a` and records its answer `state`, moving its session from Processing to `to`.
    async fn pay(
        conn: &AsyncPgConnection,
        a: &PaymentAttempt,
        state: AttemptState,
        to: SessionState,
    ) {
        let (pending, processing) = (
            SessionState::Pending.code(),
            SessionState::Processing.code(),
        );
        let begin = Begin {
            attempt: a.clone(),
            from: pending,
            to: processing,
        };
        BeginAttempts::of(&[&begin]).run(conn).await.unwrap();
        let mut answered = a.clone();
        answered.state = state;
        answered.updated_at = at(9);
        let record = Record {
            attempt: answered,
            expected: vec!["sent"],
            session_move: Some((processing, to.code())),
        };
        RecordAttempts::of(&[&record]).run(conn).await.unwrap();
    }

    #[tokio::test]
    async fn a_payments_success_queues_one_receipt_that_one_worker_claims_and_sends() {
        let (db, conn) = database().await;
        let store = db.store();
        let sessions = insert(&conn, 3).await;
        // Paid, with the payer's address; declined; paid without an address.
        diesel::sql_query("UPDATE payment_sessions SET email = NULL WHERE id = $1")
            .bind::<SqlUuid, _>(sessions[2].id().as_uuid())
            .execute(&mut &conn)
            .await
            .unwrap();
        let attempts: Vec<PaymentAttempt> = sessions.iter().map(|s| attempt(s, at(5))).collect();
        pay(
            &conn,
            &attempts[0],
            AttemptState::Succeeded,
            SessionState::Successful,
        )
        .await;
        pay(
            &conn,
            &attempts[1],
            AttemptState::Declined,
            SessionState::Failed,
        )
        .await;
        pay(
            &conn,
            &attempts[2],
            AttemptState::Succeeded,
            SessionState::Successful,
        )
        .await;
        // A replay of the first success queues nothing more (it changes nothing).
        pay(
            &conn,
            &attempts[0],
            AttemptState::Succeeded,
            SessionState::Successful,
        )
        .await;

        let queued = store.list(None, 10).await.unwrap();
        assert_eq!(
            queued.len(),
            1,
            "one receipt, of the paid session with an address"
        );
        let receipt = &queued[0].receipt;
        assert_eq!(receipt.session_id, sessions[0].id());
        assert_eq!(receipt.to, sessions[0].email().as_ref().unwrap().as_str());
        assert_eq!(receipt.card_last4, attempts[0].card_last4);
        assert_eq!(receipt.card_brand, attempts[0].card_brand);
        assert_eq!(receipt.merchant, "Merchant");
        assert_eq!(receipt.amount, sessions[0].amount().value());
        assert_eq!(queued[0].state, MailState::Pending);

        // Claimed once while the lease lasts; a second claim finds nothing.
        let due = store.claim_due(at(10), at(40), 10).await.unwrap();
        assert_eq!(due.len(), 1);
        assert!(store
            .claim_due(at(11), at(40), 10)
            .await
            .unwrap()
            .is_empty());
        // A retry leaves it pending, counted, and due again at its time.
        let retry = NextStep::RetryAt(at(50));
        assert!(store
            .record_send(&due[0], at(12), retry, Some("451 try later"))
            .await
            .unwrap());
        // A result under the lost claim changes nothing.
        assert!(!store
            .record_send(&due[0], at(13), NextStep::Delivered, None)
            .await
            .unwrap());
        assert!(store
            .claim_due(at(45), at(60), 10)
            .await
            .unwrap()
            .is_empty());
        let again = store.claim_due(at(51), at(80), 10).await.unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].attempts_before, 1);
        assert!(store
            .record_send(&again[0], at(52), NextStep::Delivered, None)
            .await
            .unwrap());
        let listed = store.list(Some(&receipt.terminal), 10).await.unwrap();
        assert_eq!(listed[0].state, MailState::Sent);
        assert_eq!(listed[0].attempts, 2);
        assert_eq!(listed[0].sent_at, Some(at(52)));
        assert!(store
            .claim_due(at(99), at(120), 10)
            .await
            .unwrap()
            .is_empty());
        let other = TerminalNumber::parse("T-OTHER").unwrap();
        assert!(store.list(Some(&other), 10).await.unwrap().is_empty());
    }
}
