//! The fake Stripe, spoken to over plain HTTP: Stripe's shapes, state rules and idempotency,
//! the lagging list, the hosted 3DS page and the injected faults.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use std::time::{Duration, Instant};

use checkout_processor::testing::fake_stripe::{Call, FakeStripe, FakeStripeConfig, Fault, When};
use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::Value;

const KEY: &str = "sk_test_fake";
const VISA: &str = "4242424242424242";
const AUTHORISE_ONLY: &str = "4000000000000077";
const DECLINED: &str = "4000000000000002";
const NO_FUNDS: &str = "4000000000009995";
const THREE_DS: &str = "4000002760003184";
const THREE_DS_2: &str = "4000000000003220";
const PROCESSOR_ERROR: &str = "4000000000000119";
const REFUND_FAILS: &str = "4000000000005126";

/// A fake whose list does not lag, for tests about something else.
async fn fake() -> FakeStripe {
    fake_with(Duration::ZERO).await
}

async fn fake_with(list_delay: Duration) -> FakeStripe {
    FakeStripe::start(FakeStripeConfig {
        list_delay,
        ..FakeStripeConfig::default()
    })
    .await
}

/// A plain HTTP client of the fake.
struct Api {
    http: reqwest::Client,
    base: url::Url,
    key: Option<String>,
}

/// An answer: status, headers and body (JSON, else the text as a JSON string).
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn replayed(&self) -> bool {
        self.header("idempotent-replayed") == Some("true")
    }

    fn id(&self) -> String {
        self.body["id"].as_str().expect("an id").to_owned()
    }

    fn text(&self) -> &str {
        self.body.as_str().unwrap_or_default()
    }
}

impl Api {
    fn new(fake: &FakeStripe) -> Api {
        Api::with(fake, Some(KEY), Duration::from_secs(10))
    }

    fn with(fake: &FakeStripe, key: Option<&str>, timeout: Duration) -> Api {
        Api {
            http: reqwest::Client::builder()
                .timeout(timeout)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: fake.base_url.clone(),
            key: key.map(str::to_owned),
        }
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        form: &[(&str, &str)],
        idempotency_key: Option<&str>,
    ) -> reqwest::Result<Answer> {
        let mut request = self
            .http
            .request(method.clone(), self.base.join(path).unwrap());
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        if let Some(key) = idempotency_key {
            request = request.header("Idempotency-Key", key);
        }
        if method == Method::POST {
            request = request.form(form);
        }
        let response = request.send().await?;
        let (status, headers) = (response.status().as_u16(), response.headers().clone());
        let text = response.text().await?;
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok(Answer {
            status,
            headers,
            body,
        })
    }

    async fn post(&self, path: &str, form: &[(&str, &str)], key: Option<&str>) -> Answer {
        self.send(Method::POST, path, form, key).await.unwrap()
    }

    async fn get(&self, path: &str) -> Answer {
        self.send(Method::GET, path, &[], None).await.unwrap()
    }

    /// Creates a card PaymentMethod and returns its id.
    async fn card(&self, number: &str) -> String {
        let answer = self
            .post("v1/payment_methods", &card_form(number), None)
            .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        answer.id()
    }

    /// Creates a PaymentMethod for `number`, then a confirmed intent of 10.00 USD with it.
    async fn pay(&self, number: &str, extra: &[(&str, &str)], key: Option<&str>) -> Answer {
        let pm = self.card(number).await;
        let mut form = intent_form(&pm);
        form.extend_from_slice(extra);
        self.post("v1/payment_intents", &form, key).await
    }
}

fn card_form(number: &str) -> Vec<(&str, &str)> {
    vec![
        ("type", "card"),
        ("card[number]", number),
        ("card[exp_month]", "12"),
        ("card[exp_year]", "2099"),
        ("card[cvc]", "123"),
        ("billing_details[name]", "Ada Lovelace"),
    ]
}

fn intent_form(pm: &str) -> Vec<(&str, &str)> {
    vec![
        ("amount", "1000"),
        ("currency", "usd"),
        ("payment_method", pm),
        ("payment_method_types[0]", "card"),
        ("confirm", "true"),
        ("metadata[attempt]", "a1"),
    ]
}

fn assert_error(answer: &Answer, status: u16, kind: &str, code: Option<&str>) {
    assert_eq!(answer.status, status, "{}", answer.body);
    assert_eq!(answer.body["error"]["type"], kind, "{}", answer.body);
    assert!(
        answer.body["error"]["message"].is_string(),
        "{}",
        answer.body
    );
    if let Some(code) = code {
        assert_eq!(answer.body["error"]["code"], code, "{}", answer.body);
    }
}

