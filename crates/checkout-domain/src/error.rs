//! The service error codes (SVC_001..SVC_011), validation errors, and the error every use case returns.

use std::collections::BTreeMap;
use std::fmt;

use crate::values::SessionId;

/// A service error code of the spec's section 7.2.
///
/// Every code is defined once, in [`SvcCode::spec`]; nothing else writes a title or a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SvcCode {
    /// SVC_001: the payment session already exists.
    Svc001,
    /// SVC_002: the payment session does not exist (unknown, invalid or expired).
    Svc002,
    /// SVC_003: communication error with the card processor.
    Svc003,
    /// SVC_004: controlled error from the card processor.
    Svc004,
    /// SVC_005: the payment terminal is not registered.
    Svc005,
    /// SVC_006: the transaction was declined.
    Svc006,
    /// SVC_007: the payment was not found.
    Svc007,
    /// SVC_008: the payment cannot be reversed (the spec's reversal flows, outside its public v1
    /// API; the merchant's capture, void, cancel and refund routes answer it).
    Svc008,
    /// SVC_009: reversal processor error (a void or refund refused or not confirmed).
    Svc009,
    /// SVC_010: reversal successful (the 200 body of a void or refund).
    Svc010,
    /// SVC_011: settled transaction or amount mismatch (more than can be captured or refunded,
    /// or a void of a captured payment).
    Svc011,
}

/// One row of the spec's error table (section 7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SvcSpec {
    /// The code as written on the wire, e.g. `SVC_001`.
    pub code: &'static str,
    /// The HTTP status the code is answered with.
    pub http_status: u16,
    /// The short title.
    pub title: &'static str,
    /// The message.
    pub message: &'static str,
    /// What the caller is advised to do.
    pub recommended_action: &'static str,
}

const TABLE: [SvcSpec; 11] = [
    SvcSpec {
        code: "SVC_001",
        http_status: 422,
        title: "Payment session already exists",
        message: "The payment session already exists.",
        recommended_action: "use a new transactionReferenceNumber or query the existing session",
    },
    SvcSpec {
        code: "SVC_002",
        http_status: 422,
        title: "Payment session does not exist",
        message: "The payment session does not exist.",
        recommended_action: "verify checkoutSessionId; the link may be invalid or expired",
    },
    SvcSpec {
        code: "SVC_003",
        http_status: 422,
        title: "Card processor API communication error",
        message: "Communication error with card processor API.",
        recommended_action: "retry; contact support if persistent",
    },
    SvcSpec {
        code: "SVC_004",
        http_status: 422,
        title: "Card processor controlled error",
        message: "Controlled error from card processor.",
        recommended_action: "review the processor message and adjust the request",
    },
    SvcSpec {
        code: "SVC_005",
        http_status: 422,
        title: "Terminal not registered",
        message: "Payment terminal not registered in the system.",
        recommended_action: "verify terminal provisioning",
    },
    SvcSpec {
        code: "SVC_006",
        http_status: 422,
        title: "Transaction declined",
        message: "Transaction declined by processor.",
        recommended_action: "ask the payer to use another card or contact the issuer",
    },
    SvcSpec {
        code: "SVC_007",
        http_status: 404,
        title: "Payment not found",
        message: "Specified payment not found.",
        recommended_action: "confirm checkoutSessionId and environment",
    },
    SvcSpec {
        code: "SVC_008",
        http_status: 422,
        title: "Payment cannot be reversed",
        message: "Payment not in reversible state.",
        recommended_action: "reversal flows are outside the public checkout API v1",
    },
    SvcSpec {
        code: "SVC_009",
        http_status: 422,
        title: "Reversal processor error",
        message: "Error during reversal.",
        recommended_action: "outside the public checkout API v1",
    },
    SvcSpec {
        code: "SVC_010",
        http_status: 200,
        title: "Reversal successful",
        message: "Reversal completed.",
        recommended_action: "outside the public checkout API v1",
    },
    SvcSpec {
        code: "SVC_011",
        http_status: 422,
        title: "Settled or amount mismatch",
        message: "Cannot reverse settled transaction.",
        recommended_action: "outside the public checkout API v1",
    },
];

