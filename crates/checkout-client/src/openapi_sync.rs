//! The SDK's bodies stay in step with the service's published OpenAPI document: each answer
//! type reads exactly the properties of its schema, each request writes exactly those of its
//! own, each route answers the schema the SDK reads, and each closed set has the same values.

use std::collections::BTreeSet;

use rust_decimal::Decimal;
use serde::de::{self, DeserializeOwned, Visitor};
use serde::Serialize;
use serde_json::Value;

use crate::client::paths;
use crate::money::{Currency, Money};
use crate::types::*;
use crate::{Problem, RefundState};

const DOCUMENT: &str = include_str!("../../../docs/openapi.json");

fn document() -> Value {
    serde_json::from_str(DOCUMENT).unwrap()
}

/// A deserializer that only records the field names a struct asks for.
struct FieldRecorder<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> de::Deserializer<'de> for FieldRecorder<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(de::Error::custom("recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The JSON property names `T` reads.
fn reads<T: DeserializeOwned>() -> BTreeSet<String> {
    let mut fields = None;
    let _ = T::deserialize(FieldRecorder(&mut fields));
    fields
        .expect("a struct")
        .iter()
        .map(|f| (*f).to_owned())
        .collect()
}

/// The JSON property names `value` writes.
fn writes<T: Serialize>(value: &T) -> BTreeSet<String> {
    serde_json::to_value(value)
        .unwrap()
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect()
}

/// The property names of the component schema `name`.
fn properties(doc: &Value, name: &str) -> BTreeSet<String> {
    doc["components"]["schemas"][name]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no schema {name}"))
        .keys()
        .cloned()
        .collect()
}

/// The values of the enum schema `name`, as text.
fn enum_values(doc: &Value, name: &str) -> Vec<String> {
    doc["components"]["schemas"][name]["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("no enum {name}"))
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| v.to_string())
        })
        .collect()
}

/// The schema name a `$ref` (or an array of `$ref`) points to.
fn ref_name(schema: &Value) -> String {
    let reference = schema["$ref"]
        .as_str()
        .or_else(|| schema["items"]["$ref"].as_str())
        .unwrap_or_else(|| panic!("no $ref in {schema}"));
    reference.rsplit('/').next().unwrap().to_owned()
}

fn operation<'a>(doc: &'a Value, method: &str, path: &str) -> &'a Value {
    let op = &doc["paths"][path][method];
    assert!(op.is_object(), "the document has no {method} {path}");
    op
}

#[test]
fn every_answer_type_reads_exactly_its_schemas_properties() {
    let doc = document();
    let pairs: Vec<(&str, BTreeSet<String>)> = vec![
        ("TokenResponse", reads::<TokenAnswer>()),
        ("StartPaymentResponse", reads::<StartPaymentResponse>()),
        ("PaymentLinkResponse", reads::<PaymentLinkResponse>()),
        ("PaymentStatusResponse", reads::<PaymentStatus>()),
        ("CardAttemptRecord", reads::<CardAttempt>()),
        ("DisputeRecord", reads::<Dispute>()),
        ("RefundBody", reads::<Refund>()),
        ("RefundListResponse", reads::<RefundList>()),
        ("ReversalResponse", reads::<Reversal>()),
        ("EventPageResponse", reads::<EventPage>()),
        ("EventBody", reads::<Event>()),
        ("EventDispute", reads::<EventDispute>()),
        ("WebhookEndpointResponse", reads::<WebhookEndpoint>()),
        (
            "CreatedWebhookEndpointResponse",
            reads::<CreatedWebhookEndpoint>(),
        ),
        ("RotatedSecretResponse", reads::<RotatedSecret>()),
        ("DeliveryPageResponse", reads::<DeliveryPage>()),
        ("DeliveryBody", reads::<Delivery>()),
        ("DeliveryAttemptBody", reads::<DeliveryAttempt>()),
        ("RedeliveryResponse", reads::<Redelivery>()),
        ("ProblemDetails", reads::<Problem>()),
    ];
    for (schema, ours) in pairs {
        assert_eq!(ours, properties(&doc, schema), "{schema}");
    }
}

