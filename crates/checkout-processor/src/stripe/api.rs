//! The parts of Stripe's JSON answers the adapter reads.

use serde::Deserialize;

/// A created PaymentMethod.
#[derive(Deserialize)]
pub(crate) struct PaymentMethod {
    pub id: String,
}

/// A PaymentIntent's status.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum IntentStatus {
    Succeeded,
    RequiresCapture,
    RequiresAction,
    RequiresPaymentMethod,
    RequiresConfirmation,
    Processing,
    Canceled,
    #[serde(other)]
    Unknown,
}

/// A PaymentIntent. Its `client_secret` (read with the `testing` feature only) is a secret:
/// this type has no `Debug`.
#[derive(Deserialize)]
pub(crate) struct PaymentIntent {
    pub id: String,
    pub status: IntentStatus,
    /// Read only by localstripe's `_authenticate` (`testing::localstripe`).
    #[cfg(feature = "testing")]
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub next_action: Option<NextAction>,
    #[serde(default)]
    pub last_payment_error: Option<ApiError>,
    /// The amount captured, in minor units.
    #[serde(default)]
    pub amount_received: i64,
}

/// A Refund.
#[derive(Deserialize)]
pub(crate) struct Refund {
    pub id: String,
    /// `pending`, `requires_action`, `succeeded`, `failed` or `canceled`.
    pub status: String,
    #[serde(default)]
    pub failure_reason: Option<String>,
}

/// A Dispute.
#[derive(Deserialize)]
pub(crate) struct Dispute {
    pub id: String,
    /// The disputed amount, in minor units.
    pub amount: i64,
    /// Lower case.
    pub currency: String,
    /// The disputed PaymentIntent (an id unless expanded, which the adapter never asks).
    #[serde(default)]
    pub payment_intent: Option<String>,
    pub reason: String,
    /// `warning_needs_response`, `warning_under_review`, `warning_closed`,
    /// `needs_response`, `under_review`, `won`, `lost` or `prevented`.
    pub status: String,
}

impl PaymentIntent {
    /// Where the payer takes a challenge the processor hosts.
    pub fn challenge_url(&self) -> Option<String> {
        self.next_action
            .as_ref()?
            .redirect_to_url
            .as_ref()?
            .url
            .clone()
    }
}

/// What the payer must do next.
#[derive(Deserialize)]
pub(crate) struct NextAction {
    #[serde(default)]
    pub redirect_to_url: Option<RedirectToUrl>,
}

/// A processor-hosted page.
#[derive(Deserialize)]
pub(crate) struct RedirectToUrl {
    #[serde(default)]
    pub url: Option<String>,
}

/// The body of an error answer.
#[derive(Deserialize)]
pub(crate) struct ErrorBody {
    pub error: ApiError,
}

/// An error, or a PaymentIntent's last payment error.
#[derive(Deserialize, Default)]
pub(crate) struct ApiError {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub decline_code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub charge: Option<String>,
    #[serde(default)]
    pub payment_intent: Option<IntentRef>,
}

/// The intent an error is about.
#[derive(Deserialize)]
pub(crate) struct IntentRef {
    pub id: String,
}

impl ApiError {
    /// The decline reason: the decline code, else the error code.
    pub fn reason(&self) -> String {
        self.decline_code
            .clone()
            .or_else(|| self.code.clone())
            .unwrap_or_else(|| "card_declined".to_owned())
    }

    /// The processor's reference of a declined payment: the intent, else the charge.
    pub fn reference(&self) -> Option<String> {
        self.payment_intent
            .as_ref()
            .map(|pi| pi.id.clone())
            .or_else(|| self.charge.clone())
    }

    /// A description for an error message (redacted by the caller).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(kind) = &self.kind {
            parts.push(kind.clone());
        }
        if let Some(code) = &self.code {
            parts.push(code.clone());
        }
        if let Some(message) = &self.message {
            parts.push(message.clone());
        }
        if parts.is_empty() {
            "no error details".to_owned()
        } else {
            parts.join(": ")
        }
    }
}