impl SvcCode {
    /// Every code, in order.
    pub const ALL: [SvcCode; 11] = [
        SvcCode::Svc001,
        SvcCode::Svc002,
        SvcCode::Svc003,
        SvcCode::Svc004,
        SvcCode::Svc005,
        SvcCode::Svc006,
        SvcCode::Svc007,
        SvcCode::Svc008,
        SvcCode::Svc009,
        SvcCode::Svc010,
        SvcCode::Svc011,
    ];

    /// The code's row of the spec's table.
    pub fn spec(self) -> &'static SvcSpec {
        &TABLE[self as usize]
    }

    /// The code as written on the wire, e.g. `SVC_006`.
    pub fn code(self) -> &'static str {
        self.spec().code
    }

    /// Parses a wire code such as `SVC_006`.
    pub fn parse(code: &str) -> Option<SvcCode> {
        SvcCode::ALL.into_iter().find(|c| c.code() == code)
    }
}

impl fmt::Display for SvcCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Field-level validation failures: PascalCase field name → messages (spec section 7.3).
///
/// Nested fields are named like `Items[0].CurrencyCode`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationErrors {
    fields: BTreeMap<String, Vec<String>>,
}

impl ValidationErrors {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one message for one field.
    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.fields
            .entry(field.into())
            .or_default()
            .push(message.into());
    }

    /// True when no field failed.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The failed fields and their messages, ordered by field name.
    pub fn fields(&self) -> &BTreeMap<String, Vec<String>> {
        &self.fields
    }

    /// The messages of one field, if it failed.
    pub fn messages(&self, field: &str) -> Option<&[String]> {
        self.fields.get(field).map(Vec::as_slice)
    }

    /// `Ok(value)` when nothing failed, else these errors.
    pub fn into_result<T>(self, value: T) -> Result<T, ValidationErrors> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

/// Why a caller was not authenticated (for logs; the answer is a plain 401 either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    /// The client_id is unknown, inactive, or the secret does not match.
    #[error("invalid client credentials")]
    InvalidCredentials,
    /// No `Authorization: Bearer` header.
    #[error("bearer token missing")]
    MissingToken,
    /// The token is malformed, wrongly signed, from another environment, or its claims fail.
    #[error("bearer token invalid")]
    InvalidToken,
    /// The token has expired.
    #[error("bearer token expired")]
    ExpiredToken,
    /// The token lacks the SvcTerminal role.
    #[error("bearer token lacks the SvcTerminal role")]
    MissingRole,
}

/// Why a create sent with an `Idempotency-Key` was refused without running (IETF httpapi
/// idempotency-key draft, "Error Scenarios").
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyConflict {
    /// The key was already used with a different request (HTTP 422).
    #[error("the idempotency key was already used with a different request")]
    KeyReused,
    /// The first request with the key is still running (HTTP 409).
    #[error("a request with this idempotency key is still running")]
    InProgress,
}

