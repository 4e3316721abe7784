//! The application built in process over the domain's in-memory adapters, requests sent
//! through `actix_web::test`, and the redactions that make snapshots stable.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::header::HeaderMap;
use actix_web::http::StatusCode;
use actix_web::{test, web};
use async_trait::async_trait;
use checkout_domain::ports::{Unreachable, WebhookSecrets, WebhookStore, WebhookTransport};
use checkout_domain::testing::{SequentialIds, TestKit};
use checkout_domain::usecases::{WebhookPolicy, WebhookPorts, Webhooks};
use checkout_domain::values::TerminalNumber;
use checkout_domain::webhooks::{
    AttemptResult, DeliveryCursor, DeliveryPage, DueDelivery, EndpointHealth, FairShare, NextStep,
    Redelivered, RedeliveryLimits, RevealedSecret, SealedSecret, WebhookBacklog, WebhookEndpoint,
};
use checkout_http::client_address::TrustedProxies;
use checkout_http::dto::JsonEventEncoder;
use checkout_http::health::ReadinessCheck;
use checkout_http::pages::{Pages, PagesConfig};
use checkout_http::rate_limit::AuthLimits;
use checkout_http::AppState;
use time::OffsetDateTime;
use uuid::Uuid;

/// The largest body the test application accepts: 1 KiB, so that a 413 is cheap to provoke.
pub const MAX_BODY_BYTES: usize = 1024;

/// The public base URL the pages are built for.
pub const BASE_URL: &str = "https://checkout.test";

/// The message of the test adapters' unexpected errors.
pub const UNEXPECTED: &str = "the in-process tests issue no webhook secrets";

/// The one event the test store knows: its redeliveries are over their limit, the oldest
/// counted 10 minutes before the request.
pub const OVER_LIMIT_EVENT: &str = "6d0e1d7c-5a1f-4c3e-9f7a-2b8d1e0c4a55";

/// A webhook store with no endpoints and no events: the webhook routes answer their "not
/// found" and empty shapes, which is all these tests read, but for [`OVER_LIMIT_EVENT`].
/// Issuing a secret fails: an unexpected error, or, once `unreachable` is set, one marked as a
/// dependency that cannot be reached (as the PostgreSQL adapter marks a lost database).
struct NoWebhooks {
    unreachable: Arc<AtomicBool>,
}

#[async_trait]
impl WebhookStore for NoWebhooks {
    async fn insert_endpoint(
        &self,
        _: &WebhookEndpoint,
        _: &SealedSecret,
        _: u32,
    ) -> anyhow::Result<bool> {
        anyhow::bail!("the in-process tests keep no webhook endpoints")
    }
    async fn endpoints(&self, _: &TerminalNumber) -> anyhow::Result<Vec<WebhookEndpoint>> {
        Ok(Vec::new())
    }
    async fn endpoint(
        &self,
        _: &TerminalNumber,
        _: Uuid,
    ) -> anyhow::Result<Option<WebhookEndpoint>> {
        Ok(None)
    }
    async fn delete_endpoint(
        &self,
        _: &TerminalNumber,
        _: Uuid,
        _: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        Ok(false)
    }
    async fn rotate_secret(
        &self,
        _: &TerminalNumber,
        _: Uuid,
        _: &SealedSecret,
        _: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        Ok(false)
    }
    async fn claim_due(
        &self,
        _: OffsetDateTime,
        _: OffsetDateTime,
        _: u32,
        _: FairShare,
    ) -> anyhow::Result<Vec<DueDelivery>> {
        Ok(Vec::new())
    }
    async fn endpoint_health(&self, _: Uuid) -> anyhow::Result<Option<EndpointHealth>> {
        Ok(None)
    }
    async fn set_endpoint_health(
        &self,
        _: Uuid,
        _: &EndpointHealth,
        _: &EndpointHealth,
        _: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        Ok(false)
    }
    async fn enable_endpoint(
        &self,
        _: &TerminalNumber,
        _: Uuid,
    ) -> anyhow::Result<Option<WebhookEndpoint>> {
        Ok(None)
    }
    async fn record_attempt(
        &self,
        _: &DueDelivery,
        _: &AttemptResult,
        _: NextStep,
    ) -> anyhow::Result<bool> {
        Ok(false)
    }
    async fn release_claim(&self, _: &DueDelivery) -> anyhow::Result<bool> {
        Ok(false)
    }
    async fn deliveries(
        &self,
        _: &TerminalNumber,
        _: Uuid,
        _: Option<DeliveryCursor>,
        _: u32,
    ) -> anyhow::Result<Option<DeliveryPage>> {
        Ok(None)
    }
    async fn redeliver(
        &self,
        _: &TerminalNumber,
        event: Uuid,
        now: OffsetDateTime,
        _: &RedeliveryLimits,
    ) -> anyhow::Result<Redelivered> {
        if event.to_string() == OVER_LIMIT_EVENT {
            return Ok(Redelivered::OverLimit {
                event_oldest: Some(now - time::Duration::minutes(10)),
                terminal_oldest: None,
            });
        }
        Ok(Redelivered::UnknownEvent)
    }
    async fn backlog(&self, _: OffsetDateTime) -> anyhow::Result<WebhookBacklog> {
        Ok(WebhookBacklog::default())
    }
}

