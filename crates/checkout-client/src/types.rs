//! The requests the SDK sends and the answers it reads, with the service's field names
//! (`docs/openapi.json`). Amounts are [`Decimal`]s read and written exactly; times are
//! [`OffsetDateTime`]s in UTC.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::error::Error;
use crate::money::{self, line_amount, Currency, Money};
use crate::wire_enum::wire_enum;

/// The payer's page language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Culture {
    /// Spanish (`es`).
    Es,
    /// English (`en`).
    En,
}

impl Culture {
    /// `es` or `en`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Culture::Es => "es",
            Culture::En => "en",
        }
    }
}

/// A line item of a payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    code: String,
    quantity: u32,
    description: String,
    amount: Decimal,
}

impl Item {
    /// `quantity` of `code` (`description`) at `amount` each, in the payment's currency.
    pub fn new(
        code: impl Into<String>,
        quantity: u32,
        description: impl Into<String>,
        amount: Decimal,
    ) -> Item {
        Item {
            code: code.into(),
            quantity,
            description: description.into(),
            amount,
        }
    }
}

/// An additional charge (shipping, a fee) of a payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdditionalCharge {
    name: String,
    amount: Decimal,
}

impl AdditionalCharge {
    /// The charge `name` of `amount`, in the payment's currency.
    pub fn new(name: impl Into<String>, amount: Decimal) -> AdditionalCharge {
        AdditionalCharge {
            name: name.into(),
            amount,
        }
    }
}

/// What both kinds of session carry besides the callbacks.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SessionFields {
    reference: String,
    total: Money,
    terminal_number: Option<String>,
    description: Option<String>,
    user_email: Option<String>,
    culture: Option<Culture>,
    items: Vec<Item>,
    charges: Vec<AdditionalCharge>,
    expiration: Option<OffsetDateTime>,
    metadata: BTreeMap<String, String>,
    capture_method: Option<CaptureMethod>,
}

impl SessionFields {
    fn new(reference: String, total: Money) -> SessionFields {
        SessionFields {
            reference,
            total,
            terminal_number: None,
            description: None,
            user_email: None,
            culture: None,
            items: Vec::new(),
            charges: Vec::new(),
            expiration: None,
            metadata: BTreeMap::new(),
            capture_method: None,
        }
    }

