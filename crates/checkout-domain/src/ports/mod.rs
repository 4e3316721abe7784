//! Ports: what the domain needs from the outside world, as small traits. Adapters implement
//! them; every doc comment says what every implementation MUST do.

mod attempts;
mod card_guard;
mod events;
mod idempotency;
mod identity;
mod notices;
mod processor;
mod receipts;
mod reversals;
mod sessions;
mod sweeps;
mod system;
mod terminals;
mod webhooks;

/// The mark of an adapter error that means "cannot be reached right now" (answered 503).
pub use crate::error::Unreachable;
pub use attempts::{AttemptChange, AttemptLedger, Recorded};
pub use card_guard::{CardGuard, GuardKeys};
pub use events::EventLog;
pub use idempotency::{Claim, ClaimTimes, ClaimToken, HeldKey, IdempotencyStore, SavedResponse};
pub use identity::{ClientStore, IdentityError, IdentityProvider, ProviderUnavailable};
pub use notices::{
    DisputeLedger, DisputeRecorded, NoticeRejected, NoticeStore, NoticeSubject, ProcessorNotice,
    ProcessorNotices,
};
pub use processor::{
    AuthorizationRequest, CaptureRequest, CardProcessor, DisputeReport, ProcessorError,
    ProcessorOutcome, RefundOutcome, RefundRequest,
};
pub use receipts::{ReceiptMailer, ReceiptOutbox};
pub use reversals::{ActionBegun, Reservation, ReversalLedger, SessionMove};
pub use sessions::{InsertError, SessionRepository};
pub use sweeps::Sweeps;
pub use system::{Clock, IdGenerator};
pub use terminals::TerminalDirectory;
pub use webhooks::{EventEncoder, WebhookSecrets, WebhookStore, WebhookTransport};
