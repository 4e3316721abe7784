//! In-memory stores: sessions with attempts, terminals, OAuth clients.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use rust_decimal::Decimal;
use time::OffsetDateTime;

use crate::auth::{OAuthClient, Role};
use crate::events::{EventCursor, EventSubject, EventType, PaymentEvent};
use crate::guard::{GuardCounts, GuardSubject, GuardWindows, TerminalCaps, TerminalGuardState};
use crate::ports::{
    ActionBegun, AttemptChange, AttemptLedger, CardGuard, ClientStore, DisputeLedger,
    DisputeRecorded, EventLog, InsertError, NoticeStore, Recorded, Reservation, ReversalLedger,
    SessionMove, SessionRepository, Sweeps, TerminalDirectory,
};
use crate::session::{
    AttemptState, CardAttempt, Dispute, HoldAction, LedgerState, PaymentAttempt, PaymentSession,
    Refund, SessionMoney, SessionRecord, SessionState,
};
use crate::terminal::Terminal;
use crate::values::{AttemptId, MerchantReference, RefundId, SessionId, TerminalNumber};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Default)]
struct Tables {
    sessions: HashMap<SessionId, SessionRecord>,
    attempts: Vec<PaymentAttempt>,
    refunds: Vec<Refund>,
    actions: Vec<HoldAction>,
    events: Vec<PaymentEvent>,
    notices: HashMap<String, OffsetDateTime>,
    disputes: Vec<Dispute>,
    guard_answers: Vec<(GuardSubject, bool, OffsetDateTime)>,
    guard_proofs: HashMap<String, OffsetDateTime>,
    guard_alerts: HashMap<TerminalNumber, SessionId>,
}

impl Tables {
    /// `session` as a read returns it: with its card attempts as they stand, oldest first.
    fn read(&self, session: &SessionRecord) -> PaymentSession {
        PaymentSession::restore(SessionRecord {
            attempts: self
                .attempts
                .iter()
                .filter(|a| a.session_id == session.id)
                .map(CardAttempt::from)
                .collect(),
            ..session.clone()
        })
    }

    /// Moves session `id` to `to` at `at`, and writes its event (as the PostgreSQL trigger
    /// does) when the new state has one.
    fn move_session(&mut self, id: SessionId, to: SessionState, at: OffsetDateTime) {
        let Some(session) = self.sessions.get_mut(&id) else {
            return;
        };
        let kind = EventType::of_change(session.state, to);
        session.state = to;
        session.updated_at = at;
        if let Some(kind) = kind {
            self.write_event(id, kind, at);
        }
    }

    /// Writes event `kind` of session `id` as it stands now.
    fn write_event(&mut self, id: SessionId, kind: EventType, at: OffsetDateTime) {
        self.write_event_about(id, kind, at, None);
    }

    /// Writes event `kind` of session `id` as it stands now, about a refund or dispute.
    fn write_event_about(
        &mut self,
        id: SessionId,
        kind: EventType,
        at: OffsetDateTime,
        about: Option<EventSubject>,
    ) {
        let Some(session) = self.sessions.get(&id) else {
            return;
        };
        let disputes = match session.state {
            SessionState::Successful => self.disputes_of(id),
            _ => Vec::new(),
        };
        let mut snapshot = self.read(session).without_lines();
        for dispute in disputes {
            snapshot.attach_dispute(dispute);
        }
        let sequence = self.events.len() as u64 + 1;
        self.events.push(PaymentEvent {
            id: uuid::Uuid::from_u128(u128::from(sequence) << 64 | 0xe7),
            kind,
            occurred_at: at,
            cursor: EventCursor {
                transaction: 0,
                sequence,
            },
            session: snapshot,
            about,
        });
    }

    /// The disputes of session `id`, oldest first.
    fn disputes_of(&self, id: SessionId) -> Vec<Dispute> {
        self.disputes
            .iter()
            .filter(|d| d.session_id == id)
            .cloned()
            .collect()
    }
}