    /// The body, with every amount checked against the currency and written at its scale.
    fn body<'a>(&'a self, callbacks: Option<Callbacks<'a>>) -> Result<SessionBody<'a>, Error> {
        let currency = self.total.currency();
        let items = self
            .items
            .iter()
            .map(|item| {
                Ok(ItemBody {
                    item_code: &item.code,
                    quantity: item.quantity,
                    description: &item.description,
                    amount: line_amount(item.amount, currency)?,
                    currency_code: currency.code(),
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let additional_charges = self
            .charges
            .iter()
            .map(|charge| {
                Ok(ChargeBody {
                    charge_name: &charge.name,
                    charge_amount: line_amount(charge.amount, currency)?,
                    charge_currency_code: currency.code(),
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let expiration_date_time = match self.expiration {
            None => None,
            Some(at) => Some(utc_text(at)?),
        };
        Ok(SessionBody {
            callback_success_url: callbacks.as_ref().map(|c| c.success),
            callback_fail_url: callbacks.as_ref().map(|c| c.fail),
            callback_back_url: callbacks.as_ref().and_then(|c| c.back),
            total_transaction_amount: self.total.amount(),
            currency_code: currency.code(),
            terminal_number: self.terminal_number.as_deref(),
            transaction_reference_number: &self.reference,
            general_purchase_description: self.description.as_deref(),
            user_email: self.user_email.as_deref(),
            culture: self.culture.map(|c| c.as_str()),
            additional_charges: (!additional_charges.is_empty()).then_some(additional_charges),
            items: (!items.is_empty()).then_some(items),
            expiration_date_time,
            metadata: (!self.metadata.is_empty()).then_some(&self.metadata),
            capture_method: self.capture_method.as_ref().map(CaptureMethod::as_str),
        })
    }
}

/// `at` in UTC, to the second, with a `Z`: what the service reads.
fn utc_text(at: OffsetDateTime) -> Result<String, Error> {
    let at = at.to_offset(time::UtcOffset::UTC);
    let at = at.replace_nanosecond(0).unwrap_or(at);
    at.format(&Rfc3339)
        .map_err(|e| Error::InvalidRequest(crate::error::InvalidRequest::new(e.to_string())))
}

/// Declares the setters of the optional fields both session requests share.
macro_rules! session_setters {
    () => {
        /// The terminal (when absent, the token's client's terminal).
        pub fn terminal_number(mut self, terminal: impl Into<String>) -> Self {
            self.fields.terminal_number = Some(terminal.into());
            self
        }

        /// Adds a line item (its amount in the total's currency, zero or more).
        pub fn item(mut self, item: Item) -> Self {
            self.fields.items.push(item);
            self
        }

        /// Adds an additional charge (its amount in the total's currency, zero or more).
        pub fn additional_charge(mut self, charge: AdditionalCharge) -> Self {
            self.fields.charges.push(charge);
            self
        }

        /// When the session stops being payable (within the service's bounds; sent in UTC,
        /// to the second).
        pub fn expiration(mut self, at: OffsetDateTime) -> Self {
            self.fields.expiration = Some(at);
            self
        }

        /// Attaches `value` under `key` to the session (at most 50 keys of at most 40
        /// characters, values of at most 500: the service refuses more with a 400 naming
        /// the key); returned in the status record, events and webhooks.
        pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
            self.fields.metadata.insert(key.into(), value.into());
            self
        }

        /// How the authorisation is captured (the terminal's method when not set):
        /// [`CaptureMethod::Manual`] holds it until [`crate::Client::capture`].
        pub fn capture_method(mut self, method: CaptureMethod) -> Self {
            self.fields.capture_method = Some(method);
            self
        }
    };
}

/// The body of `POST /pay/api/start-payment`: an integrated checkout the payer is redirected
/// to.
///
/// ```
/// use checkout_client::{Currency, Item, Money, StartPaymentRequest};
/// use rust_decimal::Decimal;
///
/// let request = StartPaymentRequest::new(
///     "ORDER-1001",
///     Money::new(Decimal::new(2550, 2), Currency::USD)?,
///     "https://merchant.example/ok",
///     "https://merchant.example/fail",
/// )
/// .callback_back_url("https://merchant.example/cart")
/// .description("Order 1001")
/// .item(Item::new("SKU-1", 1, "Blue mug", Decimal::new(2550, 2)));
/// # let _ = request;
/// # Ok::<(), checkout_client::AmountError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartPaymentRequest {
    fields: SessionFields,
    success_url: String,
    fail_url: String,
    back_url: Option<String>,
}

impl StartPaymentRequest {
    /// A checkout of `total` under the merchant's `reference` (unique per terminal), sending
    /// the payer to `success_url` or `fail_url` when done.
    pub fn new(
        reference: impl Into<String>,
        total: Money,
        success_url: impl Into<String>,
        fail_url: impl Into<String>,
    ) -> StartPaymentRequest {
        StartPaymentRequest {
            fields: SessionFields::new(reference.into(), total),
            success_url: success_url.into(),
            fail_url: fail_url.into(),
            back_url: None,
        }
    }

    /// Where the payer goes on cancel or back.
    pub fn callback_back_url(mut self, url: impl Into<String>) -> Self {
        self.back_url = Some(url.into());
        self
    }

    /// The purchase description shown on the page.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.fields.description = Some(description.into());
        self
    }

    /// The payer's email.
    pub fn user_email(mut self, email: impl Into<String>) -> Self {
        self.fields.user_email = Some(email.into());
        self
    }

    /// The page's language.
    pub fn culture(mut self, culture: Culture) -> Self {
        self.fields.culture = Some(culture);
        self
    }

    session_setters!();

    pub(crate) fn body(&self) -> Result<SessionBody<'_>, Error> {
        self.fields.body(Some(Callbacks {
            success: &self.success_url,
            fail: &self.fail_url,
            back: self.back_url.as_deref(),
        }))
    }
}

/// The body of `POST /pay/api/generate-payment-link`: a link to send to the payer.
///
/// ```
/// use checkout_client::{Culture, Currency, Money, PaymentLinkRequest};
/// use rust_decimal::Decimal;
///
/// let request = PaymentLinkRequest::new(
///     "INVOICE-77",
///     Money::new(Decimal::from(15000), Currency::CRC)?,
///     "Invoice 77",
///     "payer@example.com",
///     Culture::Es,
/// );
/// # let _ = request;
/// # Ok::<(), checkout_client::AmountError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentLinkRequest {
    fields: SessionFields,
}

impl PaymentLinkRequest {
    /// A link for `total` under `reference`, described as `description`, for the payer at
    /// `user_email`, whose page speaks `culture`.
    pub fn new(
        reference: impl Into<String>,
        total: Money,
        description: impl Into<String>,
        user_email: impl Into<String>,
        culture: Culture,
    ) -> PaymentLinkRequest {
        let mut fields = SessionFields::new(reference.into(), total);
        fields.description = Some(description.into());
        fields.user_email = Some(user_email.into());
        fields.culture = Some(culture);
        PaymentLinkRequest { fields }
    }

    session_setters!();

    pub(crate) fn body(&self) -> Result<SessionBody<'_>, Error> {
        self.fields.body(None)
    }
}

struct Callbacks<'a> {
    success: &'a str,
    fail: &'a str,
    back: Option<&'a str>,
}

/// The JSON body of both create routes (a link has no callbacks).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_success_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_fail_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_back_url: Option<&'a str>,
    #[serde(with = "money::json")]
    pub total_transaction_amount: Decimal,
    pub currency_code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal_number: Option<&'a str>,
    pub transaction_reference_number: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub general_purchase_description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub culture: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_charges: Option<Vec<ChargeBody<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<ItemBody<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_date_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<&'a BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_method: Option<&'a str>,
}