/// Waits until `check` holds (the fake's work may finish just after a client gave up).
async fn eventually(check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(3), "never happened");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// --- Authentication, payment methods, shapes -------------------------------------------------

#[tokio::test]
async fn a_request_without_a_bearer_key_is_refused_with_401() {
    let fake = fake().await;
    for key in [None, Some("")] {
        let api = Api::with(&fake, key, Duration::from_secs(5));
        let answer = api
            .post("v1/payment_methods", &card_form(VISA), Some("k1"))
            .await;
        assert_error(&answer, 401, "invalid_request_error", None);
    }
    assert_eq!(fake.executions(Call::CreatePaymentMethod), 0);
    // Not saved under the key: a retry with a key executes.
    let answer = Api::new(&fake)
        .post("v1/payment_methods", &card_form(VISA), Some("k1"))
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(!answer.replayed());
}

#[tokio::test]
async fn a_payment_method_shows_brand_and_last4_and_no_card_data_is_recorded() {
    let fake = fake().await;
    let answer = Api::new(&fake)
        .post("v1/payment_methods", &card_form(VISA), None)
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.id().starts_with("pm_"));
    assert_eq!(answer.body["object"], "payment_method");
    assert_eq!(answer.body["type"], "card");
    let card = &answer.body["card"];
    assert_eq!(
        (
            &card["brand"],
            &card["last4"],
            &card["exp_month"],
            &card["exp_year"]
        ),
        (&"visa".into(), &"4242".into(), &12.into(), &2099.into())
    );
    assert!(!answer.body.to_string().contains(VISA));

    let requests = fake.requests();
    let request = &requests[0];
    assert_eq!(request.call, Some(Call::CreatePaymentMethod));
    assert_eq!(request.field("card[number]"), Some("<redacted>"));
    assert_eq!(request.field("card[cvc]"), Some("<redacted>"));
    assert_eq!(request.field("card[exp_month]"), Some("12"));
    assert_eq!(request.header("authorization"), Some("Bearer sk_test_fake"));
    let printed = format!("{requests:?}");
    assert!(
        !printed.contains(VISA) && !printed.contains("123"),
        "{printed}"
    );
}

#[tokio::test]
async fn a_bad_card_is_refused_when_its_payment_method_is_created() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let mut form = card_form("4242424242424241");
    let answer = api.post("v1/payment_methods", &form, None).await;
    assert_error(&answer, 402, "card_error", Some("incorrect_number"));
    form[1].1 = VISA;
    form[3].1 = "2001";
    let answer = api.post("v1/payment_methods", &form, None).await;
    assert_error(&answer, 402, "card_error", Some("invalid_expiry_year"));
    form.remove(1);
    let answer = api.post("v1/payment_methods", &form, None).await;
    assert_error(
        &answer,
        400,
        "invalid_request_error",
        Some("parameter_missing"),
    );
    assert_eq!(answer.body["error"]["param"], "card[number]");
}

#[tokio::test]
async fn an_approved_card_succeeds_with_stripes_intent_fields() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let answer = api.pay(VISA, &[("metadata[session]", "s1")], None).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let intent = &answer.body;
    let id = answer.id();
    assert!(id.starts_with("pi_"));
    assert_eq!(intent["object"], "payment_intent");
    assert_eq!(intent["status"], "succeeded");
    assert_eq!(intent["capture_method"], "automatic");
    assert_eq!(intent["currency"], "usd");
    assert_eq!(
        (
            &intent["amount"],
            &intent["amount_received"],
            &intent["amount_capturable"]
        ),
        (&1000.into(), &1000.into(), &0.into())
    );
    assert!(intent["client_secret"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{id}_secret_")));
    assert_eq!(intent["metadata"]["attempt"], "a1");
    assert_eq!(intent["metadata"]["session"], "s1");
    assert!(intent["last_payment_error"].is_null() && intent["next_action"].is_null());
    assert!(intent["created"].as_i64().unwrap() > 1_600_000_000);
    assert!(intent["payment_method"]
        .as_str()
        .unwrap()
        .starts_with("pm_"));

    let retrieved = api.get(&format!("v1/payment_intents/{id}")).await;
    assert_eq!(retrieved.status, 200);
    assert_eq!(&retrieved.body, intent);
    let snapshot = fake.intent(&id).unwrap();
    assert_eq!(
        (snapshot.status.as_str(), snapshot.amount_received),
        ("succeeded", 1000)
    );
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 1);
    assert_eq!(fake.charged_intents_for("attempt", "other"), 0);
}

#[tokio::test]
async fn manual_capture_and_the_0077_card_authorise_without_capturing() {
    let fake = fake().await;
    let api = Api::new(&fake);
    for (card, extra) in [
        (VISA, vec![("capture_method", "manual")]),
        (AUTHORISE_ONLY, vec![]),
    ] {
        let answer = api.pay(card, &extra, None).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(answer.body["status"], "requires_capture");
        assert_eq!(answer.body["amount_capturable"], 1000);
        assert_eq!(answer.body["amount_received"], 0);
    }
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 2);
}

