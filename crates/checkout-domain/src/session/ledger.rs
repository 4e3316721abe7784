//! The ledger of money moved after the charge: every capture, void and refund is a row
//! written before the processor is asked, whose id is the processor's idempotency key, and
//! which moves through [`LedgerState`] only by [`LedgerState::can_become`].

/// Where one capture, void or refund stands at the processor, as far as the service knows.
///
/// ```text
/// Sent ──▶ Succeeded | Failed | Unknown
/// Unknown ──▶ Succeeded | Failed | Unknown (checked again later)
/// ```
/// Succeeded and Failed are final, but for a refund the processor fails after confirming
/// it ([`LedgerState::refund_can_become`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LedgerState {
    /// Recorded (a refund's amount reserved) before the processor was asked.
    Sent,
    /// The processor confirmed it: a refund counts in the session's refunded amount, a
    /// capture or void has moved the session.
    Succeeded,
    /// The processor refused or failed it: nothing moved, nothing reserved.
    Failed,
    /// The processor's answer was lost or is not final: it may have moved money. A refund's
    /// amount stays reserved and is not reported as refunded until the processor says so;
    /// the reconciliation sweep asks again with the same key.
    Unknown,
}

impl LedgerState {
    /// Every state.
    pub const ALL: [LedgerState; 4] = [
        LedgerState::Sent,
        LedgerState::Succeeded,
        LedgerState::Failed,
        LedgerState::Unknown,
    ];

    /// The states a processor answer may settle.
    pub const UNSETTLED: [LedgerState; 2] = [LedgerState::Sent, LedgerState::Unknown];

    /// The stored name (`sent`, `succeeded`, `failed`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            LedgerState::Sent => "sent",
            LedgerState::Succeeded => "succeeded",
            LedgerState::Failed => "failed",
            LedgerState::Unknown => "unknown",
        }
    }

    /// The name the merchant reads (`Pending`, `Succeeded`, `Failed`, `Unknown`).
    pub fn name(self) -> &'static str {
        match self {
            LedgerState::Sent => "Pending",
            LedgerState::Succeeded => "Succeeded",
            LedgerState::Failed => "Failed",
            LedgerState::Unknown => "Unknown",
        }
    }

    /// Parses a name written by [`LedgerState::as_str`].
    pub fn parse(s: &str) -> Option<LedgerState> {
        LedgerState::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// True when a refund's amount counts against what can still be refunded, and a capture
    /// or void keeps another one out: every state but Failed (a lost answer may have moved
    /// money).
    pub fn reserves(self) -> bool {
        self != LedgerState::Failed
    }

    /// True once the processor's word is final (Succeeded or Failed).
    pub fn is_settled(self) -> bool {
        matches!(self, LedgerState::Succeeded | LedgerState::Failed)
    }

    /// The one rule of the ledger's state machine: an unsettled row may become any state but
    /// Sent (Unknown again when it is checked and still not final); a settled row never
    /// changes.
    pub fn can_become(self, next: LedgerState) -> bool {
        !self.is_settled() && next != LedgerState::Sent
    }

    /// The refund's rule: the ledger's ([`can_become`](Self::can_become)), and one move more,
    /// Succeeded → Failed, which only the processor makes: a refund it confirmed and failed
    /// later (the payer's bank returned it), so the money is the merchant's again.
    pub fn refund_can_become(self, next: LedgerState) -> bool {
        self.can_become(next) || (self == LedgerState::Succeeded && next == LedgerState::Failed)
    }
}
