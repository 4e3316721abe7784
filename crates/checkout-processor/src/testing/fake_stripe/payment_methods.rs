//! `POST /v1/payment_methods`: a card PaymentMethod. Stripe checks the card's number, expiry
//! and CVC here and answers a 402 `card_error` for a bad one.

use serde_json::{Map, Value};

use super::api::{error, Outcome, Reply};
use super::cards::{self, current_year_month, unix_now};
use super::params::Params;
use super::store::{new_id, PaymentMethod, Store};

const PARAMS: &[&str] = &["type", "card", "billing_details", "metadata", "expand"];

pub(super) fn create(store: &mut Store, p: &Params) -> Outcome {
    p.only(PARAMS)?;
    let kind = p.require("type")?;
    if kind != "card" {
        let message = format!("The fake Stripe knows only card PaymentMethods, not {kind}.");
        return Err(Reply::invalid(&message, Some("type"), None));
    }
    let number: String = p
        .require("card[number]")?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let month = p.require("card[exp_month]")?;
    let year = p.require("card[exp_year]")?;
    let cvc = p.get("card[cvc]");
    let (exp_month, exp_year) = check_card(&number, month, year, cvc)?;
    let pm = PaymentMethod {
        id: new_id("pm"),
        brand: cards::brand(&number),
        last4: number[number.len() - 4..].to_owned(),
        exp_month,
        exp_year,
        name: p.get("billing_details[name]").map(str::to_owned),
        behaviour: cards::behaviour(&number),
        created: unix_now(),
        consumed: false,
    };
    let body = pm.json();
    store.payment_methods.insert(pm.id.clone(), pm);
    Ok(Reply::ok(body))
}

/// Stripe's checks of a card: the expiry as (month, four-digit year), or a 402 `card_error`.
fn check_card(
    number: &str,
    month: &str,
    year: &str,
    cvc: Option<&str>,
) -> Result<(u32, i64), Reply> {
    if !cards::valid_number(number) {
        return Err(card_error(
            "incorrect_number",
            "Your card number is incorrect.",
            "card[number]",
        ));
    }
    let bad_month = || {
        card_error(
            "invalid_expiry_month",
            "Your card's expiration month is invalid.",
            "card[exp_month]",
        )
    };
    let bad_year = || {
        card_error(
            "invalid_expiry_year",
            "Your card's expiration year is invalid.",
            "card[exp_year]",
        )
    };
    let month: u32 = month.parse().map_err(|_| bad_month())?;
    if !(1..=12).contains(&month) {
        return Err(bad_month());
    }
    let year: i64 = year.parse().map_err(|_| bad_year())?;
    let year = if (0..100).contains(&year) {
        2000 + year
    } else {
        year
    };
    let (this_year, this_month) = current_year_month();
    if year < this_year {
        return Err(bad_year());
    }
    if year == this_year && month < this_month {
        return Err(bad_month());
    }
    if cvc.is_some_and(|cvc| !cards::valid_cvc(cvc)) {
        return Err(card_error(
            "invalid_cvc",
            "Your card's security code is invalid.",
            "card[cvc]",
        ));
    }
    Ok((month, year))
}

/// A 402 `card_error` about the card itself (saved under the idempotency key).
fn card_error(code: &str, message: &str, param: &str) -> Reply {
    Reply {
        status: 402,
        body: error(
            "card_error",
            Some(code),
            message,
            Some(param),
            Map::<String, Value>::new(),
        ),
        executed: true,
    }
}