#[test]
fn every_request_writes_exactly_its_schemas_properties() {
    let doc = document();
    let dec = |text: &str| text.parse::<Decimal>().unwrap();
    let total = Money::new(dec("25.50"), Currency::USD).unwrap();
    let expiry = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
    let checkout = StartPaymentRequest::new(
        "ORDER-1",
        total,
        "https://m.example/ok",
        "https://m.example/fail",
    )
    .callback_back_url("https://m.example/cart")
    .description("Order 1")
    .user_email("payer@example.com")
    .culture(Culture::En)
    .terminal_number("SANDBOX-001")
    .item(Item::new("SKU-1", 1, "Mug", dec("20.50")))
    .additional_charge(AdditionalCharge::new("Shipping", dec("5")))
    .expiration(expiry)
    .metadata("orderId", "1")
    .capture_method(CaptureMethod::Manual);
    let body = checkout.body().unwrap();
    assert_eq!(writes(&body), properties(&doc, "StartPaymentRequest"));
    assert_eq!(
        writes(&body.items.as_ref().unwrap()[0]),
        properties(&doc, "ItemDto")
    );
    assert_eq!(
        writes(&body.additional_charges.as_ref().unwrap()[0]),
        properties(&doc, "AdditionalChargeDto")
    );
    let link = PaymentLinkRequest::new("INV-1", total, "Invoice", "payer@example.com", Culture::Es)
        .terminal_number("SANDBOX-001")
        .item(Item::new("SKU-1", 1, "Mug", dec("20.50")))
        .additional_charge(AdditionalCharge::new("Shipping", dec("5")))
        .expiration(expiry)
        .metadata("orderId", "1")
        .capture_method(CaptureMethod::Automatic);
    assert_eq!(
        writes(&link.body().unwrap()),
        properties(&doc, "PaymentLinkRequest")
    );
    let amount = AmountBody {
        amount: Some(dec("1.00")),
    };
    assert_eq!(writes(&amount), properties(&doc, "AmountRequest"));
    assert_eq!(writes(&amount), properties(&doc, "RefundRequest"));
    assert_eq!(
        writes(&WebhookEndpointBody {
            url: "https://m.example/hooks",
            events: Some(vec!["payment.succeeded"]),
        }),
        properties(&doc, "WebhookEndpointRequest")
    );
    assert_eq!(
        writes(&TokenBody {
            client_id: "c",
            client_secret: "s",
        }),
        properties(&doc, "TokenRequest")
    );
}

/// A route: method, path, success status, answer schema, request schema.
type Route<'a> = (&'a str, String, &'a str, Option<&'a str>, Option<&'a str>);