#[tokio::test]
async fn a_declined_card_answers_402_with_the_intent_and_keeps_the_error() {
    let fake = fake().await;
    let api = Api::new(&fake);
    for (card, decline_code) in [
        (DECLINED, "generic_decline"),
        (NO_FUNDS, "insufficient_funds"),
    ] {
        let answer = api.pay(card, &[], None).await;
        assert_error(&answer, 402, "card_error", Some("card_declined"));
        let error = &answer.body["error"];
        assert_eq!(error["decline_code"], decline_code);
        let intent = &error["payment_intent"];
        assert_eq!(intent["status"], "requires_payment_method");
        assert_eq!(intent["last_payment_error"]["decline_code"], decline_code);
        assert!(intent["last_payment_error"].get("payment_intent").is_none());
        let stored = fake.intent(intent["id"].as_str().unwrap()).unwrap();
        assert_eq!(
            (stored.status.as_str(), stored.amount_received),
            ("requires_payment_method", 0)
        );
    }
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 0);
}

#[tokio::test]
async fn card_0119_answers_500_and_creates_nothing() {
    let fake = fake().await;
    let answer = Api::new(&fake).pay(PROCESSOR_ERROR, &[], None).await;
    assert_error(&answer, 500, "api_error", None);
    assert!(fake.intents().is_empty());
}

#[tokio::test]
async fn without_confirm_the_intent_waits_for_confirmation() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(VISA).await;
    let mut form = intent_form(&pm);
    form.retain(|(name, _)| *name != "confirm");
    let answer = api.post("v1/payment_intents", &form, None).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["status"], "requires_confirmation");
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 0);
}

#[tokio::test]
async fn invalid_requests_create_nothing_and_are_not_saved_under_their_key() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(VISA).await;
    let refusals: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (intent_form("pm_unknown"), "payment_method"),
        (
            vec![
                ("amount", "0"),
                ("currency", "usd"),
                ("payment_method", &pm),
                ("confirm", "true"),
            ],
            "amount",
        ),
        (
            vec![
                ("amount", "ten"),
                ("currency", "usd"),
                ("payment_method", &pm),
            ],
            "amount",
        ),
        (
            vec![("amount", "1000"), ("currency", "usd"), ("confirm", "true")],
            "payment_method",
        ),
        (
            vec![
                ("amount", "1000"),
                ("currency", "usd"),
                ("payment_method", &pm),
                ("colour", "red"),
            ],
            "colour",
        ),
    ];
    for (form, param) in refusals {
        let answer = api.post("v1/payment_intents", &form, Some("key-1")).await;
        assert_error(&answer, 400, "invalid_request_error", None);
        assert_eq!(answer.body["error"]["param"], param, "{}", answer.body);
    }
    assert!(fake.intents().is_empty());
    assert_eq!(fake.executions(Call::CreateIntent), 0);

    // The same key then runs afresh, with other parameters.
    let answer = api
        .post("v1/payment_intents", &intent_form(&pm), Some("key-1"))
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(!answer.replayed());

    // A JSON body is refused: Stripe takes forms only.
    let json = api
        .http
        .post(api.base.join("v1/payment_intents").unwrap())
        .bearer_auth(KEY)
        .json(&serde_json::json!({ "amount": 1000 }))
        .send()
        .await
        .unwrap();
    assert_eq!(json.status().as_u16(), 400);
    assert_eq!(fake.intents().len(), 1);
}

#[tokio::test]
async fn a_payment_method_pays_only_once() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(VISA).await;
    let first = api
        .post("v1/payment_intents", &intent_form(&pm), None)
        .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let second = api
        .post("v1/payment_intents", &intent_form(&pm), None)
        .await;
    assert_error(&second, 400, "invalid_request_error", None);
    assert_eq!(fake.intents().len(), 1);
}

#[tokio::test]
async fn an_unknown_intent_is_404_resource_missing() {
    let fake = fake().await;
    let answer = Api::new(&fake).get("v1/payment_intents/pi_nope").await;
    assert_error(
        &answer,
        404,
        "invalid_request_error",
        Some("resource_missing"),
    );
}

// --- Idempotency -----------------------------------------------------------------------------

