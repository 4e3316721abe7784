//! The service's operations, on [`Client`] and on [`WithOptions`] (the same calls with a
//! caller's idempotency key or operation id).

use reqwest::Method;

use crate::client::{paths, segment, Call, CallOptions, Client, Replay};
use crate::error::Error;
use crate::events::EventFeed;
use crate::money::Money;
use crate::types::{
    AmountBody, CreatedWebhookEndpoint, DeliveryPage, EventPage, EventType, PaymentLinkRequest,
    PaymentLinkResponse, PaymentStatus, Redelivery, RefundList, Reversal, RotatedSecret,
    StartPaymentRequest, StartPaymentResponse, WebhookEndpoint, WebhookEndpointBody,
};

/// The calls of a [`Client`] under one [`CallOptions`], from [`Client::with_options`].
///
/// ```no_run
/// use checkout_client::{CallOptions, Client, Currency, Money};
/// use rust_decimal::Decimal;
///
/// # async fn run(client: Client, session: &str) -> Result<(), checkout_client::Error> {
/// // A refund the merchant can retry after a restart without refunding twice.
/// let refund = client
///     .with_options(CallOptions::new().idempotency_key("ORDER-1001-refund-1"))
///     .refund(session, Money::new(Decimal::new(500, 2), Currency::USD)?)
///     .await?;
/// assert_eq!(refund.kind, "SVC_010");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct WithOptions<'a> {
    client: &'a Client,
    options: CallOptions,
}

/// `/pay/api/payment/{id}{rest}`.
fn payment_path(id: &str, rest: &str) -> String {
    format!("{}/{}{rest}", paths::PAYMENTS, segment(id))
}

/// `/pay/api/webhook-endpoints/{id}{rest}`.
fn endpoint_path(id: &str, rest: &str) -> String {
    format!("{}/{}{rest}", paths::WEBHOOK_ENDPOINTS, segment(id))
}

impl<'a> WithOptions<'a> {
    async fn send<T: serde::de::DeserializeOwned>(&self, call: Call) -> Result<T, Error> {
        self.client.execute(call, &self.options).await?.decode()
    }

    /// `POST /pay/api/start-payment`: creates an integrated checkout session.
    pub async fn start_payment(
        &self,
        request: &StartPaymentRequest,
    ) -> Result<StartPaymentResponse, Error> {
        let call = Call::new(
            "start_payment",
            Method::POST,
            paths::START_PAYMENT.into(),
            Replay::Keyed,
        )
        .json(&request.body()?)?;
        self.send(call).await
    }

    /// `POST /pay/api/generate-payment-link`: creates a payment link.
    pub async fn generate_payment_link(
        &self,
        request: &PaymentLinkRequest,
    ) -> Result<PaymentLinkResponse, Error> {
        let call = Call::new(
            "generate_payment_link",
            Method::POST,
            paths::PAYMENT_LINK.into(),
            Replay::Keyed,
        )
        .json(&request.body()?)?;
        self.send(call).await
    }

    /// `GET /pay/api/payment/{id}`: the session's status record (404 `SVC_007` for an
    /// unknown id or another terminal's session).
    pub async fn payment_status(&self, checkout_session_id: &str) -> Result<PaymentStatus, Error> {
        let call = Call::new(
            "payment_status",
            Method::GET,
            payment_path(checkout_session_id, ""),
            Replay::Safe,
        );
        self.send(call).await
    }

    /// `GET /pay/api/payment?transactionReferenceNumber=`: the terminal's sessions with this
    /// reference, newest first.
    pub async fn payments_by_reference(
        &self,
        reference: &str,
    ) -> Result<Vec<PaymentStatus>, Error> {
        let call = Call::new(
            "payments_by_reference",
            Method::GET,
            paths::PAYMENTS.into(),
            Replay::Safe,
        )
        .query("transactionReferenceNumber", reference.to_owned());
        self.send(call).await
    }

