//! The regular expressions the OpenAPI document publishes for the request fields, each written
//! once here and set on every field and parameter it applies to by [`Patterns`] (utoipa's
//! `pattern` attribute takes a literal only). They describe the domain's rules for clients;
//! the domain (`session/request.rs`, `values/`) decides.

use utoipa::openapi::path::{Operation, Parameter};
use utoipa::openapi::schema::{Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::Modify;

/// Display text (descriptions, names, item codes): at least one visible character, no control
/// characters.
pub const DISPLAY_TEXT: &str =
    r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$";

/// A merchant reference (`transactionReferenceNumber`): printable ASCII, at least one visible
/// character.
pub const MERCHANT_REFERENCE: &str = "^[ -~]*[!-~][ -~]*$";

/// A terminal number: up to 32 letters, digits, `_` or `-` (or empty: resolved from the token).
pub const TERMINAL_NUMBER: &str = "^([A-Za-z0-9_-]{1,32})?$";

/// A callback URL: absolute http(s), a host without user info, an optional port.
pub const CALLBACK_URL: &str = r"^https?://[^/@:?#\s]+(:[0-9]{1,5})?([/?#]\S*)?$";

/// A webhook URL: as a callback URL, without a fragment.
pub const WEBHOOK_URL: &str = r"^https?://[^/@:?#\s]+(:[0-9]{1,5})?([/?][^#\s]*)?$";

/// An `Idempotency-Key` header: 1 to 255 visible ASCII characters, bare (not starting with a
/// quote) or as a Structured Field string (`"..."`, with `\"` and `\\` escapes, one
/// character each).
pub const IDEMPOTENCY_KEY: &str = r#"^([!#-~][!-~]{0,254}|"([!#-\[\]-~]|\\["\\]){1,255}")$"#;

/// (component schema, property, pattern).
const PROPERTIES: &[(&str, &str, &str)] = &[
    ("AdditionalChargeDto", "chargeName", DISPLAY_TEXT),
    ("ItemDto", "itemCode", DISPLAY_TEXT),
    ("ItemDto", "description", DISPLAY_TEXT),
    (
        "StartPaymentRequest",
        "generalPurchaseDescription",
        DISPLAY_TEXT,
    ),
    (
        "StartPaymentRequest",
        "transactionReferenceNumber",
        MERCHANT_REFERENCE,
    ),
    ("StartPaymentRequest", "terminalNumber", TERMINAL_NUMBER),
    ("StartPaymentRequest", "callbackSuccessUrl", CALLBACK_URL),
    ("StartPaymentRequest", "callbackFailUrl", CALLBACK_URL),
    ("StartPaymentRequest", "callbackBackUrl", CALLBACK_URL),
    (
        "PaymentLinkRequest",
        "generalPurchaseDescription",
        DISPLAY_TEXT,
    ),
    (
        "PaymentLinkRequest",
        "transactionReferenceNumber",
        MERCHANT_REFERENCE,
    ),
    ("PaymentLinkRequest", "terminalNumber", TERMINAL_NUMBER),
    ("WebhookEndpointRequest", "url", WEBHOOK_URL),
];

/// (path, GET query parameter, pattern).
const QUERY_PARAMETERS: &[(&str, &str, &str)] = &[(
    "/pay/api/payment",
    "transactionReferenceNumber",
    MERCHANT_REFERENCE,
)];

/// (header parameter, pattern), on every operation that takes the header.
const HEADER_PARAMETERS: &[(&str, &str)] = &[("Idempotency-Key", IDEMPOTENCY_KEY)];

/// Sets the patterns above on their fields and parameters.
pub struct Patterns;

impl Modify for Patterns {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        if let Some(components) = openapi.components.as_mut() {
            for (schema, property, pattern) in PROPERTIES {
                let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(*schema)
                else {
                    continue;
                };
                if let Some(RefOr::T(Schema::Object(field))) = object.properties.get_mut(*property)
                {
                    field.pattern = Some((*pattern).to_owned());
                }
            }
        }
        for (path, name, pattern) in QUERY_PARAMETERS {
            let Some(item) = openapi.paths.paths.get_mut(*path) else {
                continue;
            };
            let operation: Option<&mut Operation> = item.get.as_mut();
            let parameters = operation.and_then(|o| o.parameters.as_mut());
            for parameter in parameters.into_iter().flatten() {
                if parameter.name == *name {
                    set_pattern(parameter, pattern);
                }
            }
        }
        for item in openapi.paths.paths.values_mut() {
            for operation in [&mut item.post, &mut item.put].into_iter().flatten() {
                for parameter in operation.parameters.iter_mut().flatten() {
                    let header = HEADER_PARAMETERS
                        .iter()
                        .find(|(name, _)| parameter.name == *name);
                    if let Some((_, pattern)) = header {
                        // A header is absent or a string, never null.
                        if let Some(RefOr::T(Schema::Object(schema))) = parameter.schema.as_mut() {
                            schema.schema_type = Type::String.into();
                        }
                        set_pattern(parameter, pattern);
                    }
                }
            }
        }
    }
}

/// Sets `pattern` on the string schema of `parameter`.
fn set_pattern(parameter: &mut Parameter, pattern: &str) {
    if let Some(RefOr::T(Schema::Object(schema))) = parameter.schema.as_mut() {
        schema.pattern = Some(pattern.to_owned());
    }
}