impl WebhookSecrets for NoWebhooks {
    fn issue(&self, _: Uuid) -> anyhow::Result<(RevealedSecret, SealedSecret)> {
        if self.unreachable.load(Ordering::SeqCst) {
            return Err(
                anyhow::anyhow!(UNEXPECTED).context(Unreachable("the store is down".into()))
            );
        }
        anyhow::bail!(UNEXPECTED)
    }
}

#[async_trait]
impl WebhookTransport for NoWebhooks {
    async fn check_url(&self, url: &str) -> Result<String, String> {
        Ok(url.to_owned())
    }
    async fn send(&self, _: &DueDelivery, _: &[u8]) -> AttemptResult {
        unreachable!("the in-process tests run no delivery worker")
    }
}

/// Always ready.
struct Ready;

#[async_trait]
impl ReadinessCheck for Ready {
    async fn check(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The application's state over `kit`'s adapters, with the sandbox's own challenge page.
pub fn state(kit: &TestKit, unreachable: Arc<AtomicBool>) -> web::Data<AppState> {
    let none = Arc::new(NoWebhooks { unreachable });
    let webhooks = Webhooks::new(
        WebhookPorts {
            store: none.clone(),
            secrets: none.clone(),
            transport: none,
            encoder: Arc::new(JsonEventEncoder),
            clock: kit.clock.clone(),
            ids: Arc::new(SequentialIds::default()),
        },
        WebhookPolicy::default(),
    );
    let pages = Pages::new(PagesConfig {
        csrf_secret: [7; 32],
        public_base_url: BASE_URL.to_owned(),
        own_challenge_page: true,
        processor_origins: Vec::new(),
        processing_wait: Duration::from_millis(50),
        proof_of_work: None,
    })
    .expect("the templates compile");
    web::Data::new(AppState {
        checkout: kit.checkout.clone(),
        webhooks,
        jwks: serde_json::json!({ "keys": [] }),
        pages,
        auth_limits: AuthLimits::new(1000, 1000, 2),
        max_body_bytes: MAX_BODY_BYTES,
        readiness: Arc::new(Ready),
        swagger_ui: true,
        trusted_proxies: TrustedProxies::parse("").expect("no proxies"),
        configured_base_url: None,
        sandbox_routes: true,
    })
}

/// An answer, read whole.
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("utf-8 body")
    }

    /// A header's value, or "" when absent.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The CSRF cookie the answer set, as `name=value` for a `Cookie` header.
    pub fn csrf_cookie(&self) -> Option<String> {
        self.cookie("hc_csrf")
    }

    /// The cookie `name` the answer set, as `name=value` for a `Cookie` header.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all("set-cookie")
            .filter_map(|v| v.to_str().ok())
            .find(|c| c.starts_with(&format!("{name}=")))
            .and_then(|c| c.split(';').next())
            .map(str::to_owned)
    }
}

/// The application under test and the in-memory adapters behind it.
pub struct TestApp<S> {
    /// The adapters, to stage the processor's answers and move the clock.
    pub kit: TestKit,
    service: S,
    /// Once set, the webhook secrets fail as an unreachable dependency.
    pub unreachable: Arc<AtomicBool>,
}