/// Sessions and attempts in a mutex; one lock per call makes every method atomic.
#[derive(Default)]
pub struct InMemorySessions {
    tables: Mutex<Tables>,
    /// The terminals `insert_for_terminal` checks (empty unless linked with
    /// [`with_terminals`](Self::with_terminals): then every guarded insert is refused, as the
    /// database refuses one for a terminal it does not have).
    terminals: Arc<InMemoryTerminals>,
}

impl InMemorySessions {
    /// `session` with its terminal as the linked terminals hold it now (read after the
    /// session, as the port asks).
    async fn with_terminal(
        &self,
        session: Option<PaymentSession>,
    ) -> anyhow::Result<Option<(PaymentSession, Option<Terminal>)>> {
        let Some(session) = session else {
            return Ok(None);
        };
        let terminal = self.terminals.get_terminal(session.terminal()).await?;
        Ok(Some((session, terminal)))
    }

    /// Inserts `session` unless its reference is held, under one lock.
    fn insert_now(&self, session: &PaymentSession) -> Result<(), InsertError> {
        let mut t = lock(&self.tables);
        let taken = t.sessions.values().any(|s| {
            &s.terminal == session.terminal()
                && &s.reference == session.reference()
                && s.state.holds_reference()
        });
        if taken {
            return Err(InsertError::DuplicateReference);
        }
        t.sessions
            .insert(session.id(), session.clone().into_record());
        Ok(())
    }

    /// A store whose `insert_for_terminal` checks the terminals of `terminals`.
    pub fn with_terminals(terminals: Arc<InMemoryTerminals>) -> Self {
        InMemorySessions {
            tables: Mutex::default(),
            terminals,
        }
    }

    /// Every attempt recorded, oldest first.
    pub fn attempts(&self) -> Vec<PaymentAttempt> {
        lock(&self.tables).attempts.clone()
    }

    /// How many sessions are stored.
    pub fn len(&self) -> usize {
        lock(&self.tables).sessions.len()
    }

    /// True when no session is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait]
impl SessionRepository for InMemorySessions {
    async fn insert(&self, session: &PaymentSession) -> Result<(), InsertError> {
        self.insert_now(session)
    }

    async fn insert_for_terminal(
        &self,
        session: &PaymentSession,
        read: &Terminal,
    ) -> Result<(), InsertError> {
        // The terminals' lock is held through the insert, so no change slips in between.
        let terminals = lock(&self.terminals.terminals);
        let unchanged = terminals
            .get(session.terminal())
            .is_some_and(|t| t.active && t.callback_hosts == read.callback_hosts);
        if !unchanged {
            return Err(InsertError::TerminalChanged);
        }
        let outcome = self.insert_now(session);
        drop(terminals);
        outcome
    }

    async fn get(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        let t = lock(&self.tables);
        Ok(t.sessions.get(&id).map(|s| t.read(s)))
    }

    async fn find_holding_reference(
        &self,
        terminal: &TerminalNumber,
        reference: &MerchantReference,
    ) -> anyhow::Result<Option<PaymentSession>> {
        Ok(lock(&self.tables)
            .sessions
            .values()
            .find(|s| {
                &s.terminal == terminal && &s.reference == reference && s.state.holds_reference()
            })
            .cloned()
            .map(PaymentSession::restore))
    }

