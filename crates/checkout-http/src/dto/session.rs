//! Start payment and generate payment link bodies (spec 2.2, 2.3, 2.4).

use checkout_domain::session::{ChargeRequest, ItemRequest, PaymentSession, SessionRequest};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use super::schemas::{CaptureMethodName, Culture, CurrencyCode, MetadataSchema};
use super::{utc_timestamp, JsonDecimal};

/// A JSON number with no fractional part (`3` or `3.0`: JSON Schema's `integer`), as an
/// `i64`; `null` or absent is `None`.
fn whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    if let Some(whole) = number.as_i64() {
        return Ok(Some(whole));
    }
    match number.as_f64() {
        // Below 2^53 every whole f64 is exact.
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(f as i64)),
        _ => Err(serde::de::Error::custom("not a whole number")),
    }
}

/// An additional charge (shipping, fees).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdditionalChargeDto {
    /// Charge name.
    #[schema(min_length = 1, max_length = 255, example = "Shipping")]
    pub charge_name: Option<String>,
    /// Charge amount, 0 or more, with no more decimal places than the currency's minor units.
    #[schema(value_type = f64, required = true, nullable = false, minimum = 0, exclusive_maximum = 10000000000000.0, example = 5.00)]
    pub charge_amount: Option<JsonDecimal>,
    /// Must equal the request's currencyCode.
    #[schema(required = true, nullable = false, value_type = CurrencyCode, example = "USD")]
    pub charge_currency_code: Option<String>,
}

/// A line item.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ItemDto {
    /// Merchant item code.
    #[schema(min_length = 1, max_length = 64, example = "SKU-1")]
    pub item_code: Option<String>,
    /// Quantity, at least 1.
    #[schema(value_type = i64, required = true, nullable = false, minimum = 1, maximum = 1000000, example = 1)]
    #[serde(default, deserialize_with = "whole_number")]
    pub quantity: Option<i64>,
    /// Description.
    #[schema(min_length = 1, max_length = 255, example = "Blue mug")]
    pub description: Option<String>,
    /// Unit amount, 0 or more, with no more decimal places than the currency's minor units.
    #[schema(value_type = f64, required = true, nullable = false, minimum = 0, exclusive_maximum = 10000000000000.0, example = 20.00)]
    pub amount: Option<JsonDecimal>,
    /// Must equal the request's currencyCode.
    #[schema(required = true, nullable = false, value_type = CurrencyCode, example = "USD")]
    pub currency_code: Option<String>,
}

impl From<AdditionalChargeDto> for ChargeRequest {
    fn from(c: AdditionalChargeDto) -> Self {
        ChargeRequest {
            charge_name: c.charge_name,
            charge_amount: c.charge_amount.map(|d| d.0),
            charge_currency_code: c.charge_currency_code,
        }
    }
}

impl From<ItemDto> for ItemRequest {
    fn from(i: ItemDto) -> Self {
        ItemRequest {
            item_code: i.item_code,
            quantity: i.quantity,
            description: i.description,
            amount: i.amount.map(|d| d.0),
            currency_code: i.currency_code,
        }
    }
}

/// Declares a session request body: the fields both requests share, plus `$extra`.
/// (`#[serde(flatten)]` would buffer the body and lose the exact decimal text.) Both bodies
/// refuse a field they do not declare (`deny_unknown_fields`: a 400 naming it), so a field
/// both creates gain, such as `metadata`, is one more field here and one line in
/// `common_into`.
macro_rules! session_request {
    ($(#[$meta:meta])* $name:ident { $($extra:tt)* } required_for_link = $req:literal, nullable_for_link = $nullable:literal) => {
        $(#[$meta])*
        #[derive(Debug, Deserialize, ToSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            $($extra)*
            /// Total amount, greater than 0, with no more decimal places than the currency's minor
            /// units (USD 2, JPY 0, KWD 3: docs/currencies.md); otherwise a 400.
            #[schema(value_type = f64, required = true, nullable = false, exclusive_minimum = 0, exclusive_maximum = 10000000000000.0, example = 25.50)]
            pub total_transaction_amount: Option<JsonDecimal>,
            /// ISO 4217 currency code (e.g. CRC, USD).
            #[schema(required = true, nullable = false, value_type = CurrencyCode, example = "USD")]
            pub currency_code: Option<String>,
            /// The terminal; when omitted it is resolved from the token's client_id.
            #[schema(example = "SANDBOX-001")]
            pub terminal_number: Option<String>,
            /// Merchant reference, unique per terminal for a new session.
            #[schema(required = true, nullable = false, min_length = 1, max_length = 64, example = "ORDER-1001")]
            pub transaction_reference_number: Option<String>,
            /// Purchase description, shown on the page.
            #[schema(required = $req, nullable = $nullable, min_length = 1, max_length = 255, example = "Order 1001")]
            pub general_purchase_description: Option<String>,
            /// Payer email.
            #[schema(required = $req, nullable = $nullable, format = Email, max_length = 254, example = "payer@example.com")]
            pub user_email: Option<String>,
            /// Page language: es or en.
            #[schema(required = $req, nullable = $nullable, value_type = Culture, example = "es")]
            pub culture: Option<String>,
            /// Extra charges.
            #[schema(max_items = 20)]
            pub additional_charges: Option<Vec<AdditionalChargeDto>>,
            /// Line items.
            #[schema(max_items = 100)]
            pub items: Option<Vec<ItemDto>>,
            /// When the session stops being payable: UTC, ISO 8601 with `Z`, within the
            /// configured bounds (by default 5 minutes to 30 days ahead for links, 5 minutes
            /// to 24 hours for integrated checkouts); the configured validity when absent.
            #[schema(format = DateTime)]
            pub expiration_date_time: Option<String>,
            /// The merchant's own key-value pairs (an addition to the spec's fields).
            #[schema(value_type = Option<MetadataSchema>)]
            pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
            /// When the authorisation is captured (an addition to the spec's fields): the
            /// terminal's method when omitted.
            #[schema(value_type = Option<CaptureMethodName>)]
            pub capture_method: Option<String>,
        }

        impl $name {
            fn common_into(self, request: &mut SessionRequest) {
                request.total_transaction_amount = self.total_transaction_amount.map(|d| d.0);
                request.currency_code = self.currency_code;
                request.terminal_number = self.terminal_number;
                request.transaction_reference_number = self.transaction_reference_number;
                request.general_purchase_description = self.general_purchase_description;
                request.user_email = self.user_email;
                request.culture = self.culture;
                request.additional_charges = self
                    .additional_charges
                    .unwrap_or_default()
                    .into_iter()
                    .map(Into::into)
                    .collect();
                request.items = self.items.unwrap_or_default().into_iter().map(Into::into).collect();
                request.expiration_date_time = self.expiration_date_time;
                request.metadata = self
                    .metadata
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(key, value)| match value {
                        serde_json::Value::String(text) => (key, Some(text)),
                        _ => (key, None),
                    })
                    .collect();
                request.capture_method = self.capture_method;
            }
        }
    };
}

