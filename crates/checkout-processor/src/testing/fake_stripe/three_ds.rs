//! The processor-hosted 3D Secure page: `GET /3ds/{id}` shows two forms, `POST /3ds/{id}`
//! with `result=pass|fail` completes the authentication at the processor, then sends the payer
//! back to the intent's `return_url` with `payment_intent`, `payment_intent_client_secret` and
//! `redirect_status` appended, as Stripe does.

use url::Url;

use super::http::{Request, Response};
use super::store::{Completion, Status, Store};

pub(super) fn handle(store: &mut Store, request: &Request) -> Response {
    let id = request.path().trim_start_matches("/3ds/");
    match request.method.as_str() {
        "GET" => page(store, id),
        "POST" => complete(store, id, request),
        _ => html(405, "Method not allowed", "Use GET or POST."),
    }
}

fn page(store: &Store, id: &str) -> Response {
    let Some(intent) = store.intent(id) else {
        return html(404, "Unknown payment", "There is no such payment.");
    };
    if intent.status != Status::RequiresAction {
        return not_awaiting(intent.status);
    }
    let form = |result: &str, label: &str| {
        format!(
            "<form method=\"post\" action=\"/3ds/{id}\"><input type=\"hidden\" name=\"result\" \
             value=\"{result}\"><button id=\"{result}\" type=\"submit\">{label}</button></form>"
        )
    };
    let body = format!(
        "<p>Payment {id}: {} {}.</p>{}{}",
        intent.amount,
        intent.currency,
        form("pass", "Complete authentication"),
        form("fail", "Fail authentication"),
    );
    html(200, "3D Secure authentication", &body)
}

fn complete(store: &mut Store, id: &str, request: &Request) -> Response {
    let form = request.form();
    let result = form
        .iter()
        .find(|(n, _)| n == "result")
        .map(|(_, v)| v.as_str());
    let pass = match result {
        Some("pass") => true,
        Some("fail") => false,
        _ => return html(400, "Bad request", "The result must be pass or fail."),
    };
    match store.complete_3ds(id, pass) {
        Completion::Missing => html(404, "Unknown payment", "There is no such payment."),
        Completion::NotAwaiting(status) => not_awaiting(status),
        Completion::Done {
            return_url: Some(url),
            client_secret,
            passed,
        } => Response::see_other(&back_to(&url, id, &client_secret, passed)),
        Completion::Done { .. } => html(
            200,
            "Authentication complete",
            "You may return to the merchant.",
        ),
    }
}

/// `return_url` with Stripe's redirect parameters appended to its query.
fn back_to(return_url: &str, id: &str, client_secret: &str, passed: bool) -> String {
    let Ok(mut url) = Url::parse(return_url) else {
        return return_url.to_owned();
    };
    url.query_pairs_mut()
        .append_pair("payment_intent", id)
        .append_pair("payment_intent_client_secret", client_secret)
        .append_pair(
            "redirect_status",
            if passed { "succeeded" } else { "failed" },
        );
    url.into()
}

fn not_awaiting(status: Status) -> Response {
    let message = format!(
        "This payment is not awaiting authentication (its status is {}). Nothing was changed.",
        status.as_str()
    );
    html(409, "Authentication not possible", &message)
}

/// A small page; `body` is trusted markup (no request input is echoed).
fn html(status: u16, title: &str, body: &str) -> Response {
    Response::html(
        status,
        format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}\
             </title></head><body><h1>{title}</h1>{body}</body></html>"
        ),
    )
}