#[tokio::test]
async fn the_same_key_and_parameters_replay_the_first_answer_without_a_second_charge() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(VISA).await;
    let form = intent_form(&pm);
    let first = api
        .post("v1/payment_intents", &form, Some("attempt-1"))
        .await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(!first.replayed());
    let mut reordered = form.clone();
    reordered.reverse();
    for form in [&form, &reordered] {
        let again = api
            .post("v1/payment_intents", form, Some("attempt-1"))
            .await;
        assert_eq!(again.status, 200);
        assert_eq!(again.body, first.body);
        assert!(again.replayed());
        assert_eq!(again.header("original-request"), first.header("request-id"));
    }
    assert_eq!(fake.executions(Call::CreateIntent), 1);
    assert_eq!(fake.intents().len(), 1);
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 1);
}

#[tokio::test]
async fn the_same_key_with_other_parameters_is_an_idempotency_error() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(VISA).await;
    let mut form = intent_form(&pm);
    api.post("v1/payment_intents", &form, Some("attempt-1"))
        .await;
    form[0].1 = "2000";
    let answer = api
        .post("v1/payment_intents", &form, Some("attempt-1"))
        .await;
    assert_error(&answer, 400, "idempotency_error", None);
    let message = answer.body["error"]["message"].as_str().unwrap();
    assert!(message
        .starts_with("Keys for idempotent requests can only be used with the same parameters"));
    assert_eq!(fake.intents().len(), 1);
}

#[tokio::test]
async fn keys_are_scoped_per_api_key() {
    let fake = fake().await;
    let (one, other) = (
        Api::new(&fake),
        Api::with(&fake, Some("sk_test_other"), Duration::from_secs(5)),
    );
    let pm = one.card(VISA).await;
    let pm2 = one.card(VISA).await;
    let first = one
        .post("v1/payment_intents", &intent_form(&pm), Some("k"))
        .await;
    let second = other
        .post("v1/payment_intents", &intent_form(&pm2), Some("k"))
        .await;
    assert!(!second.replayed());
    assert_ne!(first.id(), second.id());
}

#[tokio::test]
async fn a_saved_decline_is_replayed() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(DECLINED).await;
    let first = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k"))
        .await;
    assert_eq!(first.status, 402);
    let again = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k"))
        .await;
    assert_eq!((again.status, &again.body), (402, &first.body));
    assert!(again.replayed());
    assert_eq!(fake.executions(Call::CreateIntent), 1);
}

#[tokio::test]
async fn a_key_still_executing_gets_409_then_the_first_answer() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(VISA).await;
    fake.inject(
        Call::CreateIntent,
        When::Before,
        Fault::Delay(Duration::from_millis(1000)),
    );
    let form: Vec<(String, String)> = intent_form(&pm)
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    let (http, url) = (
        api.http.clone(),
        api.base.join("v1/payment_intents").unwrap(),
    );
    let first = tokio::spawn(async move {
        let response = http
            .post(url)
            .bearer_auth(KEY)
            .header("Idempotency-Key", "k")
            .form(&form)
            .send()
            .await
            .unwrap();
        (
            response.status().as_u16(),
            response.json::<Value>().await.unwrap(),
        )
    });
    // Arrival and the key's claim happen in one step of the fake's task, on this thread.
    eventually(|| {
        fake.requests()
            .iter()
            .any(|r| r.call == Some(Call::CreateIntent))
    })
    .await;
    let concurrent = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k"))
        .await;
    assert_error(&concurrent, 409, "idempotency_error", None);
    assert!(fake.intents().is_empty(), "the first request is still held");

    let (status, body) = first.await.unwrap();
    assert_eq!(status, 200, "{body}");
    let replay = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k"))
        .await;
    assert_eq!(replay.body, body);
    assert!(replay.replayed());
    assert_eq!(fake.executions(Call::CreateIntent), 1);
}

#[tokio::test]
async fn an_answer_lost_to_a_client_timeout_is_replayed_not_repeated() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let impatient = Api::with(&fake, Some(KEY), Duration::from_millis(200));
    let pm = api.card(VISA).await;
    fake.inject(
        Call::CreateIntent,
        When::After,
        Fault::Delay(Duration::from_millis(600)),
    );
    let lost = impatient
        .send(
            Method::POST,
            "v1/payment_intents",
            &intent_form(&pm),
            Some("k"),
        )
        .await;
    assert!(lost.is_err_and(|e| e.is_timeout()));
    eventually(|| fake.intents().len() == 1).await;
    assert_eq!(fake.intents()[0].status, "succeeded");

    let replay = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k"))
        .await;
    assert_eq!(replay.status, 200);
    assert!(replay.replayed());
    assert_eq!(replay.id(), fake.intents()[0].id);
    assert_eq!(fake.intents().len(), 1);
    assert_eq!(fake.executions(Call::CreateIntent), 1);
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 1);
}