/// An item as sent.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ItemBody<'a> {
    pub item_code: &'a str,
    pub quantity: u32,
    pub description: &'a str,
    #[serde(with = "money::json")]
    pub amount: Decimal,
    pub currency_code: &'a str,
}

/// An additional charge as sent.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChargeBody<'a> {
    pub charge_name: &'a str,
    #[serde(with = "money::json")]
    pub charge_amount: Decimal,
    pub charge_currency_code: &'a str,
}

/// The body of a capture (`amount` absent: the whole authorisation) or a refund.
#[derive(Serialize)]
pub(crate) struct AmountBody {
    #[serde(skip_serializing_if = "Option::is_none", with = "optional_amount")]
    pub amount: Option<Decimal>,
}

mod optional_amount {
    use rust_decimal::Decimal;
    use serde::Serializer;

    pub fn serialize<S: Serializer>(value: &Option<Decimal>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => crate::money::json::serialize(value, s),
            None => s.serialize_none(),
        }
    }
}

/// The body of `POST /pay/api/webhook-endpoints`.
#[derive(Serialize)]
pub(crate) struct WebhookEndpointBody<'a> {
    pub url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<&'a str>>,
}

/// The body of `POST /api/public/security/auth`. No `Debug`: it holds the secret.
#[derive(Serialize)]
pub(crate) struct TokenBody<'a> {
    pub client_id: &'a str,
    pub client_secret: &'a str,
}

/// The answer of `POST /api/public/security/auth`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TokenAnswer {
    pub token: String,
    pub expires_in: u64,
    /// The same token under its OAuth 2.0 name (RFC 6749 section 5.1).
    #[serde(rename = "access_token")]
    pub access_token: Option<String>,
    /// `Bearer`.
    #[serde(rename = "token_type")]
    pub token_type: Option<String>,
    /// The same lifetime under its OAuth 2.0 name.
    #[serde(rename = "expires_in")]
    pub oauth_expires_in: Option<u64>,
}

impl TokenAnswer {
    /// Whether the OAuth 2.0 names, when present, say what the spec's names say: a bearer
    /// token, the same one, with the same lifetime.
    pub fn is_consistent(&self) -> bool {
        self.access_token.as_ref().is_none_or(|t| *t == self.token)
            && self
                .token_type
                .as_ref()
                .is_none_or(|t| t.eq_ignore_ascii_case("bearer"))
            && self.oauth_expires_in.is_none_or(|e| e == self.expires_in)
    }
}

/// The answer to a start payment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StartPaymentResponse {
    /// The session; send the payer to `{base_url}/pay/checkout-payment/{checkoutSessionId}`
    /// ([`Client::checkout_page_url`](crate::Client::checkout_page_url)).
    pub checkout_session_id: String,
    /// The service's internal reference.
    pub internal_transaction_reference_number: String,
    /// When the session stops being payable.
    #[serde(with = "time::serde::rfc3339")]
    pub expiration_date_time: OffsetDateTime,
    /// Where to send the payer: the session's hosted payment page (absent from services
    /// older than the field).
    #[serde(default)]
    pub checkout_url: Option<String>,
}

