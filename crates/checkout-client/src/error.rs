//! What a call can fail with: the service's answer ([`ApiError`], a ProblemDetails body with
//! its SVC code), the network ([`NetworkError`]), a request refused before it was sent
//! ([`InvalidRequest`]) or a success answer this SDK cannot read ([`DecodeError`]).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use crate::money::AmountError;

/// The error of every call of [`Client`](crate::Client).
///
/// ```no_run
/// use checkout_client::{Client, Error, StartPaymentRequest, SvcCode};
///
/// # async fn run(client: Client, request: StartPaymentRequest) -> Result<(), Error> {
/// let session_id = match client.start_payment(&request).await {
///     Ok(created) => created.checkout_session_id,
///     // The reference is already held: the problem names the session holding it.
///     Err(error) if error.svc_code() == Some(SvcCode::Svc001) => error
///         .problem()
///         .and_then(|p| p.checkout_session_id.clone())
///         .unwrap_or_default(),
///     Err(Error::Network(e)) => {
///         // Retried already; the same call may be sent again later with the same
///         // idempotency key (`CallOptions`) without creating a second session.
///         return Err(Error::Network(e));
///     }
///     Err(other) => return Err(other),
/// };
/// # let _ = session_id;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The service answered with an error status (after any retries).
    Api(Box<ApiError>),
    /// The service could not be reached, or the connection broke before its answer was read
    /// (after any retries).
    Network(NetworkError),
    /// The request was refused here and never sent (an amount with too many decimal places,
    /// a malformed idempotency key, a bad base URL).
    InvalidRequest(InvalidRequest),
    /// The service answered with a success status, but not with the body this SDK expects.
    Decode(DecodeError),
}

impl Error {
    /// The ProblemDetails body, when the service answered with an error.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Api(e) => Some(&e.problem),
            _ => None,
        }
    }

    /// The service code (`SVC_001`...) of the answer, when it carries one.
    pub fn svc_code(&self) -> Option<SvcCode> {
        self.problem().and_then(Problem::svc_code)
    }

    /// The HTTP status of the answer, when the service answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api(e) => Some(e.status),
            Error::Decode(e) => Some(e.status),
            _ => None,
        }
    }

    /// The `X-idoperacion` the call was sent with (quote it to support), when it was sent.
    pub fn operation_id(&self) -> Option<&str> {
        match self {
            Error::Api(e) => Some(&e.operation_id),
            Error::Network(e) => Some(&e.operation_id),
            Error::Decode(e) => Some(&e.operation_id),
            Error::InvalidRequest(_) => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api(e) => e.fmt(f),
            Error::Network(e) => e.fmt(f),
            Error::InvalidRequest(e) => e.fmt(f),
            Error::Decode(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Network(e) => Some(e),
            _ => None,
        }
    }
}

impl From<AmountError> for Error {
    fn from(e: AmountError) -> Self {
        Error::InvalidRequest(InvalidRequest::new(e.to_string()))
    }
}

/// An error answer of the service.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// The body: the service's ProblemDetails (for an answer that is not one, a problem
    /// made from the status and the first bytes of the body).
    pub problem: Problem,
    /// How long the service asked to wait (`Retry-After`), when it did.
    pub retry_after: Option<Duration>,
    /// The `X-idoperacion` of the call.
    pub operation_id: String,
    /// How many times the request was sent.
    pub attempts: u32,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the service answered {}", self.status)?;
        if !self.problem.kind.is_empty() {
            write!(f, " {}", self.problem.kind)?;
        }
        if !self.problem.title.is_empty() {
            write!(f, " ({})", self.problem.title)?;
        }
        if !self.problem.detail.is_empty() {
            write!(f, ": {}", self.problem.detail)?;
        }
        write!(f, " [X-idoperacion {}]", self.operation_id)
    }
}

/// The service could not be reached, or the connection broke before its answer was read.
#[derive(Debug)]
pub struct NetworkError {
    pub(crate) source: reqwest::Error,
    pub(crate) operation_id: String,
    pub(crate) attempts: u32,
}

impl NetworkError {
    /// True when the request timed out.
    pub fn is_timeout(&self) -> bool {
        self.source.is_timeout()
    }