    /// `POST /pay/api/payment/{id}/cancel`: withdraws a session not yet paid (422 `SVC_008`
    /// otherwise).
    pub async fn cancel_payment(&self, checkout_session_id: &str) -> Result<PaymentStatus, Error> {
        let call = Call::new(
            "cancel_payment",
            Method::POST,
            payment_path(checkout_session_id, "/cancel"),
            Replay::Keyed,
        );
        self.send(call).await
    }

    /// `POST /pay/api/payment/{id}/capture`: captures a held authorisation, all of it
    /// (`None`) or part. 422 `SVC_008` when nothing is held, `SVC_011` above the authorised
    /// amount.
    pub async fn capture(
        &self,
        checkout_session_id: &str,
        amount: Option<Money>,
    ) -> Result<PaymentStatus, Error> {
        let mut call = Call::new(
            "capture",
            Method::POST,
            payment_path(checkout_session_id, "/capture"),
            Replay::Keyed,
        );
        if let Some(amount) = amount {
            call = call.json(&AmountBody {
                amount: Some(amount.amount()),
            })?;
        }
        self.send(call).await
    }

    /// `POST /pay/api/payment/{id}/void`: releases a held authorisation (`SVC_010`).
    pub async fn void(&self, checkout_session_id: &str) -> Result<Reversal, Error> {
        let call = Call::new(
            "void",
            Method::POST,
            payment_path(checkout_session_id, "/void"),
            Replay::Keyed,
        );
        self.send(call).await
    }

    /// `POST /pay/api/payment/{id}/refunds`: refunds part or all of a captured payment
    /// (`SVC_010`). 422 `SVC_011` above what can still be refunded, `SVC_009` when the
    /// processor refused or did not confirm.
    pub async fn refund(
        &self,
        checkout_session_id: &str,
        amount: Money,
    ) -> Result<Reversal, Error> {
        let call = Call::new(
            "refund",
            Method::POST,
            payment_path(checkout_session_id, "/refunds"),
            Replay::Keyed,
        )
        .json(&AmountBody {
            amount: Some(amount.amount()),
        })?;
        self.send(call).await
    }

    /// `GET /pay/api/payment/{id}/refunds`: the session's refunds.
    pub async fn refunds(&self, checkout_session_id: &str) -> Result<RefundList, Error> {
        let call = Call::new(
            "refunds",
            Method::GET,
            payment_path(checkout_session_id, "/refunds"),
            Replay::Safe,
        );
        self.send(call).await
    }

    /// `GET /pay/api/events`: one page of the terminal's events after the cursor `after`
    /// (from the first event when `None`), at most `limit` (1 to 100; the service's default
    /// is 50). [`Client::events`] reads on page after page.
    pub async fn events_page(
        &self,
        after: Option<&str>,
        limit: Option<u32>,
    ) -> Result<EventPage, Error> {
        let mut call = Call::new(
            "events_page",
            Method::GET,
            paths::EVENTS.into(),
            Replay::Safe,
        );
        if let Some(after) = after {
            call = call.query("after", after.to_owned());
        }
        if let Some(limit) = limit {
            call = call.query("limit", limit.to_string());
        }
        self.send(call).await
    }

    /// `POST /pay/api/events/{id}/redeliver`: sends an event to the webhook endpoints again.
    pub async fn redeliver_event(&self, event_id: &str) -> Result<Redelivery, Error> {
        let call = Call::new(
            "redeliver_event",
            Method::POST,
            format!("{}/{}/redeliver", paths::EVENTS, segment(event_id)),
            Replay::Once,
        );
        self.send(call).await
    }

    /// `POST /pay/api/webhook-endpoints`: registers `url` for `events` (`None`: every type,
    /// including types added later). The answer carries the signing secret, shown only
    /// here. Not deduplicated by the service: sent again only when it was certainly not
    /// received.
    pub async fn create_webhook_endpoint(
        &self,
        url: &str,
        events: Option<&[EventType]>,
    ) -> Result<CreatedWebhookEndpoint, Error> {
        let body = WebhookEndpointBody {
            url,
            events: events.map(|types| types.iter().map(EventType::as_str).collect()),
        };
        let call = Call::new(
            "create_webhook_endpoint",
            Method::POST,
            paths::WEBHOOK_ENDPOINTS.into(),
            Replay::Once,
        )
        .json(&body)?;
        self.send(call).await
    }