#[tokio::test]
async fn a_500_after_the_work_is_saved_under_the_key_and_one_before_is_not() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(VISA).await;
    fake.inject(Call::CreateIntent, When::After, Fault::Status(500));
    let answer = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k1"))
        .await;
    assert_error(&answer, 500, "api_error", None);
    assert_eq!(fake.intents().len(), 1, "the work was done");
    let replay = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k1"))
        .await;
    assert_error(&replay, 500, "api_error", None);
    assert!(replay.replayed());

    let pm = api.card(VISA).await;
    fake.inject(Call::CreateIntent, When::Before, Fault::Status(503));
    let answer = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k2"))
        .await;
    assert_error(&answer, 503, "api_error", None);
    assert_eq!(fake.intents().len(), 1, "nothing was done");
    let retry = api
        .post("v1/payment_intents", &intent_form(&pm), Some("k2"))
        .await;
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert!(!retry.replayed());
    assert_eq!(fake.executions(Call::CreateIntent), 2);
}

#[tokio::test]
async fn connection_faults_before_the_work_do_nothing_and_after_it_do_it() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let pm = api.card(VISA).await;
    for fault in [Fault::Reset, Fault::Close] {
        fake.inject(Call::CreateIntent, When::Before, fault);
        let lost = api
            .send(
                Method::POST,
                "v1/payment_intents",
                &intent_form(&pm),
                Some("k"),
            )
            .await;
        assert!(lost.is_err(), "{fault:?}");
        assert!(fake.intents().is_empty());
    }
    fake.inject(Call::CreateIntent, When::After, Fault::Close);
    let lost = api
        .send(
            Method::POST,
            "v1/payment_intents",
            &intent_form(&pm),
            Some("k"),
        )
        .await;
    assert!(lost.is_err());
    assert_eq!(fake.intents().len(), 1);

    let pm = api.card(VISA).await;
    let impatient = Api::with(&fake, Some(KEY), Duration::from_millis(300));
    fake.inject(Call::CreateIntent, When::After, Fault::Hang);
    let lost = impatient
        .send(
            Method::POST,
            "v1/payment_intents",
            &intent_form(&pm),
            Some("k2"),
        )
        .await;
    assert!(lost.is_err_and(|e| e.is_timeout()));
    eventually(|| fake.intents().len() == 2).await;
    assert_eq!(fake.executions(Call::CreateIntent), 2);
}

#[tokio::test]
async fn faults_are_queued_per_call_in_order_and_can_be_permanent() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let id = api.pay(VISA, &[], None).await.id();
    let path = format!("v1/payment_intents/{id}");
    fake.inject(Call::RetrieveIntent, When::Before, Fault::Status(502));
    fake.inject(Call::RetrieveIntent, When::Before, Fault::Status(503));
    fake.inject(Call::ListIntents, When::Before, Fault::Status(504));
    assert_eq!(api.get(&path).await.status, 502);
    assert_eq!(api.get(&path).await.status, 503);
    assert_eq!(api.get(&path).await.status, 200);
    assert_eq!(api.get("v1/payment_intents").await.status, 504);

    fake.inject_always(Call::RetrieveIntent, When::Before, Fault::Status(429));
    assert_eq!(api.get(&path).await.status, 429);
    assert_eq!(api.get(&path).await.status, 429);
    fake.clear_faults();
    assert_eq!(api.get(&path).await.status, 200);
}