/// The answer to a generate payment link.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PaymentLinkResponse {
    /// The session, for status queries.
    pub checkout_session_id: String,
    /// The URL to send to the payer.
    pub payment_link: String,
    /// The service's internal reference.
    pub internal_transaction_reference_number: String,
    /// When the link expires.
    #[serde(with = "time::serde::rfc3339")]
    pub expiration_date_time: OffsetDateTime,
}

wire_enum!(
    /// A payment session's state.
    PaymentState {
        /// No card yet, or the last attempt certainly charged nothing (code 0).
        Pending = "Pending",
        /// Authorised and captured (1).
        Successful = "Successful",
        /// Declined, and no other card allowed (2).
        Failed = "Failed",
        /// Authorised and held: capture or void it (3).
        ApprovedTransaction = "ApprovedTransaction",
        /// A card was submitted; the processor's answer is awaited (4).
        Processing = "Processing",
        /// Waiting for the payer's 3-D Secure challenge (5).
        ChallengeRequired = "ChallengeRequired",
        /// Expired unpaid (6).
        Expired = "Expired",
        /// Cancelled unpaid (7).
        Cancelled = "Cancelled",
        /// A held authorisation released by the merchant (8).
        Voided = "Voided",
    }
);

impl PaymentState {
    /// True when no payer or processor event moves the session any more (the merchant may
    /// still capture or void an `ApprovedTransaction`).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            PaymentState::Successful
                | PaymentState::Failed
                | PaymentState::ApprovedTransaction
                | PaymentState::Expired
                | PaymentState::Cancelled
                | PaymentState::Voided
        )
    }
}

wire_enum!(
    /// When a session's authorisation is captured.
    CaptureMethod {
        /// With the authorisation: the session ends `Successful`.
        Automatic = "automatic",
        /// Held (`ApprovedTransaction`) until the merchant captures or voids it.
        Manual = "manual",
    }
);

wire_enum!(
    /// How a session is paid.
    SessionType {
        /// Created by start payment.
        IntegratedCheckout = "IntegratedCheckout",
        /// Created by generate payment link.
        PaymentLink = "PaymentLink",
    }
);

wire_enum!(
    /// A card's brand.
    CardBrand {
        /// Visa.
        Visa = "visa",
        /// Mastercard.
        Mastercard = "mastercard",
        /// American Express.
        Amex = "amex",
        /// Discover.
        Discover = "discover",
        /// Any other brand.
        Unrecognised = "other",
    }
);

wire_enum!(
    /// How a card attempt ended, or that it has not yet.
    AttemptOutcome {
        /// Sent; no answer yet.
        Processing = "Processing",
        /// Waiting for the payer's challenge.
        ChallengeRequired = "ChallengeRequired",
        /// Authorised and captured.
        Successful = "Successful",
        /// Authorised and held.
        ApprovedTransaction = "ApprovedTransaction",
        /// Declined (`SVC_006`).
        Declined = "Declined",
        /// The processor refused the request; nothing charged.
        NothingCharged = "NothingCharged",
        /// The answer was lost; being reconciled.
        Unknown = "Unknown",
        /// Cancelled at the processor.
        Cancelled = "Cancelled",
    }
);

wire_enum!(
    /// A dispute's status at the processor.
    DisputeStatus {
        /// Open: the merchant should respond.
        NeedsResponse = "NeedsResponse",
        /// Open: under review.
        UnderReview = "UnderReview",
        /// Decided for the merchant.
        Won = "Won",
        /// Decided for the payer.
        Lost = "Lost",
        /// An inquiry closed without a chargeback.
        InquiryClosed = "InquiryClosed",
    }
);

wire_enum!(
    /// Where a refund stands.
    RefundState {
        /// Recorded; the processor has not answered yet.
        Pending = "Pending",
        /// Refunded.
        Succeeded = "Succeeded",
        /// Refused by the processor: nothing refunded.
        Failed = "Failed",
        /// The processor's answer was lost or is pending; its amount stays reserved.
        Unknown = "Unknown",
    }
);

wire_enum!(
    /// How a webhook endpoint's deliveries go out.
    CircuitState {
        /// Deliveries go out as they fall due.
        Closed = "closed",
        /// Its last attempt failed: one attempt at a time.
        Probing = "probing",
        /// It kept failing: nothing is attempted until the wait is over, then one probe.
        Open = "open",
        /// Failing for days: nothing is sent until the merchant enables it.
        Disabled = "disabled",
    }
);

