//! The Refunds endpoints: create (only for a captured payment, never beyond what it
//! received) and list.

use std::time::Instant;

use serde_json::Map;

use super::api::{Cursor, Outcome, Reply};
use super::cards::{unix_now, Behaviour};
use super::params::Params;
use super::store::{new_id, Intent, Refund, Status, Store};

const CREATE_PARAMS: &[&str] = &[
    "payment_intent",
    "charge",
    "amount",
    "reason",
    "metadata",
    "expand",
];

pub(super) fn create(store: &mut Store, p: &Params) -> Outcome {
    p.only(CREATE_PARAMS)?;
    let wanted = p.positive("amount")?;
    let reasons = ["duplicate", "fraudulent", "requested_by_customer"];
    let reason = p.one_of("reason", &reasons)?.map(str::to_owned);
    let intent = refunded_intent(store, p)?;
    if intent.status != Status::Succeeded {
        let message = "This PaymentIntent does not have a successful charge to refund.";
        return Err(Reply::unexpected_state(message, intent.json()));
    }
    let remaining = intent.amount_received - store.refunded(&intent.id);
    if remaining <= 0 {
        let charge = intent.latest_charge.as_deref().unwrap_or_default();
        let message = format!("Charge {charge} has already been refunded.");
        return Err(Reply::refused(
            "charge_already_refunded",
            &message,
            Map::new(),
        ));
    }
    let amount = wanted.unwrap_or(remaining);
    if amount > remaining {
        let message = format!(
            "Refund amount ({amount}) is greater than unrefunded amount on charge ({remaining})"
        );
        return Err(Reply::refused("amount_too_large", &message, Map::new()));
    }
    let (payment_intent, currency) = (intent.id.clone(), intent.currency.clone());
    let (charge, fails) = (
        intent.latest_charge.clone(),
        intent.card == Some(Behaviour::RefundFails),
    );
    let now = Instant::now();
    let fails_at = fails
        .then(|| now.checked_add(store.config.refund_failure_delay))
        .flatten();
    let refund = Refund {
        id: new_id("re"),
        seq: store.next_seq(),
        amount,
        currency,
        payment_intent,
        charge,
        reason,
        metadata: p.nested("metadata"),
        created: unix_now(),
        fails_at,
        failed: fails_at.is_some_and(|at| at <= now),
    };
    let body = refund.json();
    store.insert_refund(refund);
    Ok(Reply::ok(body))
}

/// The intent a refund request names, by `payment_intent` or by `charge`.
fn refunded_intent<'a>(store: &'a Store, p: &Params) -> Result<&'a Intent, Reply> {
    if let Some(id) = p.get("payment_intent") {
        return store
            .intent(id)
            .ok_or_else(|| Reply::no_such("payment_intent", id, Some("payment_intent")));
    }
    let Some(charge) = p.get("charge") else {
        let message = "One of the following params should be provided for this request: \
                       payment_intent or charge.";
        return Err(Reply::invalid(message, None, Some("parameter_missing")));
    };
    store
        .intent_by_charge(charge)
        .ok_or_else(|| Reply::no_such("charge", charge, Some("charge")))
}

pub(super) fn list(store: &mut Store, p: &Params) -> Outcome {
    p.only(&[
        "payment_intent",
        "charge",
        "limit",
        "starting_after",
        "ending_before",
        "expand",
    ])?;
    let seq_of = |id: &str| store.refunds().iter().find(|r| r.id == id).map(|r| r.seq);
    let cursor = Cursor::read(p, "refund", seq_of)?;
    let (intent, charge) = (p.get("payment_intent"), p.get("charge"));
    let items = store
        .refunds()
        .iter()
        .rev()
        .filter(|r| intent.is_none_or(|id| r.payment_intent == id))
        .filter(|r| charge.is_none_or(|id| r.charge.as_deref() == Some(id)))
        .map(|r| (r.seq, r.json()))
        .collect();
    Ok(Reply::ok(cursor.page(items, "/v1/refunds")))
}

pub(super) fn retrieve(store: &mut Store, id: &str, p: &Params) -> Outcome {
    p.only(&["expand"])?;
    store
        .refunds()
        .iter()
        .find(|r| r.id == id)
        .map(|r| Reply::ok(r.json()))
        .ok_or_else(|| Reply::no_such("refund", id, Some("id")))
}