#[tokio::test]
async fn dropping_the_fake_closes_even_a_hung_connection() {
    let fake = fake().await;
    let api = Api::new(&fake);
    fake.inject(Call::ListIntents, When::Before, Fault::Hang);
    let hung = tokio::spawn(async move {
        let start = Instant::now();
        let answer = api.send(Method::GET, "v1/payment_intents", &[], None).await;
        (answer.is_err(), start.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let base = fake.base_url.clone();
    drop(fake);
    let (failed, waited) = hung.await.unwrap();
    assert!(failed && waited < Duration::from_secs(5), "{waited:?}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let port = base.port().unwrap();
    assert!(tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err());
}

#[test]
fn requests_are_classified_into_calls() {
    let cases = [
        (
            "POST",
            "/v1/payment_methods",
            Some(Call::CreatePaymentMethod),
        ),
        ("POST", "/v1/payment_intents", Some(Call::CreateIntent)),
        (
            "GET",
            "/v1/payment_intents/pi_1",
            Some(Call::RetrieveIntent),
        ),
        (
            "GET",
            "/v1/payment_intents?limit=3",
            Some(Call::ListIntents),
        ),
        (
            "POST",
            "/v1/payment_intents/pi_1/cancel",
            Some(Call::CancelIntent),
        ),
        (
            "POST",
            "/v1/payment_intents/pi_1/capture",
            Some(Call::CaptureIntent),
        ),
        ("POST", "/v1/refunds", Some(Call::CreateRefund)),
        (
            "GET",
            "/v1/refunds?payment_intent=pi_1",
            Some(Call::ListRefunds),
        ),
        ("GET", "/v1/payment_intents/pi_1/cancel", None),
        ("POST", "/v1/payment_intents/pi_1/_authenticate", None),
        ("GET", "/3ds/pi_1", None),
    ];
    for (method, path, call) in cases {
        assert_eq!(Call::classify(method, path), call, "{method} {path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_connections_are_served() {
    let fake = fake().await;
    let mut payments = tokio::task::JoinSet::new();
    for n in 0..40 {
        let api = Api::new(&fake);
        payments.spawn(async move {
            let key = format!("attempt-{n}");
            api.pay(VISA, &[], Some(&key)).await.status
        });
    }
    while let Some(status) = payments.join_next().await {
        assert_eq!(status.unwrap(), 200);
    }
    assert_eq!(fake.intents().len(), 40);
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 40);
}

// --- The list ------------------------------------------------------------------------------

#[tokio::test]
async fn the_list_lags_behind_writes() {
    let delay = Duration::from_millis(1000);
    let fake = fake_with(delay).await;
    let api = Api::new(&fake);
    let id = api
        .pay(VISA, &[("capture_method", "manual")], None)
        .await
        .id();
    let listed = |answer: &Answer| -> Option<Value> {
        answer.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id.as_str())
            .cloned()
    };
    let list = api.get("v1/payment_intents").await;
    assert_eq!(list.body["object"], "list");
    assert_eq!(list.body["url"], "/v1/payment_intents");
    assert_eq!(listed(&list), None, "too young to be listed");
    assert_eq!(
        api.get(&format!("v1/payment_intents/{id}")).await.status,
        200
    );

    tokio::time::sleep(delay + Duration::from_millis(100)).await;
    let shown = listed(&api.get("v1/payment_intents").await).expect("listed by now");
    assert_eq!(shown["status"], "requires_capture");

    let canceled = api
        .post(&format!("v1/payment_intents/{id}/cancel"), &[], None)
        .await;
    assert_eq!(canceled.body["status"], "canceled");
    let stale = listed(&api.get("v1/payment_intents").await).unwrap();
    assert_eq!(
        stale["status"], "requires_capture",
        "the list still shows the old version"
    );
    tokio::time::sleep(delay + Duration::from_millis(100)).await;
    let fresh = listed(&api.get("v1/payment_intents").await).unwrap();
    assert_eq!(fresh["status"], "canceled");
}

#[tokio::test]
async fn the_list_is_newest_first_and_paginated() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(api.pay(VISA, &[], None).await.id());
    }
    ids.reverse();
    let page_ids = |answer: &Answer| -> Vec<String> {
        answer.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = api.get("v1/payment_intents?limit=2").await;
    assert_eq!(page_ids(&first), ids[..2]);
    assert_eq!(first.body["has_more"], true);
    let second = api
        .get(&format!(
            "v1/payment_intents?limit=2&starting_after={}",
            ids[1]
        ))
        .await;
    assert_eq!(page_ids(&second), ids[2..4]);
    let last = api
        .get(&format!(
            "v1/payment_intents?limit=2&starting_after={}",
            ids[3]
        ))
        .await;
    assert_eq!(page_ids(&last), ids[4..]);
    assert_eq!(last.body["has_more"], false);
    let before = api
        .get(&format!(
            "v1/payment_intents?limit=2&ending_before={}",
            ids[4]
        ))
        .await;
    assert_eq!(page_ids(&before), ids[2..4]);

    let unknown = api.get("v1/payment_intents?starting_after=pi_nope").await;
    assert_error(
        &unknown,
        400,
        "invalid_request_error",
        Some("resource_missing"),
    );
    let too_many = api.get("v1/payment_intents?limit=101").await;
    assert_error(&too_many, 400, "invalid_request_error", None);
}

// --- Cancel, capture, refunds ----------------------------------------------------------------

#[tokio::test]
async fn cancel_follows_stripes_state_rules() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let paid = api.pay(VISA, &[], None).await.id();
    let refused = api
        .post(&format!("v1/payment_intents/{paid}/cancel"), &[], None)
        .await;
    assert_error(
        &refused,
        400,
        "invalid_request_error",
        Some("payment_intent_unexpected_state"),
    );
    assert_eq!(
        refused.body["error"]["payment_intent"]["status"],
        "succeeded"
    );
    assert_eq!(fake.intent(&paid).unwrap().status, "succeeded");

    let held = api
        .pay(VISA, &[("capture_method", "manual")], None)
        .await
        .id();
    let form = [("cancellation_reason", "abandoned")];
    let canceled = api
        .post(&format!("v1/payment_intents/{held}/cancel"), &form, None)
        .await;
    assert_eq!(canceled.status, 200, "{}", canceled.body);
    assert_eq!(canceled.body["status"], "canceled");
    assert_eq!(canceled.body["cancellation_reason"], "abandoned");
    assert_eq!(canceled.body["amount_capturable"], 0);
    let again = api
        .post(&format!("v1/payment_intents/{held}/cancel"), &[], None)
        .await;
    assert_error(
        &again,
        400,
        "invalid_request_error",
        Some("payment_intent_unexpected_state"),
    );
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 1);
}

#[tokio::test]
async fn capture_follows_stripes_state_rules() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let held = api
        .pay(VISA, &[("capture_method", "manual")], None)
        .await
        .id();
    let path = format!("v1/payment_intents/{held}/capture");
    let too_much = api
        .post(&path, &[("amount_to_capture", "1500")], None)
        .await;
    assert_error(
        &too_much,
        400,
        "invalid_request_error",
        Some("amount_too_large"),
    );
    let captured = api.post(&path, &[("amount_to_capture", "600")], None).await;
    assert_eq!(captured.status, 200, "{}", captured.body);
    assert_eq!(captured.body["status"], "succeeded");
    assert_eq!(captured.body["amount_received"], 600);
    assert_eq!(captured.body["amount_capturable"], 0);
    let twice = api.post(&path, &[], None).await;
    assert_error(
        &twice,
        400,
        "invalid_request_error",
        Some("payment_intent_unexpected_state"),
    );

    let paid = api.pay(VISA, &[], None).await.id();
    let answer = api
        .post(&format!("v1/payment_intents/{paid}/capture"), &[], None)
        .await;
    assert_error(
        &answer,
        400,
        "invalid_request_error",
        Some("payment_intent_unexpected_state"),
    );
}