/// The error of every use case.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// The request failed field validation (HTTP 400).
    #[error("request validation failed")]
    Validation(ValidationErrors),
    /// Authentication failed (HTTP 401).
    #[error("authentication failed: {0}")]
    Unauthenticated(AuthFailure),
    /// A business rule answered with a service code.
    #[error("{code}: {detail}")]
    Service {
        /// The code.
        code: SvcCode,
        /// A detail safe to show to the caller.
        detail: String,
        /// The caller's session the error is about, when it names one: for SVC_001, the
        /// session holding the merchant reference (shown as `checkoutSessionId`).
        session: Option<SessionId>,
    },
    /// A create's `Idempotency-Key` is in use by another request (HTTP 422 or 409).
    #[error("idempotency key conflict: {0}")]
    Idempotency(IdempotencyConflict),
    /// The caller has no such resource (HTTP 404); the text says which, for the caller.
    #[error("not found: {0}")]
    NotFound(&'static str),
    /// A dependency (the database, an identity provider) cannot be reached right now (HTTP
    /// 503 with `Retry-After`): the request may be retried. Its adapter marked the cause
    /// [`Unreachable`] (or [`ProviderUnavailable`](crate::ports::ProviderUnavailable)).
    #[error("a dependency cannot be reached: {0:#}")]
    Unavailable(anyhow::Error),
    /// The caller already has as many of something as it may (HTTP 422); it must remove one
    /// first. The text says what, for the caller.
    #[error("limit reached: {0}")]
    LimitReached(String),
    /// The caller asked for something too often (HTTP 429 with `Retry-After`).
    #[error("too many requests: {detail}")]
    TooManyRequests {
        /// What was asked too often, for the caller.
        detail: String,
        /// Whole seconds until the request may be made again (at least 1).
        retry_after_secs: u64,
    },
    /// An unexpected fault (HTTP 500); logged whole at the boundary, never shown.
    #[error(transparent)]
    Unknown(anyhow::Error),
}

/// Marks an adapter's error whose cause is a dependency that cannot be reached right now (no
/// connection, a connection lost mid-request, a failover in progress): the use case's error
/// is then [`CheckoutError::Unavailable`], answered 503, not 500. Attach it anywhere in the
/// error's chain (as the error or as a context); its text never holds a secret.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct Unreachable(pub String);

impl From<anyhow::Error> for CheckoutError {
    /// [`CheckoutError::Unavailable`] when the error's chain holds an [`Unreachable`] or a
    /// [`ProviderUnavailable`](crate::ports::ProviderUnavailable) mark, else
    /// [`CheckoutError::Unknown`].
    fn from(e: anyhow::Error) -> Self {
        if is_unreachable(&e) {
            CheckoutError::Unavailable(e)
        } else {
            CheckoutError::Unknown(e)
        }
    }
}

/// True when `e` carries an [`Unreachable`] or a
/// [`ProviderUnavailable`](crate::ports::ProviderUnavailable) mark, as its error or a context.
pub fn is_unreachable(e: &anyhow::Error) -> bool {
    e.downcast_ref::<Unreachable>().is_some()
        || e.downcast_ref::<crate::ports::ProviderUnavailable>()
            .is_some()
        || e.chain().any(|cause| {
            cause.is::<Unreachable>() || cause.is::<crate::ports::ProviderUnavailable>()
        })
}

impl CheckoutError {
    /// A service error whose detail is the code's own message.
    pub fn svc(code: SvcCode) -> Self {
        CheckoutError::Service {
            code,
            detail: code.spec().message.to_owned(),
            session: None,
        }
    }

    /// SVC_001 naming `holder`, the caller's session that holds the merchant reference, so
    /// that the merchant can query it.
    pub fn duplicate_reference(holder: SessionId) -> Self {
        CheckoutError::Service {
            code: SvcCode::Svc001,
            detail: SvcCode::Svc001.spec().message.to_owned(),
            session: Some(holder),
        }
    }

    /// A service error with a specific detail.
    pub fn svc_with(code: SvcCode, detail: impl Into<String>) -> Self {
        CheckoutError::Service {
            code,
            detail: detail.into(),
            session: None,
        }
    }

    /// The service code, when the error carries one.
    pub fn svc_code(&self) -> Option<SvcCode> {
        match self {
            CheckoutError::Service { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl From<ValidationErrors> for CheckoutError {
    fn from(errors: ValidationErrors) -> Self {
        CheckoutError::Validation(errors)
    }
}

impl From<IdempotencyConflict> for CheckoutError {
    fn from(conflict: IdempotencyConflict) -> Self {
        CheckoutError::Idempotency(conflict)
    }
}

impl From<AuthFailure> for CheckoutError {
    fn from(failure: AuthFailure) -> Self {
        CheckoutError::Unauthenticated(failure)
    }
}
