//! The PaymentIntents endpoints: create (and confirm at once), retrieve, list (lagging behind
//! writes), cancel and capture.

use serde_json::{json, Map, Value};
use url::Url;

use super::api::{Cursor, Outcome, Reply};
use super::cards::{unix_now, Behaviour};
use super::params::Params;
use super::store::{new_id, random_token, CaptureMethod, Intent, Status, Store};

const CREATE_PARAMS: &[&str] = &[
    "amount",
    "currency",
    "payment_method",
    "confirm",
    "capture_method",
    "return_url",
    "metadata",
    "payment_method_types",
    "payment_method_options",
    "description",
    "receipt_email",
    "statement_descriptor_suffix",
    "expand",
];

const CANCELABLE: &[Status] = &[
    Status::RequiresPaymentMethod,
    Status::RequiresCapture,
    Status::RequiresConfirmation,
    Status::RequiresAction,
    Status::Processing,
];

/// Stripe's largest amount (99 999 999 minor units).
const MAX_AMOUNT: i64 = 99_999_999;

/// What a create request asks for, once validated.
struct Order {
    amount: i64,
    currency: String,
    capture_method: CaptureMethod,
    confirm: bool,
    return_url: Option<String>,
    payment_method: Option<String>,
    card: Option<Behaviour>,
}

pub(super) fn create(store: &mut Store, p: &Params) -> Outcome {
    let order = validate(store, p)?;
    if order.confirm && order.card == Some(Behaviour::ProcessorError) {
        return Ok(Reply::api_error(500));
    }
    let mut intent = Intent {
        id: new_id("pi"),
        seq: store.next_seq(),
        amount: order.amount,
        amount_received: 0,
        amount_capturable: 0,
        currency: order.currency,
        status: if order.payment_method.is_some() {
            Status::RequiresConfirmation
        } else {
            Status::RequiresPaymentMethod
        },
        capture_method: order.capture_method,
        client_secret: String::new(),
        metadata: p.nested("metadata"),
        last_payment_error: None,
        next_action: None,
        created: unix_now(),
        payment_method: order.payment_method,
        card: order.card,
        return_url: order.return_url,
        latest_charge: None,
        cancellation_reason: None,
        canceled_at: None,
        authorised_at: None,
    };
    intent.client_secret = format!("{}_secret_{}", intent.id, random_token(24));
    let as_created = (intent.status, intent.json());
    let reply = if order.confirm {
        confirm(store, &mut intent)
    } else {
        Reply::ok(as_created.1.clone())
    };
    store.insert_intent(intent, as_created);
    Ok(reply)
}

/// Stripe's checks of a create request, before any work.
fn validate(store: &Store, p: &Params) -> Result<Order, Reply> {
    p.only(CREATE_PARAMS)?;
    let amount = p
        .positive("amount")?
        .ok_or_else(|| Reply::missing("amount"))?;
    if amount > MAX_AMOUNT {
        let message = "Amount must be no more than 99999999.";
        return Err(Reply::invalid(
            message,
            Some("amount"),
            Some("amount_too_large"),
        ));
    }
    let currency = p.require("currency")?;
    if currency.len() != 3 || !currency.chars().all(|c| c.is_ascii_alphabetic()) {
        let message = format!("Invalid currency: {currency}.");
        return Err(Reply::invalid(&message, Some("currency"), None));
    }
    let capture_method = match p.one_of(
        "capture_method",
        &["automatic", "automatic_async", "manual"],
    )? {
        Some("manual") => CaptureMethod::Manual,
        Some("automatic_async") => CaptureMethod::AutomaticAsync,
        _ => CaptureMethod::Automatic,
    };
    if let Some(kind) = p
        .list("payment_method_types")
        .into_iter()
        .find(|t| *t != "card")
    {
        let message = format!("The fake Stripe knows only card payments, not {kind}.");
        return Err(Reply::invalid(&message, Some("payment_method_types"), None));
    }
    let confirm = p.boolean("confirm")?.unwrap_or(false);
    let return_url = return_url(p, confirm)?;
    let (payment_method, card) = payment_method(store, p, confirm)?;
    Ok(Order {
        amount,
        currency: currency.to_ascii_lowercase(),
        capture_method,
        confirm,
        return_url,
        payment_method,
        card,
    })
}

fn return_url(p: &Params, confirm: bool) -> Result<Option<String>, Reply> {
    let Some(url) = p.get("return_url") else {
        return Ok(None);
    };
    if !confirm {
        let message = "You can only provide a return_url if you also set confirm=true.";
        return Err(Reply::invalid(message, Some("return_url"), None));
    }
    if Url::parse(url).is_err() {
        return Err(Reply::invalid(
            "Not a valid URL",
            Some("return_url"),
            Some("url_invalid"),
        ));
    }
    Ok(Some(url.to_owned()))
}

