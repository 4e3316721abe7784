//! Value types that can only be built valid.

mod callback;
mod card_attempts;
mod contact;
mod currency;
mod idempotency;
mod ids;
mod metadata;
mod money;
mod text;

pub use callback::{CallbackHosts, CallbackRule, CallbackUrl, InvalidHost, InvalidUrl};
pub use card_attempts::{InvalidMaxCardAttempts, MaxCardAttempts};
pub use contact::{Culture, Email, InvalidEmail, UnknownCulture};
pub use currency::{Currency, UnknownCurrency};
pub use idempotency::{IdempotencyKey, RequestFingerprint};
pub use ids::{ActionId, AttemptId, InternalReference, InvalidId, RefundId, SessionId};
pub use metadata::{
    Metadata, MetadataError, MAX_METADATA_KEYS, MAX_METADATA_KEY_CHARS, MAX_METADATA_VALUE_CHARS,
};
pub use money::{
    Amount, AmountError, LineAmount, Money, MoneyBound, Moved, MovedAmount, NonNegative, Positive,
};
pub use text::{
    is_hidden_format_char, without_hidden_format, DisplayText, ItemCode, MerchantReference,
    TerminalNumber, TextError,
};