wire_enum!(
    /// Where a webhook delivery stands.
    DeliveryState {
        /// Another attempt is due.
        Pending = "pending",
        /// Answered 2xx.
        Delivered = "delivered",
        /// Every attempt of the retry schedule failed.
        Failed = "failed",
        /// The endpoint was deleted or disabled.
        Cancelled = "cancelled",
    }
);

wire_enum!(
    /// What an event announces.
    EventType {
        /// The session became Successful.
        PaymentSucceeded = "payment.succeeded",
        /// The session became ApprovedTransaction (authorised, held).
        PaymentAuthorized = "payment.authorized",
        /// The session became Failed.
        PaymentFailed = "payment.failed",
        /// The session expired unpaid.
        PaymentExpired = "payment.expired",
        /// The session was cancelled unpaid.
        PaymentCancelled = "payment.cancelled",
        /// The merchant's capture went through.
        PaymentCaptured = "payment.captured",
        /// The merchant's void went through.
        PaymentVoided = "payment.voided",
        /// A refund was confirmed (one event per refund).
        PaymentRefunded = "payment.refunded",
        /// A card was declined (the session may still be payable).
        PaymentAttemptFailed = "payment.attempt_failed",
        /// A refund failed after it was confirmed ([`Event::refund_id`] names it).
        PaymentRefundFailed = "payment.refund_failed",
        /// A held authorisation expired at the processor; the session is Expired.
        PaymentAuthorizationExpired = "payment.authorization_expired",
        /// The payer's bank opened a dispute ([`Event::dispute`]).
        PaymentDisputeOpened = "payment.dispute_opened",
        /// A dispute was decided ([`Event::dispute`] has the outcome).
        PaymentDisputeClosed = "payment.dispute_closed",
        /// The card-testing guard saw the terminal's decline rate spike; its pages challenge
        /// every payer until it calms (the event's session is the post that saw it).
        TerminalCardTestingSuspected = "terminal.card_testing_suspected",
        /// The terminal's decline rate calmed.
        TerminalCardTestingEnded = "terminal.card_testing_ended",
    }
);

/// The payment status record (`GET /pay/api/payment/{checkoutSessionId}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PaymentStatus {
    /// The session.
    pub checkout_session_id: String,
    /// Its state.
    pub state: PaymentState,
    /// The state's number (Failed is 2).
    pub state_code: i16,
    /// Integrated checkout or payment link.
    pub session_type: SessionType,
    /// The merchant's reference.
    pub transaction_reference_number: String,
    /// The service's internal reference.
    pub internal_transaction_reference_number: String,
    /// The terminal.
    pub terminal_number: String,
    /// The total.
    #[serde(with = "money::json")]
    pub total_transaction_amount: Decimal,
    /// The currency's ISO 4217 code.
    pub currency_code: String,
    /// When the session was created.
    #[serde(with = "time::serde::rfc3339")]
    pub creation_date_time: OffsetDateTime,
    /// When its state last changed.
    #[serde(with = "time::serde::rfc3339")]
    pub last_update_date_time: OffsetDateTime,
    /// When it stops being payable.
    #[serde(with = "time::serde::rfc3339")]
    pub expiration_date_time: OffsetDateTime,
    /// The amount captured (0 until captured).
    #[serde(with = "money::json")]
    pub captured_amount: Decimal,
    /// The sum of the refunds the processor confirmed.
    #[serde(with = "money::json")]
    pub refunded_amount: Decimal,
    /// Every card submitted, oldest first.
    #[serde(default)]
    pub attempts: Vec<CardAttempt>,
    /// The disputes of the captured payment, oldest first.
    #[serde(default)]
    pub disputes: Vec<Dispute>,
    /// The merchant's metadata, as given at create (empty when none).
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// The capture method the create asked for (`None`: the terminal's).
    #[serde(default)]
    pub capture_method: Option<CaptureMethod>,
}

impl PaymentStatus {
    /// The currency, when it is one this SDK knows.
    pub fn currency(&self) -> Option<Currency> {
        Currency::from_code(&self.currency_code).ok()
    }
}

/// One card submitted for a session: its brand and last four digits, never more.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CardAttempt {
    /// When it was submitted.
    #[serde(with = "time::serde::rfc3339")]
    pub attempt_date_time: OffsetDateTime,
    /// The card's brand.
    pub card_brand: CardBrand,
    /// The card's last four digits.
    pub card_last_four: String,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// The service code it ended with (`SVC_006` for a decline), if any.
    #[serde(default)]
    pub code: Option<String>,
}

