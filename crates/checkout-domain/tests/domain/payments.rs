//! Card payments: authorisation, declines and further cards, the attempt ledger, card data,
//! the card-testing guard.

mod attempt_ledger;
mod card_attempts;
mod card_data;
mod card_guard;
mod card_payments;
mod declined_card;
