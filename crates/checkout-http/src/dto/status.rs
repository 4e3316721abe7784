//! GET /pay/api/payment/{checkoutSessionId} body (spec 2.5, 3).

use std::collections::BTreeMap;

use checkout_domain::session::{CardAttempt, Dispute, PaymentSession, SessionKind};
use checkout_domain::values::Currency;
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

use super::schemas::{
    CaptureMethodName, CardAttemptOutcome, CardBrandName, CurrencyCode, DisputeStatusName,
    MetadataSchema, PaymentState, PaymentStateCode, SessionType,
};
use super::{utc_timestamp, JsonDecimal};

/// The payment status record.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentStatusResponse {
    /// Session identifier.
    pub checkout_session_id: String,
    /// The state's name.
    #[schema(value_type = PaymentState)]
    pub state: String,
    /// The state's numeric code (Failed = 2).
    #[schema(value_type = PaymentStateCode)]
    pub state_code: i16,
    /// `IntegratedCheckout` or `PaymentLink`.
    #[schema(value_type = SessionType)]
    pub session_type: String,
    /// The merchant reference.
    pub transaction_reference_number: String,
    /// The service's internal reference.
    pub internal_transaction_reference_number: String,
    /// The terminal.
    pub terminal_number: String,
    /// Total amount.
    #[schema(value_type = f64, example = 25.50)]
    pub total_transaction_amount: JsonDecimal,
    /// Currency.
    #[schema(value_type = CurrencyCode)]
    pub currency_code: String,
    /// When the session was created (UTC).
    #[schema(format = DateTime, example = "2026-11-23T11:30:00Z")]
    pub creation_date_time: String,
    /// When its state last changed (UTC).
    #[schema(format = DateTime, example = "2026-11-23T11:32:10Z")]
    pub last_update_date_time: String,
    /// When it stops being payable (UTC).
    #[schema(format = DateTime, example = "2026-11-23T12:00:00Z")]
    pub expiration_date_time: String,
    /// The amount captured (0 until captured; less than the total after a partial capture).
    #[schema(value_type = f64, example = 25.50)]
    pub captured_amount: JsonDecimal,
    /// The sum of the refunds the processor confirmed.
    #[schema(value_type = f64, example = 0)]
    pub refunded_amount: JsonDecimal,
    /// Every card submitted for the session, oldest first (empty before the first card).
    /// More than one only when the terminal allows another card after a decline
    /// (`maxCardAttempts`).
    pub attempts: Vec<CardAttemptRecord>,
    /// The disputes (chargebacks) the payer's bank opened on the captured payment, oldest
    /// first, as the processor last reported each (empty unless captured and disputed).
    pub disputes: Vec<DisputeRecord>,
    /// The merchant's metadata, as given at create; absent when none was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<MetadataSchema>)]
    pub metadata: Option<BTreeMap<String, String>>,
    /// The capture method the create asked for; absent when the terminal's applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<CaptureMethodName>)]
    pub capture_method: Option<String>,
}

/// One dispute of a captured payment, as the card processor reports it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisputeRecord {
    /// The processor's dispute reference.
    #[schema(example = "dp_1Q2w3E4r5T6y7U8i")]
    pub dispute_id: String,
    /// The disputed amount, in the session's currency.
    #[schema(value_type = f64, example = 25.50)]
    pub amount: JsonDecimal,
    /// The bank's reason, as the processor names it (`fraudulent`, `product_not_received`,
    /// ...).
    #[schema(example = "fraudulent")]
    pub reason: String,
    /// `NeedsResponse` or `UnderReview` while open; `Won`, `Lost` or `InquiryClosed` once
    /// decided.
    #[schema(value_type = DisputeStatusName)]
    pub status: String,
    /// When the service learnt of it (UTC).
    #[schema(format = DateTime, example = "2026-11-25T09:00:00Z")]
    pub opened_date_time: String,
    /// When its status last changed (UTC).
    #[schema(format = DateTime, example = "2026-11-25T09:00:00Z")]
    pub last_update_date_time: String,
}

