//! Shared OpenAPI schemas of the closed sets on the wire (currencies, cultures, states,
//! event types), each one named component that the bodies reference. Their values come from
//! the domain's own lists, so that the document cannot drift from what the service does.

use std::borrow::Cow;

use checkout_domain::card::CardBrand;
use checkout_domain::events::EventType;
use checkout_domain::session::{
    AttemptState, CardAttempt, DisputeStatus, LedgerState, SessionState,
};
use checkout_domain::terminal::CaptureMethod;
use checkout_domain::values::{
    Currency, MAX_METADATA_KEYS, MAX_METADATA_KEY_CHARS, MAX_METADATA_VALUE_CHARS,
};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// A string schema with `values` as its enum, `description` and `example`.
fn string_enum<I: IntoIterator<Item = &'static str>>(
    values: I,
    description: &str,
    example: &str,
) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values))
        .description(Some(description))
        .examples([serde_json::Value::from(example)])
        .build()
        .into()
}

/// Declares a unit type that is a named component schema built by `$schema`.
macro_rules! component {
    ($(#[$meta:meta])* $name:ident as $wire:literal => $schema:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                $schema
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($wire)
            }
        }
    };
}

component!(
    /// `CurrencyCode`: one of the ISO 4217 codes the service accepts (docs/currencies.md).
    CurrencyCode as "CurrencyCode" => string_enum(
        Currency::all_codes(),
        "ISO 4217 currency code. An amount in it may carry at most the currency's minor units \
         as decimal places (USD and CRC 2, JPY 0, KWD 3); the table of every code and its minor \
         units is docs/currencies.md.",
        "USD",
    )
);

component!(
    /// `Metadata`: the merchant's own string pairs on a session, within Stripe's limits.
    MetadataSchema as "Metadata" => ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(MAX_METADATA_VALUE_CHARS)),
        ))
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(MAX_METADATA_KEY_CHARS))
                .pattern(Some("^[^\\[\\]]+$")),
        ))
        .max_properties(Some(MAX_METADATA_KEYS))
        .description(Some(
            "The merchant's own key-value pairs: at most 50 keys of at most 40 characters \
             (without `[` or `]`), each value a string of at most 500. Returned as given in \
             the status record, the events feed and the webhooks; the service never reads \
             them. A pair outside the limits is a 400 naming it (`Metadata[key]`).",
        ))
        .examples([serde_json::json!({ "orderId": "1001", "channel": "web" })])
        .build()
        .into()
);

component!(
    /// `CaptureMethod`: when the authorisation is captured.
    CaptureMethodName as "CaptureMethod" => string_enum(
        CaptureMethod::ALL.map(CaptureMethod::as_str),
        "`automatic`: captured with the authorisation (the session ends `Successful`); \
         `manual`: the authorisation is held (`ApprovedTransaction`) until the merchant \
         captures or voids it. On a create: the terminal's method when omitted.",
        "manual",
    )
);

component!(
    /// `CardBrand`: the brand of a submitted card.
    CardBrandName as "CardBrand" => string_enum(
        CardBrand::ALL.map(|b| b.as_str()),
        "The card's brand, from its number.",
        "visa",
    )
);

component!(
    /// `CardAttemptOutcome`: how a card attempt ended, or that it has not yet.
    CardAttemptOutcome as "CardAttemptOutcome" => string_enum(
        AttemptState::ALL.map(CardAttempt::outcome_of),
        "`Successful`, `ApprovedTransaction`, `Declined`, `NothingCharged` (the processor \
         refused the request), `Cancelled` (cancelled at the processor), or not yet: \
         `Processing`, `ChallengeRequired`, `Unknown` (the answer was lost; being reconciled).",
        "Declined",
    )
);

component!(
    /// `Culture`: the page language a merchant may ask for.
    Culture as "Culture" => string_enum(["es", "en"], "Page language: `es` or `en`.", "es")
);

/// What each state means, for the schema's description (the codes are in `stateCode`).
const STATES: &str = "The session's state (its number is `stateCode`):\n\n\
| code | state | terminal | meaning |\n\
|---|---|---|---|\n\
| 0 | Pending | no | created; no card submitted yet, or the last attempt certainly charged nothing |\n\
| 1 | Successful | yes | authorised and captured |\n\
| 2 | Failed | yes | declined (SVC_006) |\n\
| 3 | ApprovedTransaction | yes | authorised, not captured (capture or void it) |\n\
| 4 | Processing | no | a card was submitted; waiting for the processor |\n\
| 5 | ChallengeRequired | no | waiting for the payer's 3DS challenge |\n\
| 6 | Expired | yes | expired unpaid (or its authorisation expired at the processor uncaptured: nothing charged); its merchant reference is free again |\n\
| 7 | Cancelled | yes | cancelled unpaid, by the payer or the merchant |\n\
| 8 | Voided | yes | the merchant voided an authorisation never captured |\n\n\
Poll a payment link until the state is terminal.";

component!(
    /// `PaymentState`: the name of a session's state.
    PaymentState as "PaymentState" => string_enum(
        SessionState::ALL.map(SessionState::name),
        STATES,
        "Successful",
    )
);

component!(
    /// `PaymentStateCode`: the numeric code of a session's state.
    PaymentStateCode as "PaymentStateCode" => ObjectBuilder::new()
        .schema_type(Type::Integer)
        .enum_values(Some(SessionState::ALL.map(SessionState::code)))
        .description(Some(
            "The state's numeric code: Pending 0, Successful 1, Failed 2, ApprovedTransaction 3, \
             Processing 4, ChallengeRequired 5, Expired 6, Cancelled 7, Voided 8 (see `state`).",
        ))
        .examples([serde_json::Value::from(1)])
        .build()
        .into()
);