session_request!(
    /// POST /pay/api/start-payment body.
    StartPaymentRequest {
        /// URL the payer is redirected to after a successful payment.
        #[schema(required = true, nullable = false, format = "uri", max_length = 2048, example = "https://merchant.example/ok")]
        pub callback_success_url: Option<String>,
        /// URL the payer is redirected to after a failed payment.
        #[schema(required = true, nullable = false, format = "uri", max_length = 2048, example = "https://merchant.example/fail")]
        pub callback_fail_url: Option<String>,
        /// URL the payer is redirected to on cancel or back.
        #[schema(format = "uri", max_length = 2048, example = "https://merchant.example/cart")]
        pub callback_back_url: Option<String>,
    } required_for_link = false, nullable_for_link = true
);

session_request!(
    /// POST /pay/api/generate-payment-link body.
    PaymentLinkRequest {} required_for_link = true, nullable_for_link = false
);

impl StartPaymentRequest {
    /// The domain request.
    pub fn into_domain(mut self) -> SessionRequest {
        let mut request = SessionRequest {
            callback_success_url: self.callback_success_url.take(),
            callback_fail_url: self.callback_fail_url.take(),
            callback_back_url: self.callback_back_url.take(),
            ..SessionRequest::default()
        };
        self.common_into(&mut request);
        request
    }
}

impl PaymentLinkRequest {
    /// The domain request.
    pub fn into_domain(self) -> SessionRequest {
        let mut request = SessionRequest::default();
        self.common_into(&mut request);
        request
    }
}

/// Start payment response.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartPaymentResponse {
    /// Session identifier; redirect the payer to `{base_url}/pay/checkout-payment/<checkoutSessionId>`.
    pub checkout_session_id: String,
    /// The service's internal reference.
    pub internal_transaction_reference_number: String,
    /// When the session stops being payable, UTC, ISO 8601 with a Z.
    #[schema(format = DateTime, example = "2026-11-23T12:00:00Z")]
    pub expiration_date_time: String,
    /// Where to send the payer: the session's hosted payment page,
    /// `{public base URL}/pay/checkout-payment/{checkoutSessionId}` (an addition to the
    /// spec's fields).
    #[schema(
        format = "uri",
        example = "http://127.0.0.1:8080/pay/checkout-payment/9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60"
    )]
    pub checkout_url: String,
}

impl StartPaymentResponse {
    /// The response for a created session whose payment page is at `checkout_url`.
    pub fn new(s: &PaymentSession, checkout_url: String) -> Self {
        StartPaymentResponse {
            checkout_session_id: s.id().to_string(),
            internal_transaction_reference_number: s.internal_reference().to_string(),
            expiration_date_time: utc_timestamp(s.expires_at()),
            checkout_url,
        }
    }
}

/// Generate payment link response.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentLinkResponse {
    /// Session identifier for status queries.
    pub checkout_session_id: String,
    /// Full URL to share with the payer: `<BaseUrlPaymentLink>/<checkoutSessionId>`.
    #[schema(
        format = "uri",
        example = "http://127.0.0.1:8080/pay/link/9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60"
    )]
    pub payment_link: String,
    /// The service's internal reference.
    pub internal_transaction_reference_number: String,
    /// Link expiry, UTC, ISO 8601 with a Z.
    #[schema(format = DateTime, example = "2026-11-23T12:00:00Z")]
    pub expiration_date_time: String,
}

impl PaymentLinkResponse {
    /// The response for a created link.
    pub fn new(session: &PaymentSession, payment_link: String) -> Self {
        PaymentLinkResponse {
            checkout_session_id: session.id().to_string(),
            payment_link,
            internal_transaction_reference_number: session.internal_reference().to_string(),
            expiration_date_time: utc_timestamp(session.expires_at()),
        }
    }
}
