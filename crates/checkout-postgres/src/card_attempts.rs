//! The card attempts of sessions, as the status record lists them: read in one statement for
//! any number of sessions, and only for sessions that have had a card (a session with no
//! current attempt has none, so the status of an unpaid session stays one row).

use crate::availability::StoreContext;
use checkout_domain::session::{CardAttempt, PaymentAttempt, PaymentSession};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::models::AttemptRow;
use crate::schema::payment_attempts;

/// Every attempt of the sessions `ids`, by session, oldest first.
pub(crate) async fn attempt_rows(
    conn: &AsyncPgConnection,
    ids: &[Uuid],
) -> QueryResult<Vec<AttemptRow>> {
    let mut c = conn;
    payment_attempts::table
        .filter(payment_attempts::session_id.eq_any(ids))
        .order((
            payment_attempts::session_id,
            payment_attempts::created_at,
            payment_attempts::seq,
        ))
        .select(AttemptRow::as_select())
        .load(&mut c)
        .await
}

/// Fills [`PaymentSession::attempts`] of every session in `sessions` that has had a card,
/// with one statement.
pub(crate) async fn fill<'a>(
    conn: &AsyncPgConnection,
    sessions: impl IntoIterator<Item = &'a mut PaymentSession>,
) -> anyhow::Result<()> {
    let paid: Vec<&mut PaymentSession> = sessions
        .into_iter()
        .filter(|s| s.current_attempt().is_some())
        .collect();
    if paid.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = paid.iter().map(|s| s.id().as_uuid()).collect();
    let rows = attempt_rows(conn, &ids)
        .await
        .context("reading the card attempts of sessions")?;
    attach(rows, paid)
}

/// Appends each of `rows` (in their order) to [`PaymentSession::attempts`] of every session
/// in `sessions` it belongs to.
pub(crate) fn attach<'a>(
    rows: Vec<AttemptRow>,
    sessions: impl IntoIterator<Item = &'a mut PaymentSession>,
) -> anyhow::Result<()> {
    let mut sessions: Vec<&mut PaymentSession> = sessions.into_iter().collect();
    for row in rows {
        let attempt = PaymentAttempt::try_from(row)?;
        let session_id = attempt.session_id;
        let attempt = CardAttempt::from(&attempt);
        // Several events may be about one session: each gets the list.
        for session in sessions.iter_mut().filter(|s| s.id() == session_id) {
            session.attach_attempt(attempt.clone());
        }
    }
    Ok(())
}