impl DisputeRecord {
    /// The record of `dispute`, in `currency`.
    pub fn new(dispute: &Dispute, currency: Currency) -> Self {
        DisputeRecord {
            dispute_id: dispute.reference.clone(),
            amount: JsonDecimal::money(dispute.amount, currency),
            reason: dispute.reason.clone(),
            status: dispute.status.name().to_owned(),
            opened_date_time: utc_timestamp(dispute.opened_at),
            last_update_date_time: utc_timestamp(dispute.updated_at),
        }
    }
}

/// One card submitted for a session: never card data beyond the brand and last four digits.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CardAttemptRecord {
    /// When the card was submitted (UTC).
    #[schema(format = DateTime, example = "2026-11-23T11:40:00Z")]
    pub attempt_date_time: String,
    /// `visa`, `mastercard`, `amex`, `discover` or `other`.
    #[schema(value_type = CardBrandName)]
    pub card_brand: String,
    /// The card's last four digits.
    #[schema(example = "4242")]
    pub card_last_four: String,
    /// How it ended: `Successful`, `ApprovedTransaction`, `Declined`, `NothingCharged` (the
    /// processor refused the request), `Cancelled` (cancelled at the processor), or not yet:
    /// `Processing`, `ChallengeRequired`, `Unknown` (the answer was lost; being reconciled).
    #[schema(value_type = CardAttemptOutcome)]
    pub outcome: String,
    /// The service code it ended with (`SVC_006` for a decline), if any.
    #[schema(example = "SVC_006")]
    pub code: Option<String>,
}

impl From<&CardAttempt> for CardAttemptRecord {
    fn from(attempt: &CardAttempt) -> Self {
        CardAttemptRecord {
            attempt_date_time: utc_timestamp(attempt.at),
            card_brand: attempt.brand.as_str().to_owned(),
            card_last_four: attempt.last4.clone(),
            outcome: attempt.outcome().to_owned(),
            code: attempt.code.map(|code| code.spec().code.to_owned()),
        }
    }
}

impl PaymentStatusResponse {
    /// The record of `session` as seen at `now`.
    pub fn new(session: &PaymentSession, now: OffsetDateTime) -> Self {
        let state = session.effective_state(now);
        let currency = session.amount().currency();
        PaymentStatusResponse {
            checkout_session_id: session.id().to_string(),
            state: state.name().to_owned(),
            state_code: state.code(),
            session_type: match session.kind() {
                SessionKind::IntegratedCheckout(_) => "IntegratedCheckout",
                SessionKind::PaymentLink => "PaymentLink",
            }
            .to_owned(),
            transaction_reference_number: session.reference().to_string(),
            internal_transaction_reference_number: session.internal_reference().to_string(),
            terminal_number: session.terminal().to_string(),
            total_transaction_amount: JsonDecimal(session.amount().value()),
            currency_code: session.amount().currency().code().to_owned(),
            creation_date_time: utc_timestamp(session.created_at()),
            last_update_date_time: utc_timestamp(session.updated_at()),
            expiration_date_time: utc_timestamp(session.expires_at()),
            captured_amount: JsonDecimal::money(session.captured_amount().value(), currency),
            refunded_amount: JsonDecimal::money(session.money().refunded().value(), currency),
            attempts: session
                .attempts()
                .iter()
                .map(CardAttemptRecord::from)
                .collect(),
            disputes: session
                .disputes()
                .iter()
                .map(|d| DisputeRecord::new(d, currency))
                .collect(),
            metadata: (!session.metadata().is_empty()).then(|| {
                session
                    .metadata()
                    .entries()
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect()
            }),
            capture_method: session.capture_method().map(|m| m.as_str().to_owned()),
        }
    }
}