#[tokio::test]
async fn refunds_never_exceed_what_was_received() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let paid = api.pay(VISA, &[], None).await.id();
    let refund = |amount: Option<&'static str>| {
        let paid = paid.clone();
        let api = &api;
        async move {
            let mut form = vec![("payment_intent", paid.as_str())];
            form.extend(amount.map(|a| ("amount", a)));
            api.post("v1/refunds", &form, None).await
        }
    };
    let first = refund(Some("300")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(first.id().starts_with("re_"));
    assert_eq!(
        (
            &first.body["object"],
            &first.body["amount"],
            &first.body["status"]
        ),
        (&"refund".into(), &300.into(), &"succeeded".into())
    );
    assert_eq!(first.body["payment_intent"], paid.as_str());
    let too_much = refund(Some("800")).await;
    assert_error(
        &too_much,
        400,
        "invalid_request_error",
        Some("amount_too_large"),
    );
    let rest = refund(None).await;
    assert_eq!(rest.body["amount"], 700);
    let more = refund(Some("1")).await;
    assert_error(
        &more,
        400,
        "invalid_request_error",
        Some("charge_already_refunded"),
    );

    let list = api.get(&format!("v1/refunds?payment_intent={paid}")).await;
    let amounts: Vec<&Value> = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["amount"])
        .collect();
    assert_eq!(amounts, [&Value::from(700), &Value::from(300)]);
    assert_eq!(list.body["url"], "/v1/refunds");
    assert_eq!(fake.refunds().len(), 2);

    let held = api
        .pay(VISA, &[("capture_method", "manual")], None)
        .await
        .id();
    let answer = api
        .post("v1/refunds", &[("payment_intent", &held)], None)
        .await;
    assert_error(
        &answer,
        400,
        "invalid_request_error",
        Some("payment_intent_unexpected_state"),
    );
    assert_eq!(fake.refunds().len(), 2);
}

#[tokio::test]
async fn refunds_of_the_5126_card_fail() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let paid = api.pay(REFUND_FAILS, &[], None).await.id();
    let refund = api
        .post("v1/refunds", &[("payment_intent", &paid)], None)
        .await;
    assert_eq!(refund.status, 200, "{}", refund.body);
    assert_eq!(refund.body["status"], "failed");
    assert_eq!(fake.refunds()[0].status, "failed");
    // A failed refund gives nothing back, so the amount is still refundable.
    let again = api
        .post("v1/refunds", &[("payment_intent", &paid)], None)
        .await;
    assert_eq!(again.body["amount"], 1000);

    let late = FakeStripe::start(FakeStripeConfig {
        list_delay: Duration::ZERO,
        refund_failure_delay: Duration::from_millis(300),
        ..FakeStripeConfig::default()
    })
    .await;
    let api = Api::new(&late);
    let paid = api.pay(REFUND_FAILS, &[], None).await.id();
    let refund = api
        .post("v1/refunds", &[("payment_intent", &paid)], None)
        .await;
    assert_eq!(
        refund.body["status"], "succeeded",
        "Stripe reports it failed only later"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let list = api.get(&format!("v1/refunds?payment_intent={paid}")).await;
    assert_eq!(list.body["data"][0]["status"], "failed");
}

