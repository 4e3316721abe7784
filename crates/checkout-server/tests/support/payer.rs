//! A payer's card form submitted over plain HTTP, with the page's own CSRF token and cookie:
//! for the tests that need many submissions at once, or no browser.

use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::TestServer;

/// The card form of one session as a browser received it: the cookie and the form token.
#[derive(Clone, Debug)]
pub struct CardForm {
    /// `{base}/pay/process-payment`.
    pub action: String,
    /// The session id.
    pub session_id: String,
    /// The `Cookie` header to send back.
    pub cookie: String,
    /// The hidden `csrfToken`.
    pub csrf_token: String,
}

impl CardForm {
    /// Opens `/pay/checkout-payment/{id}` on `base` (any instance sharing the database).
    pub async fn open(http: &reqwest::Client, base: &str, id: &str) -> CardForm {
        Self::try_open(http, base, id)
            .await
            .expect("the checkout page opens")
    }

    /// Like [`CardForm::open`], `None` when the page does not open (a server being killed).
    pub async fn try_open(http: &reqwest::Client, base: &str, id: &str) -> Option<CardForm> {
        Self::try_open_at(http, base, &format!("/pay/checkout-payment/{id}"), id).await
    }

    /// The card form of session `id` on its page at `path` (`/pay/link/{id}` for a payment
    /// link), `None` when the page does not open.
    pub async fn try_open_at(
        http: &reqwest::Client,
        base: &str,
        path: &str,
        id: &str,
    ) -> Option<CardForm> {
        let response = http.get(format!("{base}{path}")).send().await.ok()?;
        if response.status() != 200 {
            return None;
        }
        let cookie = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.split(';').next())
            .collect::<Vec<_>>()
            .join("; ");
        let page = response.text().await.ok()?;
        Some(CardForm {
            action: format!("{base}/pay/process-payment"),
            session_id: id.to_owned(),
            cookie,
            csrf_token: hidden_value(&page, "csrfToken"),
        })
    }

    /// Posts the form with `card` (any expiry in 2034, CVV 918). Redirects are not followed.
    pub async fn submit(&self, http: &reqwest::Client, card: &str) -> reqwest::Response {
        let form = [
            ("checkoutSessionId", self.session_id.as_str()),
            ("csrfToken", self.csrf_token.as_str()),
            ("cardholderName", "Ada Lovelace"),
            ("cardNumber", card),
            ("cardExpiry", "11/34"),
            ("cardCvv", "918"),
        ];
        http.post(&self.action)
            .header("Cookie", &self.cookie)
            .form(&form)
            .send()
            .await
            .expect("an answer to the card form")
    }
}

impl CardForm {
    /// The page a card post's 303 leads to on the service itself (the form shown again, a
    /// result or error page), fetched as a browser would: with the form's cookie and the one
    /// the answer set. `None` for a redirect elsewhere (the merchant, the processor).
    pub async fn page_after(
        &self,
        http: &reqwest::Client,
        response: &reqwest::Response,
    ) -> Option<String> {
        let location = location(response);
        if !location.starts_with('/') {
            return None;
        }
        let base = self.action.trim_end_matches("/pay/process-payment");
        let mut cookies = vec![self.cookie.clone()];
        cookies.extend(
            response
                .headers()
                .get_all("set-cookie")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .filter_map(|v| v.split(';').next())
                .map(str::to_owned),
        );
        let page = http
            .get(format!("{base}{location}"))
            .header("Cookie", cookies.join("; "))
            .send()
            .await
            .ok()?;
        page.text().await.ok()
    }

    /// Posts the card form with `card` and reads the answer: its status, its `Location`, and
    /// the page it shows (the service's page it redirects to, else its own body).
    pub async fn submit_and_read(
        &self,
        http: &reqwest::Client,
        card: &str,
    ) -> (u16, String, String) {
        let answer = self.submit(http, card).await;
        let status = answer.status().as_u16();
        let location = location(&answer);
        let page = match self.page_after(http, &answer).await {
            Some(page) => page,
            None => answer.text().await.unwrap_or_default(),
        };
        (status, location, page)
    }

    /// Posts the page's cancel form (integrated checkouts). Redirects are not followed.
    pub async fn cancel(&self, http: &reqwest::Client) -> reqwest::Response {
        let form = [
            ("checkoutSessionId", self.session_id.as_str()),
            ("csrfToken", self.csrf_token.as_str()),
        ];
        http.post(
            self.action
                .replace("/pay/process-payment", "/pay/cancel-payment"),
        )
        .header("Cookie", &self.cookie)
        .form(&form)
        .send()
        .await
        .expect("an answer to the cancel form")
    }
}

/// The `Location` header of `response`, or "" when it has none.
pub fn location(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The value of the hidden input `name` in `html`.
pub fn hidden_value(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\"");
    let at = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in the page"));
    let tag_start = html[..at].rfind('<').expect("tag start");
    let tag_end = at + html[at..].find('>').expect("tag end");
    let tag = &html[tag_start..tag_end];
    let value_at = tag.find("value=\"").expect("a value") + "value=\"".len();
    let value_end = value_at + tag[value_at..].find('"').expect("value end");
    tag[value_at..value_end]
        .replace("&#x2F;", "/")
        .replace("&amp;", "&")
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// How many card submissions reached the processor for a session (its attempt rows).
pub async fn attempts(server: &TestServer, id: &str) -> i64 {
    let mut conn = AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    let count: Count =
        diesel::sql_query("SELECT count(*) AS n FROM payment_attempts WHERE session_id = $1")
            .bind::<SqlUuid, _>(uuid::Uuid::parse_str(id).expect("uuid"))
            .get_result(&mut conn)
            .await
            .expect("count");
    count.n
}