component!(
    /// `SessionType`: how the session was created.
    SessionType as "SessionType" => string_enum(
        ["IntegratedCheckout", "PaymentLink"],
        "`IntegratedCheckout` (POST /pay/api/start-payment) or `PaymentLink` \
         (POST /pay/api/generate-payment-link).",
        "IntegratedCheckout",
    )
);

component!(
    /// `LedgerState`: where a refund stands.
    LedgerStateName as "LedgerState" => string_enum(
        LedgerState::ALL.map(LedgerState::name),
        "`Succeeded`, `Pending` (recorded, the processor not answered yet), `Failed` (the \
         processor refused: nothing refunded) or `Unknown` (the processor's answer was lost: \
         its amount stays reserved, not counted as refunded).",
        "Succeeded",
    )
);

component!(
    /// `DisputeStatus`: where a dispute stands.
    DisputeStatusName as "DisputeStatus" => string_enum(
        DisputeStatus::ALL.map(DisputeStatus::name),
        "Open: `NeedsResponse` (send evidence to the processor), `UnderReview` (the bank is \
         deciding). Decided: `Won` (the money stays with the merchant), `Lost` (it went back to \
         the payer), `InquiryClosed` (an inquiry that never became a chargeback).",
        "NeedsResponse",
    )
);

component!(
    /// `EventType`: the type of a payment event.
    EventTypeName as "EventType" => string_enum(
        EventType::ALL.map(EventType::as_str),
        "The type of a payment event.",
        "payment.succeeded",
    )
);

component!(
    /// `EventTypeFilter`: an event type an endpoint subscribes to, or `*` for every type.
    EventTypeFilter as "EventTypeFilter" => string_enum(
        std::iter::once("*").chain(EventType::ALL.map(EventType::as_str)),
        "An event type, or `*` for every type (including types added later).",
        "payment.succeeded",
    )
);

component!(
    /// `DeliveryState`: where a webhook delivery stands.
    DeliveryStateName as "DeliveryState" => string_enum(
        ["pending", "delivered", "failed", "cancelled"],
        "`pending` (another attempt is due), `delivered` (answered 2xx), `failed` (every \
         attempt of the retry schedule failed) or `cancelled` (the endpoint was deleted or \
         disabled).",
        "delivered",
    )
);

component!(
    /// `CircuitState`: how a webhook endpoint's deliveries go out.
    CircuitStateName as "CircuitState" => string_enum(
        ["closed", "probing", "open", "disabled"],
        "`closed` (deliveries go out as they fall due), `probing` (its last attempt failed: one \
         attempt at a time), `open` (it kept failing: nothing is attempted until \
         `circuitOpenUntilDateTime`, then one probe) or `disabled` (failing for days: nothing \
         is sent until the merchant enables it).",
        "closed",
    )
);

/// docs/currencies.md: every accepted currency code and its minor units, rendered from the
/// domain's table (a test keeps the file equal to it).
pub fn currencies_markdown() -> String {
    let mut text = String::from(
        "# Currencies\n\n\
         Generated from the domain's currency table (`checkout-domain`, `values/currency.rs`) by \
         `UPDATE_SNAPSHOTS=1 cargo nextest run -p checkout-http currencies`; a test fails when \
         they differ.\n\n\
         Every amount of the API (`totalTransactionAmount`, `amount`, `chargeAmount`, \
         `capturedAmount`, `refundedAmount`) is a JSON number in the session's currency. A \
         request's amount may carry at most the currency's minor units as decimal places \
         (`25.5` and `25.50` USD are accepted, `25.505` USD and `100.5` JPY are a 400); the \
         amounts the service writes never carry more places than that. \
         Items and additional charges are in the request's `currencyCode`.\n\n\
         | code | minor units | example |\n|---|---|---|\n",
    );
    for code in Currency::all_codes() {
        let units = Currency::parse(code).map(|c| c.minor_units()).unwrap_or(0);
        let example = match units {
            0 => "1500".to_owned(),
            n => format!("1500.{}", "5".repeat(n as usize)),
        };
        text.push_str(&format!("| {code} | {units} | `{example}` |\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkout_domain::webhooks::DeliveryState;

    #[test]
    fn docs_currencies_md_is_the_domains_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/currencies.md");
        let expected = currencies_markdown();
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(path, &expected).expect("write docs/currencies.md");
            return;
        }
        let saved = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            saved == expected,
            "docs/currencies.md differs from the domain's currency table; run \
             `UPDATE_SNAPSHOTS=1 cargo nextest run -p checkout-http currencies`"
        );
    }

    #[test]
    fn delivery_states_are_the_domains() {
        let RefOr::T(Schema::Object(schema)) = DeliveryStateName::schema() else {
            panic!("an object schema");
        };
        for value in schema.enum_values.unwrap_or_default() {
            let name = value.as_str().unwrap_or_default();
            assert!(DeliveryState::parse(name).is_some(), "{name}");
        }
    }

    #[test]
    fn circuit_states_are_the_domains() {
        use checkout_domain::webhooks::CircuitState;
        use time::macros::datetime;
        let RefOr::T(Schema::Object(schema)) = CircuitStateName::schema() else {
            panic!("an object schema");
        };
        let names: Vec<String> = schema
            .enum_values
            .unwrap_or_default()
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect();
        let at = datetime!(2026-11-28 12:00 UTC);
        for state in [
            CircuitState::Closed,
            CircuitState::Probing,
            CircuitState::Open(at),
            CircuitState::Disabled,
        ] {
            assert!(names.iter().any(|n| n == state.as_str()), "{state:?}");
        }
        assert_eq!(names.len(), 4);
    }
}