// --- 3D Secure -------------------------------------------------------------------------------

const RETURN_URL: &str = "https://shop.example/return?order=7";

#[tokio::test]
async fn a_3ds_card_is_authenticated_on_the_processors_page_and_the_payer_sent_back() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let answer = api.pay(THREE_DS, &[("return_url", RETURN_URL)], None).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let id = answer.id();
    assert_eq!(answer.body["status"], "requires_action");
    let action = &answer.body["next_action"];
    assert_eq!(action["type"], "redirect_to_url");
    let page_url = action["redirect_to_url"]["url"].as_str().unwrap();
    assert_eq!(
        page_url,
        fake.base_url.join(&format!("3ds/{id}")).unwrap().as_str()
    );
    assert_eq!(action["redirect_to_url"]["return_url"], RETURN_URL);
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 0);

    let page = api.get(&format!("3ds/{id}")).await;
    assert_eq!(page.status, 200);
    for part in [
        "id=\"pass\"",
        "id=\"fail\"",
        &format!("action=\"/3ds/{id}\""),
    ] {
        assert!(page.text().contains(part), "{}", page.text());
    }

    let back = api
        .post(&format!("3ds/{id}"), &[("result", "pass")], None)
        .await;
    assert_eq!(back.status, 303);
    let location = url::Url::parse(back.header("location").unwrap()).unwrap();
    assert_eq!(location.host_str(), Some("shop.example"));
    let query: Vec<(String, String)> = location.query_pairs().into_owned().collect();
    assert!(query.contains(&("order".into(), "7".into())));
    assert!(query.contains(&("payment_intent".into(), id.clone())));
    assert!(query.contains(&("redirect_status".into(), "succeeded".into())));
    let intent = api.get(&format!("v1/payment_intents/{id}")).await;
    assert_eq!(intent.body["status"], "succeeded");
    assert!(intent.body["next_action"].is_null());
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 1);
}

#[tokio::test]
async fn a_failed_3ds_leaves_the_intent_unpaid() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let id = api
        .pay(THREE_DS_2, &[("return_url", RETURN_URL)], None)
        .await
        .id();
    let back = api
        .post(&format!("3ds/{id}"), &[("result", "fail")], None)
        .await;
    assert_eq!(back.status, 303);
    assert!(back
        .header("location")
        .unwrap()
        .contains("redirect_status=failed"));
    let intent = api.get(&format!("v1/payment_intents/{id}")).await;
    assert_eq!(intent.body["status"], "requires_payment_method");
    assert_eq!(
        intent.body["last_payment_error"]["code"],
        "payment_intent_authentication_failure"
    );
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 0);
}

#[tokio::test]
async fn completing_3ds_after_cancel_changes_nothing() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let id = api
        .pay(THREE_DS, &[("return_url", RETURN_URL)], None)
        .await
        .id();
    let canceled = api
        .post(&format!("v1/payment_intents/{id}/cancel"), &[], None)
        .await;
    assert_eq!(canceled.body["status"], "canceled");

    let page = api
        .post(&format!("3ds/{id}"), &[("result", "pass")], None)
        .await;
    assert_eq!(page.status, 409);
    assert!(page.text().contains("canceled"));
    assert_eq!(api.get(&format!("3ds/{id}")).await.status, 409);
    assert!(!fake.complete_3ds(&id, true));
    assert_eq!(fake.intent(&id).unwrap().status, "canceled");
    assert_eq!(fake.charged_intents_for("attempt", "a1"), 0);
}

#[tokio::test]
async fn a_test_can_complete_3ds_and_manual_capture_holds_after_it() {
    let fake = fake().await;
    let api = Api::new(&fake);
    let id = api
        .pay(THREE_DS, &[("capture_method", "manual")], None)
        .await
        .id();
    let intent = fake.intent(&id).unwrap();
    assert_eq!(intent.status, "requires_action");
    let answer = api.get(&format!("v1/payment_intents/{id}")).await;
    assert!(answer.body["next_action"]["redirect_to_url"]["return_url"].is_null());
    assert!(fake.complete_3ds(&id, true));
    assert_eq!(fake.intent(&id).unwrap().status, "requires_capture");
    assert!(!fake.complete_3ds(&id, true), "only once");

    // Without a return_url, the page itself says it is done.
    let other = api.pay(THREE_DS, &[], None).await.id();
    let page = api
        .post(&format!("3ds/{other}"), &[("result", "pass")], None)
        .await;
    assert_eq!(page.status, 200);
    assert_eq!(fake.intent(&other).unwrap().status, "succeeded");
}