/// The PaymentMethod to charge and its card's behaviour; refused when unknown, missing for a
/// confirmation, or already used by a payment.
fn payment_method(
    store: &Store,
    p: &Params,
    confirm: bool,
) -> Result<(Option<String>, Option<Behaviour>), Reply> {
    let Some(id) = p.get("payment_method") else {
        if confirm {
            let message = "You cannot confirm this PaymentIntent because it's missing a payment \
                           method. Provide a payment_method.";
            return Err(Reply::invalid(
                message,
                Some("payment_method"),
                Some("parameter_missing"),
            ));
        }
        return Ok((None, None));
    };
    let pm = store
        .payment_methods
        .get(id)
        .ok_or_else(|| Reply::no_such("PaymentMethod", id, Some("payment_method")))?;
    if pm.consumed {
        let message = "The provided PaymentMethod was previously used with a PaymentIntent \
                       without Customer attachment, shared with a connected account without \
                       Customer attachment, or was detached from a Customer. It may not be used \
                       again. To use a PaymentMethod multiple times, you must attach it to a \
                       Customer first.";
        return Err(Reply::invalid(message, Some("payment_method"), None));
    }
    Ok((Some(id.to_owned()), Some(pm.behaviour)))
}

/// Confirms `intent` with its card, as Stripe does on `confirm=true`.
fn confirm(store: &mut Store, intent: &mut Intent) -> Reply {
    let pm = intent.payment_method.clone().unwrap_or_default();
    let card = intent.card.unwrap_or(Behaviour::Approve);
    if let Behaviour::Decline {
        code,
        decline_code,
        message,
    } = card
    {
        let error = json!({
            "type": "card_error", "code": code, "decline_code": decline_code,
            "message": message, "charge": new_id("ch"),
            "doc_url": format!("https://stripe.com/docs/error-codes/{}", code.replace('_', "-")),
            "payment_method": store.payment_methods.get(&pm).map(|pm| pm.json()),
        });
        intent.latest_charge = error["charge"].as_str().map(str::to_owned);
        intent.fail(error.clone());
        let mut body = error;
        body["payment_intent"] = intent.json();
        return Reply {
            status: 402,
            body: json!({ "error": body }),
            executed: true,
        };
    }
    match card {
        Behaviour::Challenge => intent.challenge(format!("{}/3ds/{}", store.base, intent.id)),
        Behaviour::AuthoriseOnly => intent.authorise(true),
        _ => intent.authorise(false),
    }
    if let Some(pm) = store.payment_methods.get_mut(&pm) {
        pm.consumed = true;
    }
    Reply::ok(intent.json())
}

pub(super) fn retrieve(store: &mut Store, id: &str, p: &Params) -> Outcome {
    p.only(&["expand", "client_secret"])?;
    let intent = store
        .intent(id)
        .ok_or_else(|| Reply::no_such("payment_intent", id, None))?;
    Ok(Reply::ok(intent.json()))
}

pub(super) fn list(store: &mut Store, p: &Params) -> Outcome {
    p.only(&["limit", "starting_after", "ending_before", "expand"])?;
    let cursor = Cursor::read(p, "payment_intent", |id| store.intent(id).map(|i| i.seq))?;
    Ok(Reply::ok(
        cursor.page(store.listed_intents(), "/v1/payment_intents"),
    ))
}

pub(super) fn cancel(store: &mut Store, id: &str, p: &Params) -> Outcome {
    p.only(&["cancellation_reason", "expand"])?;
    let reasons = [
        "duplicate",
        "fraudulent",
        "requested_by_customer",
        "abandoned",
    ];
    let reason = p
        .one_of("cancellation_reason", &reasons)?
        .map(str::to_owned);
    let intent = store
        .intent(id)
        .ok_or_else(|| Reply::no_such("payment_intent", id, None))?;
    if !CANCELABLE.contains(&intent.status) {
        let message = format!(
            "You cannot cancel this PaymentIntent because it has a status of {}. Only a \
             PaymentIntent with one of the following statuses may be canceled: \
             requires_payment_method, requires_capture, requires_confirmation, \
             requires_action, processing.",
            intent.status.as_str()
        );
        return Err(Reply::unexpected_state(&message, intent.json()));
    }
    let body = store.update_intent(id, |intent| {
        intent.cancel(reason);
        intent.json()
    });
    Ok(Reply::ok(body.unwrap_or(Value::Null)))
}

pub(super) fn capture(store: &mut Store, id: &str, p: &Params) -> Outcome {
    p.only(&["amount_to_capture", "metadata", "expand"])?;
    let wanted = p.positive("amount_to_capture")?;
    let metadata = p.nested("metadata");
    let intent = store
        .intent(id)
        .ok_or_else(|| Reply::no_such("payment_intent", id, None))?;
    if intent.status != Status::RequiresCapture {
        let message = format!(
            "This PaymentIntent could not be captured because it has a status of {}. Only a \
             PaymentIntent with one of the following statuses may be captured: \
             requires_capture.",
            intent.status.as_str()
        );
        return Err(Reply::unexpected_state(&message, intent.json()));
    }
    let amount = wanted.unwrap_or(intent.amount_capturable);
    if amount > intent.amount_capturable {
        let message = format!(
            "The amount to capture ({amount}) is greater than the amount capturable ({}).",
            intent.amount_capturable
        );
        return Err(Reply::refused("amount_too_large", &message, Map::new()));
    }
    let body = store.update_intent(id, |intent| {
        intent.capture(amount);
        intent.metadata.extend(metadata);
        intent.json()
    });
    Ok(Reply::ok(body.unwrap_or(Value::Null)))
}