    /// `GET /pay/api/webhook-endpoints`: the terminal's endpoints, oldest first.
    pub async fn webhook_endpoints(&self) -> Result<Vec<WebhookEndpoint>, Error> {
        let call = Call::new(
            "webhook_endpoints",
            Method::GET,
            paths::WEBHOOK_ENDPOINTS.into(),
            Replay::Safe,
        );
        self.send(call).await
    }

    /// `DELETE /pay/api/webhook-endpoints/{id}`: stops an endpoint. (A retry after a lost
    /// answer may be answered 404 when the first request did delete it.)
    pub async fn delete_webhook_endpoint(&self, endpoint_id: &str) -> Result<(), Error> {
        let call = Call::new(
            "delete_webhook_endpoint",
            Method::DELETE,
            endpoint_path(endpoint_id, ""),
            Replay::Safe,
        );
        self.client.execute(call, &self.options).await.map(drop)
    }

    /// `POST /pay/api/webhook-endpoints/{id}/rotate-secret`: a new signing secret; the old
    /// one keeps signing beside it until `previousSecretExpiresDateTime`. Sent again only
    /// when it was certainly not received.
    pub async fn rotate_webhook_secret(&self, endpoint_id: &str) -> Result<RotatedSecret, Error> {
        let call = Call::new(
            "rotate_webhook_secret",
            Method::POST,
            endpoint_path(endpoint_id, "/rotate-secret"),
            Replay::Once,
        );
        self.send(call).await
    }

    /// `GET /pay/api/webhook-endpoints/{id}/deliveries`: a page of the endpoint's deliveries
    /// log, newest first, with every attempt and the endpoint itself; `after` is the
    /// previous page's cursor (`None`: the newest).
    pub async fn webhook_deliveries(
        &self,
        endpoint_id: &str,
        after: Option<&str>,
    ) -> Result<DeliveryPage, Error> {
        let path = endpoint_path(endpoint_id, "/deliveries");
        let mut call = Call::new("webhook_deliveries", Method::GET, path, Replay::Safe);
        if let Some(after) = after {
            call = call.query("after", after.to_owned());
        }
        self.send(call).await
    }

    /// `POST /pay/api/webhook-endpoints/{id}/enable`: enables again an endpoint that was
    /// disabled after failing for days (and closes its circuit).
    pub async fn enable_webhook_endpoint(
        &self,
        endpoint_id: &str,
    ) -> Result<WebhookEndpoint, Error> {
        let call = Call::new(
            "enable_webhook_endpoint",
            Method::POST,
            endpoint_path(endpoint_id, "/enable"),
            Replay::Safe,
        );
        self.send(call).await
    }
}