    /// Like the PostgreSQL adapter, leaves the items and charges out.
    async fn find_by_reference(
        &self,
        terminal: &TerminalNumber,
        reference: &MerchantReference,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentSession>> {
        let t = lock(&self.tables);
        let mut found: Vec<PaymentSession> = t
            .sessions
            .values()
            .filter(|s| &s.terminal == terminal && &s.reference == reference)
            .map(|s| t.read(s).without_lines())
            .collect();
        found.sort_by_key(|s| std::cmp::Reverse((s.created_at(), s.id())));
        found.truncate(limit as usize);
        Ok(found)
    }

    async fn find_by_internal_reference(
        &self,
        reference: &crate::values::InternalReference,
    ) -> anyhow::Result<Option<PaymentSession>> {
        let t = lock(&self.tables);
        Ok(t.sessions
            .values()
            .find(|s| &s.internal_reference == reference)
            .map(|s| t.read(s).without_lines()))
    }

    async fn transition(
        &self,
        id: SessionId,
        from: SessionState,
        to: SessionState,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut t = lock(&self.tables);
        match t.sessions.get(&id) {
            Some(s) if s.state == from => {
                t.move_session(id, to, at);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Like the PostgreSQL adapter, leaves the items and charges out, so that a use case that
    /// relied on them would fail its tests.
    async fn get_without_lines(&self, id: SessionId) -> anyhow::Result<Option<PaymentSession>> {
        let t = lock(&self.tables);
        Ok(t.sessions.get(&id).map(|s| t.read(s).without_lines()))
    }

    async fn get_for_page(
        &self,
        id: SessionId,
    ) -> anyhow::Result<Option<(PaymentSession, Option<Terminal>)>> {
        self.with_terminal(self.get(id).await?).await
    }

    async fn get_for_card_post(
        &self,
        id: SessionId,
    ) -> anyhow::Result<Option<(PaymentSession, Option<Terminal>)>> {
        self.with_terminal(self.get_without_lines(id).await?).await
    }
}

#[async_trait]
impl AttemptLedger for InMemorySessions {
    async fn begin_attempt(
        &self,
        attempt: &PaymentAttempt,
        from: SessionState,
        to: SessionState,
    ) -> anyhow::Result<bool> {
        let mut t = lock(&self.tables);
        match t.sessions.get_mut(&attempt.session_id) {
            Some(s) if s.state == from => {
                s.current_attempt = Some(attempt.id);
                t.move_session(attempt.session_id, to, attempt.updated_at);
                t.attempts.push(attempt.clone());
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn record_attempt(&self, change: &AttemptChange<'_>) -> anyhow::Result<Recorded> {
        let mut t = lock(&self.tables);
        let attempt = change.attempt;
        let Some(stored) = t.attempts.iter_mut().find(|a| a.id == attempt.id) else {
            return Ok(Recorded::Stale);
        };
        if !change.expected.contains(&stored.state) {
            return Ok(Recorded::Stale);
        }
        let declined =
            stored.state != AttemptState::Declined && attempt.state == AttemptState::Declined;
        *stored = attempt.clone();
        let recorded = match change.session_move {
            None => Recorded::Moved,
            Some((from, to)) => match t.sessions.get(&attempt.session_id) {
                Some(s) if s.state == from && s.current_attempt == Some(attempt.id) => {
                    t.move_session(attempt.session_id, to, attempt.updated_at);
                    Recorded::Moved
                }
                _ => Recorded::AttemptOnly,
            },
        };
        // As the PostgreSQL trigger on attempts does: every decline is announced, with the
        // session as the same change left it.
        if declined {
            t.write_event(
                attempt.session_id,
                EventType::PaymentAttemptFailed,
                attempt.updated_at,
            );
        }
        Ok(recorded)
    }

    async fn attempt(&self, id: AttemptId) -> anyhow::Result<Option<PaymentAttempt>> {
        Ok(lock(&self.tables)
            .attempts
            .iter()
            .find(|a| a.id == id)
            .cloned())
    }

    async fn latest_attempt(&self, session: SessionId) -> anyhow::Result<Option<PaymentAttempt>> {
        Ok(lock(&self.tables)
            .attempts
            .iter()
            .rev()
            .find(|a| a.session_id == session)
            .cloned())
    }

    async fn attempts(&self, session: SessionId) -> anyhow::Result<Vec<PaymentAttempt>> {
        Ok(lock(&self.tables)
            .attempts
            .iter()
            .filter(|a| a.session_id == session)
            .cloned()
            .collect())
    }
}

#[async_trait]
impl Sweeps for InMemorySessions {
    async fn expire_due(&self, now: OffsetDateTime) -> anyhow::Result<u64> {
        let mut t = lock(&self.tables);
        let due: Vec<SessionId> = t
            .sessions
            .values()
            .filter(|s| s.state == SessionState::Pending && s.expires_at <= now)
            .map(|s| s.id)
            .collect();
        let to = SessionState::Pending.apply(crate::session::SessionEvent::ExpiryPassed)?;
        for id in &due {
            t.move_session(*id, to, now);
        }
        Ok(due.len() as u64)
    }

    async fn claim_due_holds(
        &self,
        held_since: OffsetDateTime,
        now: OffsetDateTime,
        until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>> {
        let mut guard = lock(&self.tables);
        let t = &mut *guard;
        let mut held: Vec<(OffsetDateTime, SessionId, AttemptId)> = t
            .sessions
            .values()
            .filter(|s| s.state == SessionState::ApprovedTransaction && s.updated_at <= held_since)
            .filter_map(|s| Some((s.updated_at, s.id, s.current_attempt?)))
            .collect();
        held.sort();
        let mut claimed = Vec::new();
        for (_, session, attempt) in held {
            if claimed.len() >= limit as usize {
                break;
            }
            let due = t.attempts.iter_mut().find(|a| {
                a.id == attempt
                    && a.state == AttemptState::Authorized
                    && a.next_check_at.is_none_or(|at| at <= now)
            });
            if let Some(a) = due {
                a.next_check_at = Some(until);
                claimed.push(session);
            }
        }
        Ok(claimed)
    }

    async fn due_challenges(
        &self,
        now: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<SessionId>> {
        let t = lock(&self.tables);
        let mut due: Vec<_> = t
            .sessions
            .values()
            .filter(|s| s.state == SessionState::ChallengeRequired && s.expires_at <= now)
            .map(|s| (s.expires_at, s.id))
            .collect();
        due.sort();
        Ok(due
            .into_iter()
            .take(limit as usize)
            .map(|(_, id)| id)
            .collect())
    }

    async fn claim_due_attempts(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentAttempt>> {
        let mut t = lock(&self.tables);
        let mut due: Vec<&mut PaymentAttempt> = t
            .attempts
            .iter_mut()
            .filter(|a| {
                AttemptState::CHECKED.contains(&a.state)
                    && a.next_check_at.is_some_and(|at| at <= now)
            })
            .collect();
        due.sort_by_key(|a| a.next_check_at);
        Ok(due
            .into_iter()
            .take(limit as usize)
            .map(|a| {
                let claimed = a.clone();
                a.next_check_at = Some(lease_until);
                claimed
            })
            .collect())
    }

    async fn unresolved_attempts(&self) -> anyhow::Result<(u64, Option<OffsetDateTime>)> {
        let t = lock(&self.tables);
        let unresolved = t
            .attempts
            .iter()
            .filter(|a| AttemptState::UNRESOLVED.contains(&a.state));
        let (count, oldest) = unresolved.fold((0, None), |(n, oldest), a| {
            let oldest = match oldest {
                Some(o) if o <= a.created_at => Some(o),
                _ => Some(a.created_at),
            };
            (n + 1, oldest)
        });
        Ok((count, oldest))
    }
}

#[async_trait]
impl EventLog for InMemorySessions {
    async fn events_after(
        &self,
        terminal: &TerminalNumber,
        after: Option<EventCursor>,
        limit: u32,
    ) -> anyhow::Result<Vec<PaymentEvent>> {
        Ok(lock(&self.tables)
            .events
            .iter()
            .filter(|e| e.session.terminal() == terminal && after.is_none_or(|a| e.cursor > a))
            .take(limit as usize)
            .cloned()
            .collect())
    }

    async fn cursor_issued(
        &self,
        terminal: &TerminalNumber,
        cursor: EventCursor,
    ) -> anyhow::Result<bool> {
        Ok(lock(&self.tables)
            .events
            .iter()
            .any(|e| e.session.terminal() == terminal && e.cursor == cursor))
    }
}

/// Terminals in a map.
#[derive(Default)]
pub struct InMemoryTerminals {
    terminals: Mutex<HashMap<TerminalNumber, Terminal>>,
}

impl InMemoryTerminals {
    /// Adds or replaces a terminal.
    pub fn add(&self, terminal: Terminal) {
        lock(&self.terminals).insert(terminal.number.clone(), terminal);
    }

    /// Changes the terminal `number`, if provisioned.
    pub fn update(&self, number: &TerminalNumber, change: impl FnOnce(&mut Terminal)) {
        if let Some(terminal) = lock(&self.terminals).get_mut(number) {
            change(terminal);
        }
    }
}

#[async_trait]
impl TerminalDirectory for InMemoryTerminals {
    async fn get_terminal(&self, number: &TerminalNumber) -> anyhow::Result<Option<Terminal>> {
        Ok(lock(&self.terminals).get(number).cloned())
    }
}

/// OAuth clients in a map. Test secrets are kept as `plain:<secret>`, which only
/// [`FakeIdentity`](super::FakeIdentity) understands; the real store keeps Argon2id hashes.
#[derive(Default)]
pub struct InMemoryClients {
    clients: Mutex<HashMap<String, OAuthClient>>,
}

impl InMemoryClients {
    /// Adds or replaces a client.
    pub fn add_client(
        &self,
        client_id: &str,
        secret: &str,
        terminal: &str,
        roles: Vec<Role>,
        active: bool,
    ) {
        let terminal = TerminalNumber::parse(terminal).unwrap_or_else(|_| unreachable!());
        lock(&self.clients).insert(
            client_id.to_owned(),
            OAuthClient {
                client_id: client_id.to_owned(),
                secret_hash: format!("plain:{secret}"),
                terminal,
                roles,
                active,
            },
        );
    }
}

#[async_trait]
impl ClientStore for InMemoryClients {
    async fn get_client(&self, client_id: &str) -> anyhow::Result<Option<OAuthClient>> {
        Ok(lock(&self.clients).get(client_id).cloned())
    }
}

/// Claims the rows of `rows` due at `now` (unsettled, `next_check_at` at or before it), oldest
/// due first, at most `limit`, leasing each until `lease_until`.
fn claim_due<T: Clone>(
    rows: &mut [T],
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
    limit: u32,
    due: impl Fn(&mut T) -> Option<&mut Option<OffsetDateTime>>,
) -> Vec<T> {
    let mut order: Vec<(OffsetDateTime, usize)> = Vec::new();
    for (i, row) in rows.iter_mut().enumerate() {
        if let Some(Some(at)) = due(row).map(|d| *d) {
            if at <= now {
                order.push((at, i));
            }
        }
    }
    order.sort();
    order.truncate(limit as usize);
    order
        .into_iter()
        .map(|(_, i)| {
            if let Some(next) = due(&mut rows[i]) {
                *next = Some(lease_until);
            }
            rows[i].clone()
        })
        .collect()
}

#[async_trait]
impl ReversalLedger for InMemorySessions {
    async fn reserve_refund(&self, refund: &Refund) -> anyhow::Result<Reservation> {
        let mut t = lock(&self.tables);
        if let Some(key) = &refund.key {
            let same_key = t
                .refunds
                .iter()
                .find(|r| r.session_id == refund.session_id && r.key.as_ref() == Some(key));
            if let Some(stored) = same_key {
                return Ok(Reservation::Existing(stored.clone()));
            }
        }
        let Some(session) = t.sessions.get(&refund.session_id) else {
            anyhow::bail!("no session {}", refund.session_id);
        };
        if session.state != SessionState::Successful {
            return Ok(Reservation::NotCaptured(session.state));
        }
        let reserved: Decimal = t
            .refunds
            .iter()
            .filter(|r| r.session_id == refund.session_id && r.state.reserves())
            .map(|r| r.amount)
            .sum();
        let refundable = PaymentSession::restore(session.clone())
            .captured_amount()
            .value()
            - reserved;
        if refund.amount > refundable {
            return Ok(Reservation::Exceeds { refundable });
        }
        t.refunds.push(refund.clone());
        Ok(Reservation::Reserved)
    }

    async fn settle_refund(&self, refund: &Refund) -> anyhow::Result<bool> {
        let mut t = lock(&self.tables);
        let Some(stored) = t.refunds.iter_mut().find(|r| r.id == refund.id) else {
            return Ok(false);
        };
        if !stored.state.refund_can_become(refund.state) {
            return Ok(false);
        }
        let was = stored.state;
        *stored = refund.clone();
        // As the PostgreSQL statements and triggers do: the refunded amount follows the
        // processor's word, and each change is announced.
        let (change, kind, about) = match (was, refund.state) {
            (_, LedgerState::Succeeded) => (refund.amount, EventType::PaymentRefunded, None),
            (LedgerState::Succeeded, LedgerState::Failed) => (
                -refund.amount,
                EventType::PaymentRefundFailed,
                Some(EventSubject::Refund(refund.id)),
            ),
            (_, LedgerState::Failed) => (
                Decimal::ZERO,
                EventType::PaymentRefundFailed,
                Some(EventSubject::Refund(refund.id)),
            ),
            _ => return Ok(true),
        };
        if let Some(s) = t.sessions.get_mut(&refund.session_id) {
            if !change.is_zero() {
                s.money = SessionMoney::new(
                    s.money.captured().map(|c| c.value()),
                    s.money.refunded().value() + change,
                    s.amount.currency(),
                )?;
                s.updated_at = refund.updated_at;
            }
        }
        t.write_event_about(refund.session_id, kind, refund.updated_at, about);
        Ok(true)
    }

    async fn refunds(&self, session: SessionId) -> anyhow::Result<Vec<Refund>> {
        Ok(lock(&self.tables)
            .refunds
            .iter()
            .filter(|r| r.session_id == session)
            .cloned()
            .collect())
    }

    async fn claim_due_refunds(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<Refund>> {
        let mut t = lock(&self.tables);
        Ok(claim_due(&mut t.refunds, now, lease_until, limit, |r| {
            (!r.state.is_settled()).then_some(&mut r.next_check_at)
        }))
    }

    async fn begin_action(&self, action: &HoldAction) -> anyhow::Result<ActionBegun> {
        let mut t = lock(&self.tables);
        let of_session = |a: &&HoldAction| a.session_id == action.session_id;
        if let Some(key) = &action.key {
            let same_key = t
                .actions
                .iter()
                .filter(of_session)
                .find(|a| a.key.as_ref() == Some(key));
            if let Some(stored) = same_key {
                return Ok(ActionBegun::Existing(stored.clone()));
            }
        }
        let Some(session) = t.sessions.get(&action.session_id) else {
            anyhow::bail!("no session {}", action.session_id);
        };
        if let Some(holder) = t
            .actions
            .iter()
            .filter(of_session)
            .find(|a| a.state.reserves())
        {
            return Ok(ActionBegun::Held(holder.clone()));
        }
        if session.state != SessionState::ApprovedTransaction {
            return Ok(ActionBegun::NotHeld(session.state));
        }
        t.actions.push(action.clone());
        Ok(ActionBegun::Begun)
    }

    async fn settle_action(
        &self,
        action: &HoldAction,
        session_move: Option<SessionMove>,
    ) -> anyhow::Result<bool> {
        let mut t = lock(&self.tables);
        let Some(stored) = t.actions.iter_mut().find(|a| a.id == action.id) else {
            return Ok(false);
        };
        if !stored.state.can_become(action.state) {
            return Ok(false);
        }
        *stored = action.clone();
        if let Some(SessionMove { from, to }) = session_move {
            match t.sessions.get_mut(&action.session_id) {
                Some(s) if s.state == from => {
                    if action.captured.is_some() {
                        s.money = SessionMoney::new(
                            action.captured,
                            s.money.refunded().value(),
                            s.amount.currency(),
                        )?;
                    }
                }
                _ => return Ok(true),
            }
            t.move_session(action.session_id, to, action.updated_at);
        }
        Ok(true)
    }

    async fn actions(&self, session: SessionId) -> anyhow::Result<Vec<HoldAction>> {
        Ok(lock(&self.tables)
            .actions
            .iter()
            .filter(|a| a.session_id == session)
            .cloned()
            .collect())
    }

    async fn claim_due_actions(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> anyhow::Result<Vec<HoldAction>> {
        let mut t = lock(&self.tables);
        Ok(claim_due(&mut t.actions, now, lease_until, limit, |a| {
            (!a.state.is_settled()).then_some(&mut a.next_check_at)
        }))
    }
}

#[async_trait]
impl NoticeStore for InMemorySessions {
    async fn notice_seen(&self, id: &str) -> anyhow::Result<bool> {
        Ok(lock(&self.tables).notices.contains_key(id))
    }

    async fn record_notice(&self, id: &str, at: OffsetDateTime) -> anyhow::Result<()> {
        lock(&self.tables)
            .notices
            .entry(id.to_owned())
            .or_insert(at);
        Ok(())
    }

    async fn forget_notices_before(&self, before: OffsetDateTime) -> anyhow::Result<u64> {
        let notices = &mut lock(&self.tables).notices;
        let was = notices.len();
        notices.retain(|_, at| *at >= before);
        Ok(u64::try_from(was - notices.len()).unwrap_or(u64::MAX))
    }

    async fn attempt_by_reference(
        &self,
        reference: &str,
    ) -> anyhow::Result<Option<PaymentAttempt>> {
        Ok(lock(&self.tables)
            .attempts
            .iter()
            .find(|a| a.processor_reference.as_deref() == Some(reference))
            .cloned())
    }

    async fn find_refund(
        &self,
        id: Option<RefundId>,
        reference: &str,
    ) -> anyhow::Result<Option<Refund>> {
        let t = lock(&self.tables);
        let by_id = id.and_then(|id| t.refunds.iter().find(|r| r.id == id));
        Ok(by_id
            .or_else(|| {
                t.refunds
                    .iter()
                    .find(|r| r.processor_reference.as_deref() == Some(reference))
            })
            .cloned())
    }
}

#[async_trait]
impl DisputeLedger for InMemorySessions {
    async fn record_dispute(&self, dispute: &Dispute) -> anyhow::Result<DisputeRecorded> {
        let mut t = lock(&self.tables);
        let at = dispute.updated_at;
        let about = |d: &Dispute| {
            Some(EventSubject::Dispute {
                reference: d.reference.clone(),
                status: d.status,
            })
        };
        let stored = t
            .disputes
            .iter_mut()
            .find(|d| d.reference == dispute.reference);
        let recorded = match stored {
            None => {
                // Opened first, with the status the processor reported.
                t.disputes.push(dispute.clone());
                let opened = EventType::PaymentDisputeOpened;
                t.write_event_about(dispute.session_id, opened, at, about(dispute));
                DisputeRecorded::Opened
            }
            Some(stored) if stored.status.can_become(dispute.status) => {
                stored.status = dispute.status;
                stored.updated_at = at;
                DisputeRecorded::Moved
            }
            Some(_) => return Ok(DisputeRecorded::Unchanged),
        };
        if dispute.status.is_closed() {
            let closed = EventType::PaymentDisputeClosed;
            t.write_event_about(dispute.session_id, closed, at, about(dispute));
        }
        Ok(recorded)
    }

    async fn disputes(&self, session: SessionId) -> anyhow::Result<Vec<Dispute>> {
        Ok(lock(&self.tables).disputes_of(session))
    }
}

/// Count of `items`, as the guard's counts hold it.
fn count<T>(items: impl Iterator<Item = T>) -> u32 {
    u32::try_from(items.count()).unwrap_or(u32::MAX)
}

#[async_trait]
impl CardGuard for InMemorySessions {
    async fn record_outcome(
        &self,
        subject: &GuardSubject,
        declined: bool,
        at: OffsetDateTime,
    ) -> anyhow::Result<()> {
        lock(&self.tables)
            .guard_answers
            .push((subject.clone(), declined, at));
        Ok(())
    }

    async fn record_late_decline(
        &self,
        session: SessionId,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut t = lock(&self.tables);
        let latest = t
            .guard_answers
            .iter_mut()
            .filter(|(s, declined, _)| s.session == session && !*declined)
            .max_by_key(|(_, _, at)| *at);
        Ok(match latest {
            Some(answer) => {
                answer.1 = true;
                answer.2 = at;
                true
            }
            None => false,
        })
    }

    async fn alerted_terminals(&self) -> anyhow::Result<Vec<(TerminalNumber, SessionId)>> {
        let t = lock(&self.tables);
        let mut alerted: Vec<_> = t
            .guard_alerts
            .iter()
            .map(|(terminal, session)| (terminal.clone(), *session))
            .collect();
        alerted.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        Ok(alerted)
    }

    async fn forget_answers_before(&self, before: OffsetDateTime) -> anyhow::Result<u64> {
        let mut t = lock(&self.tables);
        let kept = t.guard_answers.len();
        t.guard_answers.retain(|(_, _, at)| *at >= before);
        Ok((kept - t.guard_answers.len()) as u64)
    }

    async fn counts(
        &self,
        subject: &GuardSubject,
        windows: &GuardWindows,
        _caps: &TerminalCaps,
        now: OffsetDateTime,
    ) -> anyhow::Result<GuardCounts> {
        // Exact counts: the caps only allow a store to stop early.
        let t = lock(&self.tables);
        let declines = || t.guard_answers.iter().filter(|(_, d, _)| *d);
        let within = |at: &OffsetDateTime, w: time::Duration| *at > now - w;
        let card_declines = || {
            declines().filter(|(s, _, at)| {
                subject.card.is_some() && s.card == subject.card && within(at, windows.card)
            })
        };
        let card_sessions: HashSet<SessionId> = card_declines().map(|(s, ..)| s.session).collect();
        let card_terminals: HashSet<&TerminalNumber> =
            card_declines().map(|(s, ..)| &s.terminal).collect();
        let terminal_answers = || {
            t.guard_answers
                .iter()
                .filter(|(s, _, at)| s.terminal == subject.terminal && within(at, windows.terminal))
        };
        Ok(GuardCounts {
            session_declines: count(declines().filter(|(s, ..)| s.session == subject.session)),
            address_declines: count(declines().filter(|(s, _, at)| {
                subject.address.is_some()
                    && s.address == subject.address
                    && within(at, windows.address)
            })),
            card_sessions: count(card_sessions.iter()),
            card_terminals: count(card_terminals.iter()),
            terminal_posts: count(terminal_answers()),
            terminal_declines: count(terminal_answers().filter(|(_, d, _)| *d)),
            terminal_alerted: t.guard_alerts.contains_key(&subject.terminal),
        })
    }

    async fn spend_proof(
        &self,
        id: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut t = lock(&self.tables);
        t.guard_proofs.retain(|_, until| *until > now);
        Ok(t.guard_proofs.insert(id.to_owned(), expires_at).is_none())
    }

    async fn set_alert(
        &self,
        terminal: &TerminalNumber,
        alerted: bool,
        session: SessionId,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut t = lock(&self.tables);
        let changed = if alerted {
            if t.guard_alerts.contains_key(terminal) {
                false
            } else {
                t.guard_alerts.insert(terminal.clone(), session);
                true
            }
        } else {
            t.guard_alerts.remove(terminal).is_some()
        };
        if changed {
            let kind = if alerted {
                EventType::TerminalCardTestingSuspected
            } else {
                EventType::TerminalCardTestingEnded
            };
            t.write_event(session, kind, at);
        }
        Ok(changed)
    }

    async fn terminal_state(
        &self,
        terminal: &TerminalNumber,
        windows: &GuardWindows,
        now: OffsetDateTime,
    ) -> anyhow::Result<TerminalGuardState> {
        let t = lock(&self.tables);
        let longest = windows.address.max(windows.card).max(windows.terminal);
        let of_terminal = || {
            t.guard_answers
                .iter()
                .filter(|(s, ..)| &s.terminal == terminal)
        };
        let recent = || of_terminal().filter(|(_, _, at)| *at > now - windows.terminal);
        Ok(TerminalGuardState {
            alerted: t.guard_alerts.contains_key(terminal),
            posts: count(recent()),
            declines: count(recent().filter(|(_, d, _)| *d)),
            declines_kept: count(of_terminal().filter(|(_, d, at)| *d && *at > now - longest)),
        })
    }

    async fn clear_terminal(&self, terminal: &TerminalNumber) -> anyhow::Result<u64> {
        let mut t = lock(&self.tables);
        let before = t.guard_answers.len();
        t.guard_answers.retain(|(s, ..)| &s.terminal != terminal);
        t.guard_alerts.remove(terminal);
        Ok((before - t.guard_answers.len()) as u64)
    }
}