/// A dispute (chargeback) of a captured payment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Dispute {
    /// The processor's dispute reference.
    pub dispute_id: String,
    /// The disputed amount.
    #[serde(with = "money::json")]
    pub amount: Decimal,
    /// The bank's reason, as the processor names it.
    pub reason: String,
    /// Its status.
    pub status: DisputeStatus,
    /// When the service learnt of it.
    #[serde(with = "time::serde::rfc3339")]
    pub opened_date_time: OffsetDateTime,
    /// When its status last changed.
    #[serde(with = "time::serde::rfc3339")]
    pub last_update_date_time: OffsetDateTime,
}

/// One refund.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Refund {
    /// The refund's id.
    pub refund_id: String,
    /// How much.
    #[serde(with = "money::json")]
    pub amount: Decimal,
    /// The session's currency.
    pub currency_code: String,
    /// Where it stands.
    pub state: RefundState,
    /// `SVC_009` for a Failed or Unknown refund.
    #[serde(default)]
    pub svc_code: Option<String>,
    /// When it was made.
    #[serde(with = "time::serde::rfc3339")]
    pub creation_date_time: OffsetDateTime,
    /// When it last changed.
    #[serde(with = "time::serde::rfc3339")]
    pub last_update_date_time: OffsetDateTime,
}

/// A session's refunds (`GET /pay/api/payment/{id}/refunds`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RefundList {
    /// The session.
    pub checkout_session_id: String,
    /// Its currency.
    pub currency_code: String,
    /// The amount captured.
    #[serde(with = "money::json")]
    pub captured_amount: Decimal,
    /// The sum of the confirmed refunds.
    #[serde(with = "money::json")]
    pub refunded_amount: Decimal,
    /// Every refund asked for, oldest first.
    pub refunds: Vec<Refund>,
}

/// A void or refund done: the service's `SVC_010` answer, with the payment as it now stands.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Reversal {
    /// `SVC_010`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `Reversal successful`.
    pub title: String,
    /// 200.
    pub status: u16,
    /// `Reversal completed.`
    pub detail: String,
    /// The service's correlation id of the request.
    pub instance: String,
    /// The session.
    pub checkout_session_id: String,
    /// The refund made (refunds only).
    #[serde(default)]
    pub refund: Option<Refund>,
    /// The status record after the reversal.
    pub payment: PaymentStatus,
}

/// One event: what happened to a session, with its status record as of the event. The same
/// body arrives in the events feed and in webhook deliveries.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct Event {
    /// The event id (the `webhook-id` of its deliveries): deduplicate by it.
    pub id: String,
    /// What happened.
    #[serde(rename = "type")]
    pub kind: EventType,
    /// When.
    #[serde(with = "time::serde::rfc3339")]
    pub timestamp: OffsetDateTime,
    /// The status record as of the event.
    pub data: PaymentStatus,
    /// `payment.refund_failed`: the refund that failed.
    #[serde(rename = "refundId", default)]
    pub refund_id: Option<String>,
    /// `payment.dispute_opened` and `payment.dispute_closed`: the dispute.
    #[serde(default)]
    pub dispute: Option<EventDispute>,
}

impl Event {
    /// Reads an event from its JSON text (a feed entry or a webhook body).
    pub fn from_json(body: &[u8]) -> Result<Event, serde_json::Error> {
        serde_json::from_slice(body)
    }
}

/// The dispute an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EventDispute {
    /// The processor's dispute reference.
    pub dispute_id: String,
    /// Its status when the event was written.
    pub status: DisputeStatus,
}

/// A page of the events feed (`GET /pay/api/events`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EventPage {
    /// The events, in the order of the transactions that wrote them.
    pub events: Vec<Event>,
    /// Pass as `after` to read on (absent while there is nothing to read).
    #[serde(default)]
    pub cursor: Option<String>,
    /// True when more events were already available after this page.
    pub has_more: bool,
}