#[test]
fn every_route_the_sdk_calls_takes_and_answers_the_schemas_it_uses() {
    let doc = document();
    let payment = format!("{}/{{checkoutSessionId}}", paths::PAYMENTS);
    let endpoint = format!("{}/{{id}}", paths::WEBHOOK_ENDPOINTS);
    let routes: Vec<Route> = vec![
        (
            "post",
            paths::TOKEN.into(),
            "200",
            Some("TokenResponse"),
            Some("TokenRequest"),
        ),
        (
            "post",
            paths::START_PAYMENT.into(),
            "200",
            Some("StartPaymentResponse"),
            Some("StartPaymentRequest"),
        ),
        (
            "post",
            paths::PAYMENT_LINK.into(),
            "200",
            Some("PaymentLinkResponse"),
            Some("PaymentLinkRequest"),
        ),
        (
            "get",
            payment.clone(),
            "200",
            Some("PaymentStatusResponse"),
            None,
        ),
        (
            "get",
            paths::PAYMENTS.into(),
            "200",
            Some("PaymentStatusResponse"),
            None,
        ),
        (
            "post",
            format!("{payment}/cancel"),
            "200",
            Some("PaymentStatusResponse"),
            None,
        ),
        (
            "post",
            format!("{payment}/capture"),
            "200",
            Some("PaymentStatusResponse"),
            Some("AmountRequest"),
        ),
        (
            "post",
            format!("{payment}/void"),
            "200",
            Some("ReversalResponse"),
            None,
        ),
        (
            "post",
            format!("{payment}/refunds"),
            "200",
            Some("ReversalResponse"),
            Some("RefundRequest"),
        ),
        (
            "get",
            format!("{payment}/refunds"),
            "200",
            Some("RefundListResponse"),
            None,
        ),
        (
            "get",
            paths::EVENTS.into(),
            "200",
            Some("EventPageResponse"),
            None,
        ),
        (
            "post",
            format!("{}/{{id}}/redeliver", paths::EVENTS),
            "202",
            Some("RedeliveryResponse"),
            None,
        ),
        (
            "post",
            paths::WEBHOOK_ENDPOINTS.into(),
            "201",
            Some("CreatedWebhookEndpointResponse"),
            Some("WebhookEndpointRequest"),
        ),
        (
            "get",
            paths::WEBHOOK_ENDPOINTS.into(),
            "200",
            Some("WebhookEndpointResponse"),
            None,
        ),
        ("delete", endpoint.clone(), "204", None, None),
        (
            "post",
            format!("{endpoint}/rotate-secret"),
            "200",
            Some("RotatedSecretResponse"),
            None,
        ),
        (
            "get",
            format!("{endpoint}/deliveries"),
            "200",
            Some("DeliveryPageResponse"),
            None,
        ),
        (
            "post",
            format!("{endpoint}/enable"),
            "200",
            Some("WebhookEndpointResponse"),
            None,
        ),
    ];
    for (method, path, status, answer, request) in routes {
        let op = operation(&doc, method, &path);
        let response = &op["responses"][status];
        assert!(response.is_object(), "{method} {path} answers no {status}");
        if let Some(answer) = answer {
            let schema = &response["content"]["application/json"]["schema"];
            assert_eq!(ref_name(schema), answer, "{method} {path}");
        }
        match request {
            Some(request) => {
                let schema = &op["requestBody"]["content"]["application/json"]["schema"];
                assert_eq!(ref_name(schema), request, "{method} {path}");
            }
            None => assert!(op["requestBody"].is_null(), "{method} {path} takes a body"),
        }
    }
}

#[test]
fn every_closed_set_has_the_schemas_values() {
    let doc = document();
    let known = |values: &[&str]| values.iter().map(|v| (*v).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        known(PaymentState::KNOWN),
        enum_values(&doc, "PaymentState")
    );
    assert_eq!(
        enum_values(&doc, "PaymentStateCode"),
        (0..PaymentState::KNOWN.len())
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
    );
    assert_eq!(known(SessionType::KNOWN), enum_values(&doc, "SessionType"));
    assert_eq!(
        known(CaptureMethod::KNOWN),
        enum_values(&doc, "CaptureMethod")
    );
    assert_eq!(known(CardBrand::KNOWN), enum_values(&doc, "CardBrand"));
    assert_eq!(
        known(AttemptOutcome::KNOWN),
        enum_values(&doc, "CardAttemptOutcome")
    );
    assert_eq!(
        known(DisputeStatus::KNOWN),
        enum_values(&doc, "DisputeStatus")
    );
    assert_eq!(known(RefundState::KNOWN), enum_values(&doc, "LedgerState"));
    assert_eq!(
        known(DeliveryState::KNOWN),
        enum_values(&doc, "DeliveryState")
    );
    assert_eq!(
        known(CircuitState::KNOWN),
        enum_values(&doc, "CircuitState")
    );
    assert_eq!(known(EventType::KNOWN), enum_values(&doc, "EventType"));
    let mut filter = vec!["*".to_owned()];
    filter.extend(known(EventType::KNOWN));
    assert_eq!(filter, enum_values(&doc, "EventTypeFilter"));
    assert_eq!(
        vec![
            Culture::Es.as_str().to_owned(),
            Culture::En.as_str().to_owned()
        ],
        enum_values(&doc, "Culture")
    );
    let currencies: Vec<String> = Currency::all().map(|c| c.code().to_owned()).collect();
    let mut documented = enum_values(&doc, "CurrencyCode");
    documented.sort();
    assert_eq!(currencies, documented);
}