impl Client {
    /// The calls of this client with `options` (an idempotency key, an operation id).
    pub fn with_options(&self, options: CallOptions) -> WithOptions<'_> {
        WithOptions {
            client: self,
            options,
        }
    }

    fn plain(&self) -> WithOptions<'_> {
        self.with_options(CallOptions::new())
    }

    /// Creates an integrated checkout session ([`WithOptions::start_payment`]).
    pub async fn start_payment(
        &self,
        request: &StartPaymentRequest,
    ) -> Result<StartPaymentResponse, Error> {
        self.plain().start_payment(request).await
    }

    /// Creates a payment link ([`WithOptions::generate_payment_link`]).
    pub async fn generate_payment_link(
        &self,
        request: &PaymentLinkRequest,
    ) -> Result<PaymentLinkResponse, Error> {
        self.plain().generate_payment_link(request).await
    }

    /// A session's status record ([`WithOptions::payment_status`]).
    pub async fn payment_status(&self, checkout_session_id: &str) -> Result<PaymentStatus, Error> {
        self.plain().payment_status(checkout_session_id).await
    }

    /// The sessions with a reference ([`WithOptions::payments_by_reference`]).
    pub async fn payments_by_reference(
        &self,
        reference: &str,
    ) -> Result<Vec<PaymentStatus>, Error> {
        self.plain().payments_by_reference(reference).await
    }

    /// Withdraws a session not yet paid ([`WithOptions::cancel_payment`]).
    pub async fn cancel_payment(&self, checkout_session_id: &str) -> Result<PaymentStatus, Error> {
        self.plain().cancel_payment(checkout_session_id).await
    }

    /// Captures a held authorisation ([`WithOptions::capture`]).
    pub async fn capture(
        &self,
        checkout_session_id: &str,
        amount: Option<Money>,
    ) -> Result<PaymentStatus, Error> {
        self.plain().capture(checkout_session_id, amount).await
    }

    /// Releases a held authorisation ([`WithOptions::void`]).
    pub async fn void(&self, checkout_session_id: &str) -> Result<Reversal, Error> {
        self.plain().void(checkout_session_id).await
    }

    /// Refunds a captured payment ([`WithOptions::refund`]).
    pub async fn refund(
        &self,
        checkout_session_id: &str,
        amount: Money,
    ) -> Result<Reversal, Error> {
        self.plain().refund(checkout_session_id, amount).await
    }

    /// A session's refunds ([`WithOptions::refunds`]).
    pub async fn refunds(&self, checkout_session_id: &str) -> Result<RefundList, Error> {
        self.plain().refunds(checkout_session_id).await
    }

    /// One page of events ([`WithOptions::events_page`]).
    pub async fn events_page(
        &self,
        after: Option<&str>,
        limit: Option<u32>,
    ) -> Result<EventPage, Error> {
        self.plain().events_page(after, limit).await
    }

    /// The events feed from the cursor `after` (from the first event when `None`): an
    /// [`EventFeed`] that keeps its cursor, to read on and to resume from.
    pub fn events(&self, after: Option<String>) -> EventFeed {
        EventFeed::new(self.clone(), after)
    }

    /// Sends an event again ([`WithOptions::redeliver_event`]).
    pub async fn redeliver_event(&self, event_id: &str) -> Result<Redelivery, Error> {
        self.plain().redeliver_event(event_id).await
    }

    /// Registers a webhook endpoint ([`WithOptions::create_webhook_endpoint`]).
    pub async fn create_webhook_endpoint(
        &self,
        url: &str,
        events: Option<&[EventType]>,
    ) -> Result<CreatedWebhookEndpoint, Error> {
        self.plain().create_webhook_endpoint(url, events).await
    }

    /// The terminal's webhook endpoints ([`WithOptions::webhook_endpoints`]).
    pub async fn webhook_endpoints(&self) -> Result<Vec<WebhookEndpoint>, Error> {
        self.plain().webhook_endpoints().await
    }

    /// Stops a webhook endpoint ([`WithOptions::delete_webhook_endpoint`]).
    pub async fn delete_webhook_endpoint(&self, endpoint_id: &str) -> Result<(), Error> {
        self.plain().delete_webhook_endpoint(endpoint_id).await
    }

    /// Rotates an endpoint's secret ([`WithOptions::rotate_webhook_secret`]).
    pub async fn rotate_webhook_secret(&self, endpoint_id: &str) -> Result<RotatedSecret, Error> {
        self.plain().rotate_webhook_secret(endpoint_id).await
    }

    /// A page of an endpoint's deliveries log ([`WithOptions::webhook_deliveries`]).
    pub async fn webhook_deliveries(
        &self,
        endpoint_id: &str,
        after: Option<&str>,
    ) -> Result<DeliveryPage, Error> {
        self.plain().webhook_deliveries(endpoint_id, after).await
    }

    /// Enables a disabled endpoint again ([`WithOptions::enable_webhook_endpoint`]).
    pub async fn enable_webhook_endpoint(
        &self,
        endpoint_id: &str,
    ) -> Result<WebhookEndpoint, Error> {
        self.plain().enable_webhook_endpoint(endpoint_id).await
    }
}