    /// True when no connection could be made (the request was certainly not received).
    pub fn is_connect(&self) -> bool {
        self.source.is_connect()
    }

    /// The `X-idoperacion` of the call.
    pub fn operation_id(&self) -> &str {
        &self.operation_id
    }

    /// How many times the request was sent.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
}

impl fmt::Display for NetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "network error after {} attempt(s): {}",
            self.attempts, self.source
        )?;
        // reqwest's message names the URL; its causes say what went wrong.
        let mut cause = std::error::Error::source(&self.source);
        while let Some(inner) = cause {
            write!(f, ": {inner}")?;
            cause = inner.source();
        }
        write!(f, " [X-idoperacion {}]", self.operation_id)
    }
}

impl std::error::Error for NetworkError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A request refused before it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidRequest {
    message: String,
}

impl InvalidRequest {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        InvalidRequest {
            message: message.into(),
        }
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for InvalidRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid request: {}", self.message)
    }
}

impl std::error::Error for InvalidRequest {}

/// A success answer whose body this SDK cannot read.
#[derive(Debug, Clone)]
pub struct DecodeError {
    pub(crate) status: u16,
    pub(crate) message: String,
    pub(crate) operation_id: String,
}

impl DecodeError {
    /// What could not be read.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unexpected {} answer: {} [X-idoperacion {}]",
            self.status, self.message, self.operation_id
        )
    }
}

impl std::error::Error for DecodeError {}

/// The service's error body (`application/problem+json`, RFC 9457).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Problem {
    /// The service code (`SVC_001`...) when one applies, else an RFC reference URL; see
    /// [`Problem::svc_code`].
    #[serde(rename = "type", default)]
    pub kind: String,
    /// Short title.
    #[serde(default)]
    pub title: String,
    /// The HTTP status.
    #[serde(default)]
    pub status: u16,
    /// Explanation.
    #[serde(default)]
    pub detail: String,
    /// The service's correlation id of the request (a GUID).
    #[serde(default)]
    pub instance: String,
    /// Validation answers (400): the PascalCase field name and its messages; empty otherwise.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub errors: BTreeMap<String, Vec<String>>,
    /// SVC_001: the caller's session that already holds the reference.
    #[serde(default)]
    pub checkout_session_id: Option<String>,
}

/// `type` of a validation answer (400).
pub const VALIDATION_TYPE: &str = "https://tools.ietf.org/html/rfc7231#section-6.5.1";
/// `type` of a 422 for an `Idempotency-Key` already used with another request.
pub const IDEMPOTENCY_KEY_REUSED_TYPE: &str = "https://tools.ietf.org/html/rfc4918#section-11.2";

impl Problem {
    /// The service code, when `type` is one (`SVC_010` is a success and never an error).
    pub fn svc_code(&self) -> Option<SvcCode> {
        SvcCode::parse(&self.kind)
    }

    /// True for a validation answer (400 with an `errors` dictionary).
    pub fn is_validation(&self) -> bool {
        self.kind == VALIDATION_TYPE
    }

    /// The problem of an answer whose body is not a ProblemDetails.
    pub(crate) fn from_status(status: u16, body: &[u8]) -> Problem {
        let text = String::from_utf8_lossy(body);
        Problem {
            kind: String::new(),
            title: String::new(),
            status,
            detail: text.chars().take(200).collect(),
            instance: String::new(),
            errors: BTreeMap::new(),
            checkout_session_id: None,
        }
    }
}

fn null_as_empty<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, Vec<String>>, D::Error> {
    Ok(Option::deserialize(deserializer)?.unwrap_or_default())
}

/// The service codes of the spec's error table (section 7.2), as `type` carries them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SvcCode {
    /// SVC_001 (422): the terminal already has a session with this reference
    /// ([`Problem::checkout_session_id`] names it).
    Svc001,
    /// SVC_002 (422): the payment session does not exist or has expired.
    Svc002,
    /// SVC_003 (422): no usable answer from the card processor; may be retried.
    Svc003,
    /// SVC_004 (422): the card processor refused the request; nothing moved.
    Svc004,
    /// SVC_005 (422): the terminal is not registered, inactive, or not the token's.
    Svc005,
    /// SVC_006 (422): declined.
    Svc006,
    /// SVC_007 (404): no such payment for this terminal.
    Svc007,
    /// SVC_008 (422): the payment's state does not allow the action.
    Svc008,
    /// SVC_009 (422): a void or refund failed or is not confirmed.
    Svc009,
    /// SVC_010 (200): a void or refund succeeded (the `type` of [`Reversal`](crate::Reversal)).
    Svc010,
    /// SVC_011 (422): more than can be captured or refunded, or a void of a captured payment.
    Svc011,
    /// A code of the form `SVC_nnn` this version of the SDK does not know.
    Unknown(String),
}

