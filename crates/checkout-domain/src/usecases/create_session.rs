//! Use cases: start payment (integrated checkout) and generate payment link.

use time::{Duration, OffsetDateTime};

use super::Checkout;
use crate::auth::Claims;
use crate::error::{CheckoutError, SvcCode, ValidationErrors};
use crate::ports::InsertError;
use crate::session::{
    Callbacks, NewSession, PaymentSession, SessionEvent, SessionFlow, SessionKind, SessionMoney,
    SessionRecord, SessionRequest, SessionState,
};
use crate::terminal::Terminal;
use crate::values::{CallbackHosts, TerminalNumber};

/// How many times an insert is tried while the reference's holder keeps expiring or
/// vanishing under it.
const INSERT_ROUNDS: usize = 3;

/// A created payment link.
#[derive(Debug, Clone)]
pub struct PaymentLink {
    /// The session behind it.
    pub session: PaymentSession,
    /// `paymentLink`: the configured base, `/`, the session id.
    pub url: String,
}

impl Checkout {
    /// POST /pay/api/start-payment: validates the request and creates an integrated checkout
    /// session for the caller's terminal.
    pub async fn start_payment(
        &self,
        caller: &Claims,
        request: &SessionRequest,
    ) -> Result<PaymentSession, CheckoutError> {
        self.create_session(caller, request, SessionFlow::IntegratedCheckout)
            .await
    }

    /// POST /pay/api/generate-payment-link: validates the request and creates a payment link
    /// session that expires after the policy's link validity.
    pub async fn generate_payment_link(
        &self,
        caller: &Claims,
        request: &SessionRequest,
    ) -> Result<PaymentLink, CheckoutError> {
        let session = self
            .create_session(caller, request, SessionFlow::PaymentLink)
            .await?;
        let url = self.policy.payment_link(session.id());
        Ok(PaymentLink { session, url })
    }

    async fn create_session(
        &self,
        caller: &Claims,
        request: &SessionRequest,
        flow: SessionFlow,
    ) -> Result<PaymentSession, CheckoutError> {
        let new = request.validate(flow, self.policy.callback_rule)?;
        let number = own_terminal(caller, new.terminal.as_ref())?.clone();
        let callbacks = new.callbacks.clone();
        let seen = self
            .terminal_for_create(&number, callbacks.as_ref(), Read::Seen)
            .await?;
        let now = self.now();
        if let Some(at) = new.expires_at {
            self.check_expiry(flow, at, now)?;
        }
        let session = self.build_session(new, number, flow, now);

        // The insert checks that a terminal taken as seen is still so (active, the same
        // callback hosts): when it changed meanwhile, it is read afresh, that read decides,
        // and the insert that follows it is a plain one, as right after any fresh read (so
        // that a stored allowlist the check cannot match never blocks the terminal's creates).
        // A reference is held by in-flight and completed sessions only (spec 7.4.1). When the
        // holder is a session that expired unpaid, it is marked Expired, which frees the
        // reference, and the insert is tried again (spec 4.3). SVC_001 names the holder, so
        // that the merchant can query it. A holder that vanishes between the conflict and the
        // lookup (expired meanwhile) frees the reference too: the insert is tried again, a
        // bounded number of times.
        let mut seen = Some(seen);
        for _ in 0..INSERT_ROUNDS {
            let inserted = match &seen {
                Some(terminal) => {
                    self.ports
                        .sessions
                        .insert_for_terminal(&session, terminal)
                        .await
                }
                None => self.ports.sessions.insert(&session).await,
            };
            match inserted {
                Ok(()) => return Ok(session),
                Err(InsertError::Store(e)) => return Err(e.into()),
                Err(InsertError::TerminalChanged) => {
                    self.terminal_for_create(session.terminal(), callbacks.as_ref(), Read::Afresh)
                        .await?;
                    seen = None;
                }
                Err(InsertError::DuplicateReference) => {
                    let holder = self
                        .ports
                        .sessions
                        .find_holding_reference(session.terminal(), session.reference())
                        .await?;
                    match holder {
                        Some(h) if h.state() == SessionState::Pending && h.is_past_expiry(now) => {
                            let to = h.state().apply(SessionEvent::ExpiryPassed)?;
                            self.ports
                                .sessions
                                .transition(h.id(), h.state(), to, now)
                                .await?;
                        }
                        Some(h) => return Err(CheckoutError::duplicate_reference(h.id())),
                        None => {}
                    }
                }
            }
        }
        // Still taken after every round: another live session keeps winning the reference.
        // (Only if it also vanished at once does SVC_001 come without a session to name.)
        match self
            .ports
            .sessions
            .find_holding_reference(session.terminal(), session.reference())
            .await?
        {
            Some(h) => Err(CheckoutError::duplicate_reference(h.id())),
            None => Err(CheckoutError::svc(SvcCode::Svc001)),
        }
    }

