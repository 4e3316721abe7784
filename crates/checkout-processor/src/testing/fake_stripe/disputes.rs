//! Disputes (chargebacks): opened and moved through Stripe's statuses by the test, as a
//! cardholder's bank would, and read with `GET /v1/disputes/{id}`.

use serde_json::{json, Value};

use super::api::{Outcome, Reply};
use super::cards::unix_now;
use super::params::Params;
use super::store::{new_id, Status, Store};
use super::DisputeSnapshot;

/// Stripe's dispute statuses.
const STATUSES: &[&str] = &[
    "warning_needs_response",
    "warning_under_review",
    "warning_closed",
    "needs_response",
    "under_review",
    "won",
    "lost",
];

/// Stripe's dispute reasons.
const REASONS: &[&str] = &[
    "bank_cannot_process",
    "check_returned",
    "credit_not_processed",
    "customer_initiated",
    "debit_not_authorized",
    "duplicate",
    "fraudulent",
    "general",
    "incorrect_account_details",
    "insufficient_funds",
    "noncompliant",
    "product_not_received",
    "product_unacceptable",
    "subscription_canceled",
    "unrecognized",
];

/// A dispute of a captured charge.
pub(super) struct Dispute {
    pub id: String,
    pub amount: i64,
    pub currency: String,
    pub charge: String,
    pub payment_intent: String,
    pub reason: String,
    pub status: &'static str,
    pub created: i64,
}

impl Dispute {
    /// Whether the dispute is over: won, lost, or an inquiry closed.
    pub fn is_closed(&self) -> bool {
        matches!(self.status, "won" | "lost" | "warning_closed")
    }

    pub fn json(&self) -> Value {
        // While only an inquiry is open the payment can still be refunded; once it is a
        // chargeback, or over, it cannot.
        let refundable = matches!(
            self.status,
            "warning_needs_response" | "warning_under_review"
        );
        json!({
            "id": self.id, "object": "dispute", "amount": self.amount,
            "charge": self.charge, "created": self.created, "currency": self.currency,
            "is_charge_refundable": refundable, "livemode": false, "metadata": {},
            "payment_intent": self.payment_intent, "reason": self.reason,
            "status": self.status,
        })
    }

    pub fn snapshot(&self) -> DisputeSnapshot {
        DisputeSnapshot {
            id: self.id.clone(),
            payment_intent: self.payment_intent.clone(),
            charge: self.charge.clone(),
            amount: self.amount,
            currency: self.currency.clone(),
            reason: self.reason.clone(),
            status: self.status.to_owned(),
            created: self.created,
        }
    }
}

/// Opens a dispute of intent `payment_intent`'s charge for `reason`: its id, or why not.
pub(super) fn open(
    store: &mut Store,
    payment_intent: &str,
    reason: &str,
) -> Result<String, String> {
    if !REASONS.contains(&reason) {
        return Err(format!("{reason} is not one of Stripe's dispute reasons"));
    }
    let intent = store
        .intent(payment_intent)
        .ok_or_else(|| format!("no such PaymentIntent: {payment_intent}"))?;
    let charge = match (&intent.latest_charge, intent.status) {
        (Some(charge), Status::Succeeded) if intent.amount_received > 0 => charge.clone(),
        _ => {
            return Err(format!(
                "PaymentIntent {payment_intent} has no captured charge to dispute (status {})",
                intent.status.as_str()
            ))
        }
    };
    if store.disputes().iter().any(|d| d.charge == charge) {
        return Err(format!("charge {charge} is already disputed"));
    }
    let dispute = Dispute {
        id: new_id("dp"),
        amount: intent.amount_received,
        currency: intent.currency.clone(),
        charge,
        payment_intent: payment_intent.to_owned(),
        reason: reason.to_owned(),
        status: "needs_response",
        created: unix_now(),
    };
    let id = dispute.id.clone();
    store.insert_dispute(dispute);
    Ok(id)
}

/// Sets dispute `id`'s status, one of Stripe's, or says why not.
pub(super) fn set_status(store: &mut Store, id: &str, status: &str) -> Result<(), String> {
    let status = STATUSES
        .iter()
        .find(|s| **s == status)
        .ok_or_else(|| format!("{status} is not one of Stripe's dispute statuses"))?;
    if store.set_dispute_status(id, status) {
        Ok(())
    } else {
        Err(format!("no such dispute: {id}"))
    }
}

pub(super) fn retrieve(store: &mut Store, id: &str, p: &Params) -> Outcome {
    p.only(&["expand"])?;
    store
        .disputes()
        .iter()
        .find(|d| d.id == id)
        .map(|d| Reply::ok(d.json()))
        .ok_or_else(|| Reply::no_such("dispute", id, None))
}