/// A webhook endpoint (without its secret).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WebhookEndpoint {
    /// The endpoint id.
    pub id: String,
    /// Where events are posted.
    pub url: String,
    /// The event types it receives; `["*"]`: every type.
    pub events: Vec<String>,
    /// When it was registered.
    #[serde(with = "time::serde::rfc3339")]
    pub created_date_time: OffsetDateTime,
    /// False once it was disabled after failing for days (nothing is sent to it until
    /// [`Client::enable_webhook_endpoint`](crate::Client::enable_webhook_endpoint)).
    pub enabled: bool,
    /// How its deliveries go out, given how it has been answering.
    pub circuit: CircuitState,
    /// Failed attempts in a row (0 after a delivered one).
    pub consecutive_failures: u32,
    /// Since when it has been failing, while it is.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub failing_since_date_time: Option<OffsetDateTime>,
    /// While the circuit is open: when the next attempt (a probe) may go.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub circuit_open_until_date_time: Option<OffsetDateTime>,
    /// When it was disabled, if it is.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub disabled_date_time: Option<OffsetDateTime>,
    /// Why it was disabled, if it is.
    #[serde(default)]
    pub disabled_reason: Option<String>,
}

/// A page of an endpoint's deliveries log, newest first, with the endpoint itself.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DeliveryPage {
    /// The endpoint: whether it is enabled, its circuit, and why it was disabled.
    pub endpoint: WebhookEndpoint,
    /// The deliveries, newest first, each with every attempt.
    pub deliveries: Vec<Delivery>,
    /// Pass it as `after` for the older deliveries; absent when the page is empty.
    #[serde(default)]
    pub cursor: Option<String>,
    /// True when older deliveries follow this page.
    pub has_more: bool,
}

/// A new webhook endpoint with its signing secret, shown this once.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreatedWebhookEndpoint {
    /// The endpoint id.
    pub id: String,
    /// Where events are posted.
    pub url: String,
    /// The event types it receives; `["*"]`: every type.
    pub events: Vec<String>,
    /// The signing secret (`whsec_...`) for [`WebhookVerifier`](crate::WebhookVerifier):
    /// keep it, it is not shown again.
    pub secret: String,
    /// When it was registered.
    #[serde(with = "time::serde::rfc3339")]
    pub created_date_time: OffsetDateTime,
}

impl std::fmt::Debug for CreatedWebhookEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedWebhookEndpoint")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("events", &self.events)
            .field("secret", &"[redacted]")
            .field("created_date_time", &self.created_date_time)
            .finish()
    }
}

/// A rotated signing secret, shown this once.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RotatedSecret {
    /// The endpoint id.
    pub id: String,
    /// The new signing secret.
    pub secret: String,
    /// Until when the previous secret still signs beside the new one.
    #[serde(with = "time::serde::rfc3339")]
    pub previous_secret_expires_date_time: OffsetDateTime,
}

impl std::fmt::Debug for RotatedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotatedSecret")
            .field("id", &self.id)
            .field("secret", &"[redacted]")
            .field(
                "previous_secret_expires_date_time",
                &self.previous_secret_expires_date_time,
            )
            .finish()
    }
}

/// One delivery of one event to an endpoint, with every attempt.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Delivery {
    /// The delivery id.
    pub id: String,
    /// The event delivered (the `webhook-id` of every attempt).
    pub event_id: String,
    /// The event's type.
    pub event_type: EventType,
    /// Where it stands.
    pub state: DeliveryState,
    /// When the event was queued for the endpoint.
    #[serde(with = "time::serde::rfc3339")]
    pub created_date_time: OffsetDateTime,
    /// When the next attempt is due (pending deliveries only).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub next_attempt_date_time: Option<OffsetDateTime>,
    /// True when asked for again by a redelivery.
    pub redelivery: bool,
    /// Every attempt, oldest first.
    pub attempts: Vec<DeliveryAttempt>,
}

/// One attempt of a delivery.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DeliveryAttempt {
    /// When it started.
    #[serde(with = "time::serde::rfc3339")]
    pub attempted_date_time: OffsetDateTime,
    /// How long it took, milliseconds.
    pub duration_ms: u32,
    /// The receiver's HTTP status; absent when there was no answer.
    #[serde(default)]
    pub status: Option<u16>,
    /// Why there was no answer.
    #[serde(default)]
    pub error: Option<String>,
    /// The first bytes of the receiver's answer.
    #[serde(default)]
    pub response_excerpt: Option<String>,
}

/// The deliveries a redelivery queued.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Redelivery {
    /// The event.
    pub event_id: String,
    /// The new deliveries, one per endpoint receiving the event's type.
    pub deliveries: Vec<String>,
}