    /// The terminal `number` for a create with `callbacks`: active (else SVC_005) and allowing
    /// the callbacks' hosts (else 400 naming each refused URL). With [`Read::Seen`], a
    /// terminal the directory saw active before ([`TerminalDirectory::recent_terminal`]) that
    /// allows them is taken as seen (the guarded insert checks that it still is); any refusal
    /// is decided on a fresh read.
    ///
    /// [`TerminalDirectory::recent_terminal`]: crate::ports::TerminalDirectory::recent_terminal
    async fn terminal_for_create(
        &self,
        number: &TerminalNumber,
        callbacks: Option<&Callbacks>,
        read: Read,
    ) -> Result<Terminal, CheckoutError> {
        if read == Read::Seen {
            if let Some(seen) = self.ports.terminals.recent_terminal(number).await? {
                if seen.active && allowed_callbacks(&seen, callbacks).is_ok() {
                    return Ok(seen);
                }
            }
        }
        let terminal = self.ports.terminals.get_terminal(number).await?;
        let Some(terminal) = terminal.filter(|t| t.active) else {
            return Err(CheckoutError::svc(SvcCode::Svc005));
        };
        allowed_callbacks(&terminal, callbacks)?;
        Ok(terminal)
    }

    /// Refuses (400 naming `ExpirationDateTime`) a requested expiry outside the policy's
    /// bounds for `flow`.
    fn check_expiry(
        &self,
        flow: SessionFlow,
        at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), CheckoutError> {
        let bounds = self.policy.expiry_bounds;
        let (min, max) = match flow {
            SessionFlow::PaymentLink => (bounds.link_min, bounds.link_max),
            SessionFlow::IntegratedCheckout => (bounds.checkout_min, bounds.checkout_max),
        };
        if at < now + min || at > now + max {
            let mut errors = ValidationErrors::new();
            errors.add(
                "ExpirationDateTime",
                format!(
                    "ExpirationDateTime must be between {} and {} from now.",
                    describe(min),
                    describe(max)
                ),
            );
            return Err(errors.into());
        }
        Ok(())
    }

    fn build_session(
        &self,
        new: NewSession,
        terminal: TerminalNumber,
        flow: SessionFlow,
        now: OffsetDateTime,
    ) -> PaymentSession {
        let (kind, validity) = match (flow, new.callbacks) {
            (SessionFlow::IntegratedCheckout, Some(callbacks)) => (
                SessionKind::IntegratedCheckout(Box::new(callbacks)),
                self.policy.checkout_validity,
            ),
            _ => (SessionKind::PaymentLink, self.policy.link_validity),
        };
        PaymentSession::restore(SessionRecord {
            id: self.ports.ids.session_id(),
            terminal,
            reference: new.reference,
            internal_reference: self.ports.ids.internal_reference(),
            kind,
            amount: new.amount,
            description: new.description,
            email: new.email,
            culture: new.culture,
            items: new.items,
            charges: new.charges,
            metadata: new.metadata,
            capture_method: new.capture_method,
            state: SessionState::Pending,
            current_attempt: None,
            created_at: now,
            updated_at: now,
            expires_at: new.expires_at.unwrap_or(now + validity),
            money: SessionMoney::nothing(new.amount.currency()),
            attempts: Vec::new(),
            disputes: Vec::new(),
        })
    }
}

/// Whether a create's terminal is read afresh, or may be taken as seen before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    Seen,
    Afresh,
}

/// The terminal the session is for: the request's `terminalNumber`, else the caller's
/// (spec 5.4). It must be the caller's own, else SVC_005.
fn own_terminal<'a>(
    caller: &'a Claims,
    requested: Option<&'a TerminalNumber>,
) -> Result<&'a TerminalNumber, CheckoutError> {
    match requested {
        Some(t) if *t != caller.terminal => Err(CheckoutError::svc_with(
            SvcCode::Svc005,
            "The terminalNumber is not the terminal of the authenticated client.",
        )),
        _ => Ok(&caller.terminal),
    }
}

/// Refuses (400 naming each URL) callbacks whose host `terminal`'s allowlist lacks; a
/// terminal without one allows every host the callback rule accepts.
fn allowed_callbacks(
    terminal: &Terminal,
    callbacks: Option<&Callbacks>,
) -> Result<(), CheckoutError> {
    match (&terminal.callback_hosts, callbacks) {
        (Some(hosts), Some(callbacks)) => check_callback_hosts(hosts, callbacks),
        _ => Ok(()),
    }
}

/// Refuses (400, naming each field) the callback URLs whose host is not in the terminal's
/// allowlist.
fn check_callback_hosts(hosts: &CallbackHosts, callbacks: &Callbacks) -> Result<(), CheckoutError> {
    let mut errors = ValidationErrors::new();
    let urls = [
        ("CallbackSuccessUrl", Some(&callbacks.success)),
        ("CallbackFailUrl", Some(&callbacks.fail)),
        ("CallbackBackUrl", callbacks.back.as_ref()),
    ];
    for (field, url) in urls {
        if url.is_some_and(|u| !hosts.allows(u)) {
            errors.add(
                field,
                "The host is not among the callback hosts allowed for this terminal.",
            );
        }
    }
    Ok(errors.into_result(())?)
}

/// A duration as "30 days", "24 hours" or "5 minutes".
fn describe(d: Duration) -> String {
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    if d.whole_days() > 1 && d == Duration::days(d.whole_days()) {
        plural(d.whole_days(), "day")
    } else if d.whole_hours() > 0 && d == Duration::hours(d.whole_hours()) {
        plural(d.whole_hours(), "hour")
    } else {
        plural(d.whole_minutes(), "minute")
    }
}