/// The application over a fresh [`TestKit`] (terminal `T-1`, client `client-1`).
pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    let kit = TestKit::new();
    let unreachable = Arc::new(AtomicBool::new(false));
    let service = test::init_service(checkout_http::build_app(state(&kit, unreachable.clone())));
    TestApp {
        kit,
        service: service.await,
        unreachable,
    }
}

impl<S, B> TestApp<S>
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    /// Sends `request` and reads the whole answer.
    pub async fn send(&self, request: test::TestRequest) -> Reply {
        let response = test::call_service(&self.service, request.to_request()).await;
        let status = response.status();
        let headers = response.headers().clone();
        let body = test::read_body(response).await.to_vec();
        Reply {
            status,
            headers,
            body,
        }
    }

    /// Deactivates terminal `T-1`.
    pub fn deactivate_terminal(&self) {
        let terminal = TerminalNumber::parse("T-1").expect("a terminal number");
        self.kit.terminals.update(&terminal, |t| t.active = false);
    }

    /// A bearer token of terminal `T-1`, from the token endpoint.
    pub async fn token(&self) -> String {
        let reply = self
            .send(
                test::TestRequest::post()
                    .uri("/api/public/security/auth")
                    .set_json(serde_json::json!({
                        "client_id": "client-1",
                        "client_secret": "secret-1"
                    })),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        reply.json()["token"].as_str().expect("a token").to_owned()
    }

    /// `POST` of JSON `body` to `uri` with `token`.
    pub async fn post_json(&self, uri: &str, token: &str, body: &serde_json::Value) -> Reply {
        self.send(
            test::TestRequest::post()
                .uri(uri)
                .insert_header(("Authorization", format!("Bearer {token}")))
                .set_json(body),
        )
        .await
    }

    /// `GET uri` with `token`.
    pub async fn get_auth(&self, uri: &str, token: &str) -> Reply {
        self.send(
            test::TestRequest::get()
                .uri(uri)
                .insert_header(("Authorization", format!("Bearer {token}"))),
        )
        .await
    }

    /// Creates an integrated checkout of USD 25.50 with reference `reference` and returns its
    /// session id.
    pub async fn start_payment(&self, token: &str, reference: &str) -> String {
        let body = start_payment_body(reference);
        self.create("/pay/api/start-payment", token, &body).await
    }

    /// Creates a payment link of USD 25.50 with reference `reference` and returns its
    /// session id.
    pub async fn payment_link(&self, token: &str, reference: &str) -> String {
        let body = link_body(reference);
        self.create("/pay/api/generate-payment-link", token, &body)
            .await
    }

    /// Posts a create and returns the new session's id.
    async fn create(&self, uri: &str, token: &str, body: &serde_json::Value) -> String {
        let reply = self.post_json(uri, token, body).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        reply.json()["checkoutSessionId"]
            .as_str()
            .expect("an id")
            .to_owned()
    }

    /// `POST` of raw `body` bytes of media type `content_type` to `uri` with `token`.
    pub async fn post_raw(
        &self,
        uri: &str,
        token: &str,
        content_type: &str,
        body: impl Into<Vec<u8>>,
    ) -> Reply {
        self.send(
            test::TestRequest::post()
                .uri(uri)
                .insert_header(("Authorization", format!("Bearer {token}")))
                .insert_header(("Content-Type", content_type.to_owned()))
                .set_payload(body.into()),
        )
        .await
    }
}

/// A valid start-payment body: the README walk-through's order.
pub fn start_payment_body(reference: &str) -> serde_json::Value {
    serde_json::json!({
        "callbackSuccessUrl": "https://merchant.example/ok",
        "callbackFailUrl": "https://merchant.example/fail",
        "callbackBackUrl": "https://merchant.example/cart",
        "totalTransactionAmount": 25.50,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference,
        "generalPurchaseDescription": "Order with one mug",
        "items": [{
            "itemCode": "SKU-1",
            "quantity": 1,
            "description": "Blue mug",
            "amount": 25.50,
            "currencyCode": "USD"
        }]
    })
}