impl SvcCode {
    /// Every code this SDK knows, in order.
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

    /// The code a problem's `type` names: `None` when it is not `SVC_` and digits (an RFC
    /// reference URL).
    pub fn parse(kind: &str) -> Option<SvcCode> {
        let digits = kind.strip_prefix("SVC_")?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(
            SvcCode::ALL
                .into_iter()
                .find(|code| code.as_str() == kind)
                .unwrap_or_else(|| SvcCode::Unknown(kind.to_owned())),
        )
    }

    /// The code as written on the wire, e.g. `SVC_001`.
    pub fn as_str(&self) -> &str {
        match self {
            SvcCode::Svc001 => "SVC_001",
            SvcCode::Svc002 => "SVC_002",
            SvcCode::Svc003 => "SVC_003",
            SvcCode::Svc004 => "SVC_004",
            SvcCode::Svc005 => "SVC_005",
            SvcCode::Svc006 => "SVC_006",
            SvcCode::Svc007 => "SVC_007",
            SvcCode::Svc008 => "SVC_008",
            SvcCode::Svc009 => "SVC_009",
            SvcCode::Svc010 => "SVC_010",
            SvcCode::Svc011 => "SVC_011",
            SvcCode::Unknown(code) => code,
        }
    }

    /// The HTTP status the service answers the code with (`None` for an unknown code).
    pub fn http_status(&self) -> Option<u16> {
        match self {
            SvcCode::Svc007 => Some(404),
            SvcCode::Svc010 => Some(200),
            SvcCode::Unknown(_) => None,
            _ => Some(422),
        }
    }
}

impl fmt::Display for SvcCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_from_type() {
        for code in SvcCode::ALL {
            assert_eq!(SvcCode::parse(code.as_str()), Some(code.clone()));
        }
        assert_eq!(
            SvcCode::parse("SVC_012"),
            Some(SvcCode::Unknown("SVC_012".into()))
        );
        assert_eq!(SvcCode::parse(VALIDATION_TYPE), None);
        assert_eq!(SvcCode::parse("SVC_"), None);
        assert_eq!(SvcCode::parse("SVC_01x"), None);
        assert_eq!(SvcCode::Svc007.http_status(), Some(404));
        assert_eq!(SvcCode::Svc001.http_status(), Some(422));
    }

    #[test]
    fn problems_read_as_the_service_writes_them() {
        let validation: Problem = serde_json::from_str(
            r#"{"type":"https://tools.ietf.org/html/rfc7231#section-6.5.1","title":"Validation failed",
               "status":400,"detail":"One or more fields are invalid.","instance":"6c1d",
               "errors":{"TotalTransactionAmount":["must be greater than 0"]}}"#,
        )
        .unwrap();
        assert!(validation.is_validation());
        assert_eq!(validation.svc_code(), None);
        assert_eq!(
            validation.errors["TotalTransactionAmount"],
            vec!["must be greater than 0".to_owned()]
        );
        let duplicate: Problem = serde_json::from_str(
            r#"{"type":"SVC_001","title":"Payment session already exists","status":422,
               "detail":"The payment session already exists.","instance":"1f2e",
               "checkoutSessionId":"9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60","errors":null}"#,
        )
        .unwrap();
        assert_eq!(duplicate.svc_code(), Some(SvcCode::Svc001));
        assert!(duplicate.errors.is_empty());
        assert_eq!(
            duplicate.checkout_session_id.as_deref(),
            Some("9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60")
        );
        // SVC_002 is answered by the payer's pages, never by the JSON API: read it anyway.
        let gone: Problem = serde_json::from_str(r#"{"type":"SVC_002","status":422}"#).unwrap();
        assert_eq!(gone.svc_code(), Some(SvcCode::Svc002));
    }
}
