//! Bodies of the merchant's actions after a payment: capture, void, refunds (the spec's
//! reversal codes SVC_008..SVC_011).

use checkout_domain::session::{PaymentSession, Refund};
use checkout_domain::SvcCode;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;

use super::schemas::{CurrencyCode, LedgerStateName};
use super::{utc_timestamp, JsonDecimal, PaymentStatusResponse};

/// POST /pay/api/payment/{id}/capture body.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AmountRequest {
    /// The amount to capture, in the session's currency; the whole authorised amount when
    /// absent.
    #[schema(value_type = Option<f64>, nullable = false, exclusive_minimum = 0, exclusive_maximum = 10000000000000.0, example = 10.00)]
    pub amount: Option<JsonDecimal>,
}

/// POST /pay/api/payment/{id}/refunds body.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefundRequest {
    /// The amount to refund, in the session's currency (required; absent is a 400 naming
    /// `Amount`).
    #[schema(value_type = f64, required = true, nullable = false, exclusive_minimum = 0, exclusive_maximum = 10000000000000.0, example = 10.00)]
    pub amount: Option<JsonDecimal>,
}

/// One refund.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundBody {
    /// The refund's id.
    pub refund_id: String,
    /// How much.
    #[schema(value_type = f64, example = 10.00)]
    pub amount: JsonDecimal,
    /// The session's currency.
    #[schema(value_type = CurrencyCode)]
    pub currency_code: String,
    /// `Succeeded`, `Pending` (recorded, the processor not answered yet), `Failed` (the
    /// processor refused: nothing refunded) or `Unknown` (the processor's answer was lost or
    /// is pending: its amount stays reserved, not counted as refunded).
    #[schema(value_type = LedgerStateName)]
    pub state: String,
    /// SVC_009 for a Failed or Unknown refund.
    #[schema(value_type = Option<String>, nullable = false, pattern = "^SVC_009$", example = "SVC_009")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub svc_code: Option<String>,
    /// When it was made (UTC).
    #[schema(format = DateTime, example = "2026-11-23T11:40:00Z")]
    pub creation_date_time: String,
    /// When it last changed (UTC).
    #[schema(format = DateTime, example = "2026-11-23T11:40:01Z")]
    pub last_update_date_time: String,
}

impl RefundBody {
    /// The body of `refund` of `session`.
    pub fn new(refund: &Refund, session: &PaymentSession) -> Self {
        RefundBody {
            refund_id: refund.id.to_string(),
            amount: JsonDecimal::money(refund.amount, session.amount().currency()),
            currency_code: session.amount().currency().code().to_owned(),
            state: refund.state.name().to_owned(),
            svc_code: refund.svc_code.map(|c| c.code().to_owned()),
            creation_date_time: utc_timestamp(refund.created_at),
            last_update_date_time: utc_timestamp(refund.updated_at),
        }
    }
}

/// A reversal done (a void or a refund): 200 with the spec's SVC_010 row as `type`, `title`,
/// `status` and `detail`, the request's `instance`, and the payment as it now stands.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReversalResponse {
    /// `SVC_010`.
    #[serde(rename = "type")]
    #[schema(example = "SVC_010")]
    pub kind: String,
    /// `Reversal successful`.
    pub title: String,
    /// 200.
    pub status: u16,
    /// `Reversal completed.`
    pub detail: String,
    /// Correlation identifier (a GUID), also written in the request's log line.
    pub instance: String,
    /// The session.
    pub checkout_session_id: String,
    /// The refund made (refunds only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refund: Option<RefundBody>,
    /// The status record after the reversal.
    pub payment: PaymentStatusResponse,
}

impl ReversalResponse {
    /// The answer to a reversal of `session` (with `refund` for a refund), seen at `now`.
    pub fn new(
        session: &PaymentSession,
        refund: Option<&Refund>,
        instance: String,
        now: OffsetDateTime,
    ) -> Self {
        let spec = SvcCode::Svc010.spec();
        ReversalResponse {
            kind: spec.code.to_owned(),
            title: spec.title.to_owned(),
            status: spec.http_status,
            detail: spec.message.to_owned(),
            instance,
            checkout_session_id: session.id().to_string(),
            refund: refund.map(|r| RefundBody::new(r, session)),
            payment: PaymentStatusResponse::new(session, now),
        }
    }
}

/// GET /pay/api/payment/{id}/refunds body.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundListResponse {
    /// The session.
    pub checkout_session_id: String,
    /// The session's currency.
    #[schema(value_type = CurrencyCode)]
    pub currency_code: String,
    /// The amount captured.
    #[schema(value_type = f64, example = 25.50)]
    pub captured_amount: JsonDecimal,
    /// The sum of the refunds the processor confirmed.
    #[schema(value_type = f64, example = 10.00)]
    pub refunded_amount: JsonDecimal,
    /// Every refund asked for, oldest first, whatever its state.
    pub refunds: Vec<RefundBody>,
}

impl RefundListResponse {
    /// The list of `session`'s `refunds`.
    pub fn new(session: &PaymentSession, refunds: &[Refund]) -> Self {
        let currency = session.amount().currency();
        RefundListResponse {
            checkout_session_id: session.id().to_string(),
            currency_code: session.amount().currency().code().to_owned(),
            captured_amount: JsonDecimal::money(session.captured_amount().value(), currency),
            refunded_amount: JsonDecimal::money(session.money().refunded().value(), currency),
            refunds: refunds
                .iter()
                .map(|r| RefundBody::new(r, session))
                .collect(),
        }
    }
}