/// A valid payment-link body.
pub fn link_body(reference: &str) -> serde_json::Value {
    serde_json::json!({
        "totalTransactionAmount": 25.50,
        "currencyCode": "USD",
        "transactionReferenceNumber": reference,
        "generalPurchaseDescription": "Invoice 42",
        "userEmail": "payer@example.com",
        "culture": "es"
    })
}

/// Snapshot settings that replace what changes from run to run: request GUIDs (the
/// ProblemDetails `instance`, the error page's support id) and CSRF tokens. Session ids and
/// times need none: the kit's ids are sequential and its clock is manual.
pub fn redacted() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_redaction(".instance", "[instance]");
    settings.add_filter(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
        "[guid]",
    );
    settings.add_filter(
        r#"name="csrfToken" value="[^"]*""#,
        r#"name="csrfToken" value="[csrf]""#,
    );
    // The random id of a re-shown form.
    settings.add_filter(r"form=[A-Za-z0-9_-]{16}", "form=[form]");
    settings.set_prepend_module_to_snapshot(false);
    // `crates/checkout-http/tests/snapshots/`, beside this test binary's folder.
    settings.set_snapshot_path("../snapshots");
    settings
}

impl<S, B> TestApp<S>
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    /// `GET uri` as a browser of language `accept_language` with `cookie` (none when empty).
    pub async fn browse(&self, uri: &str, cookie: &str) -> Reply {
        let mut request = test::TestRequest::get().uri(uri);
        if !cookie.is_empty() {
            request = request.insert_header(("Cookie", cookie.to_owned()));
        }
        self.send(request).await
    }

    /// `POST` of form `fields` to `uri` with `cookie`.
    pub async fn post_form(&self, uri: &str, cookie: &str, fields: &[(&str, &str)]) -> Reply {
        let body = serde_urlencoded::to_string(fields).expect("a form");
        let mut request = test::TestRequest::post()
            .uri(uri)
            .insert_header(("Content-Type", "application/x-www-form-urlencoded"))
            .set_payload(body);
        if !cookie.is_empty() {
            request = request.insert_header(("Cookie", cookie.to_owned()));
        }
        self.send(request).await
    }

    /// Opens `page` (a path with its query), and returns the CSRF cookie and the form's token.
    pub async fn form_of(&self, page: &str) -> (String, String) {
        let reply = self.browse(page, "").await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        let cookie = reply.csrf_cookie().expect("the CSRF cookie");
        let html = reply.text();
        let token = html
            .split(r#"name="csrfToken" value=""#)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("a CSRF token in the form")
            .to_owned();
        (cookie, token)
    }

    /// Posts the card form of session `id` (opened at `page`) with `card_number`, in `lg`.
    pub async fn pay(&self, page: &str, id: &str, lg: &str, card_number: &str) -> Reply {
        self.pay_and_follow(page, id, lg, card_number).await.0
    }

    /// Posts the card form like [`TestApp::pay`], then follows its 303 as a browser would
    /// (with the cookies it holds); returns the post's answer and the page it leads to.
    pub async fn pay_and_follow(
        &self,
        page: &str,
        id: &str,
        lg: &str,
        card_number: &str,
    ) -> (Reply, Reply) {
        let (cookie, token) = self.form_of(page).await;
        let post = self.post_card(&cookie, id, &token, lg, card_number).await;
        assert_eq!(post.status, StatusCode::SEE_OTHER, "{}", post.text());
        let mut cookies = vec![cookie];
        cookies.extend(post.cookie("hc_form"));
        let next = self
            .browse(post.header("location"), &cookies.join("; "))
            .await;
        (post, next)
    }

    /// Posts the card form of session `id` with `cookie` and `token`.
    pub async fn post_card(
        &self,
        cookie: &str,
        id: &str,
        token: &str,
        lg: &str,
        card_number: &str,
    ) -> Reply {
        self.post_form(
            "/pay/process-payment",
            cookie,
            &[
                ("checkoutSessionId", id),
                ("csrfToken", token),
                ("lg", lg),
                ("cardholderName", "Ada Lovelace"),
                ("cardNumber", card_number),
                ("cardExpiry", "12/30"),
                ("cardCvv", "123"),
            ],
        )
        .await
    }
}
