//! The merchant's request for a session, exactly as received, and its validation against the
//! spec's field rules (sections 2.2, 7.3, 7.4 and 8).

use rust_decimal::Decimal;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::{Callbacks, Charge, Item};
use crate::error::ValidationErrors;
use crate::terminal::CaptureMethod;
use crate::values::{
    without_hidden_format, Amount, AmountError, CallbackRule, CallbackUrl, Culture, Currency,
    DisplayText, Email, InvalidUrl, ItemCode, LineAmount, MerchantReference, Metadata,
    MetadataError, TerminalNumber, TextError, MAX_METADATA_KEYS, MAX_METADATA_KEY_CHARS,
    MAX_METADATA_VALUE_CHARS,
};

/// One `additionalCharges` entry as received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChargeRequest {
    /// `chargeName`.
    pub charge_name: Option<String>,
    /// `chargeAmount`.
    pub charge_amount: Option<Decimal>,
    /// `chargeCurrencyCode`.
    pub charge_currency_code: Option<String>,
}

/// One `items` entry as received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemRequest {
    /// `itemCode`.
    pub item_code: Option<String>,
    /// `quantity`.
    pub quantity: Option<i64>,
    /// `description`.
    pub description: Option<String>,
    /// `amount`.
    pub amount: Option<Decimal>,
    /// `currencyCode`.
    pub currency_code: Option<String>,
}

/// A start-payment or generate-payment-link request as received: every field optional, so
/// that each missing or bad field can be reported by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionRequest {
    /// `callbackSuccessUrl` (start payment only).
    pub callback_success_url: Option<String>,
    /// `callbackFailUrl` (start payment only).
    pub callback_fail_url: Option<String>,
    /// `callbackBackUrl` (start payment only).
    pub callback_back_url: Option<String>,
    /// `totalTransactionAmount`.
    pub total_transaction_amount: Option<Decimal>,
    /// `currencyCode`.
    pub currency_code: Option<String>,
    /// `terminalNumber`.
    pub terminal_number: Option<String>,
    /// `transactionReferenceNumber`.
    pub transaction_reference_number: Option<String>,
    /// `generalPurchaseDescription`.
    pub general_purchase_description: Option<String>,
    /// `userEmail`.
    pub user_email: Option<String>,
    /// `culture`.
    pub culture: Option<String>,
    /// `additionalCharges`.
    pub additional_charges: Vec<ChargeRequest>,
    /// `items`.
    pub items: Vec<ItemRequest>,
    /// `expirationDateTime`: when the session stops being payable, UTC, ISO 8601 (RFC 3339
    /// with `Z`); the policy's validity when absent.
    pub expiration_date_time: Option<String>,
    /// `metadata`, entry by entry as received: `None` for a value that is not a string.
    pub metadata: Vec<(String, Option<String>)>,
    /// `captureMethod`: `automatic` or `manual`; the terminal's when absent.
    pub capture_method: Option<String>,
}

/// A request that passed validation; the use case adds ids, times and state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// Callbacks, for an integrated checkout; `None` for a payment link.
    pub callbacks: Option<Callbacks>,
    /// The total.
    pub amount: Amount,
    /// The terminal named in the request, if any.
    pub terminal: Option<TerminalNumber>,
    /// The merchant reference.
    pub reference: MerchantReference,
    /// The description.
    pub description: Option<DisplayText>,
    /// The payer's email.
    pub email: Option<Email>,
    /// The page language.
    pub culture: Option<Culture>,
    /// Line items.
    pub items: Vec<Item>,
    /// Additional charges.
    pub charges: Vec<Charge>,
    /// The requested expiry, when given (its bounds are the use case's to check).
    pub expires_at: Option<OffsetDateTime>,
    /// The merchant's metadata.
    pub metadata: Metadata,
    /// The capture method asked for this session; the terminal's when `None`.
    pub capture_method: Option<CaptureMethod>,
}

/// The most line items one session may carry.
pub const MAX_ITEMS: usize = 100;
/// The most additional charges one session may carry.
pub const MAX_CHARGES: usize = 20;

fn required(field: &str) -> String {
    format!("The {field} field is required.")
}

fn text_message(field: &str, e: TextError) -> String {
    match e {
        TextError::Empty => required(field),
        TextError::TooLong(n) => format!("{field} must be at most {n} characters long."),
        TextError::BadCharacter => format!("{field} contains characters that are not allowed."),
        TextError::FormatCharacter => format!(
            "{field} contains invisible formatting characters (such as bidirectional \
             overrides) that are not allowed."
        ),
    }
}

fn amount_message(field: &str, e: AmountError, currency: Currency) -> String {
    match e {
        AmountError::NotPositive => format!("{field} must be greater than 0."),
        AmountError::Negative => format!("{field} must not be negative."),
        AmountError::TooPrecise(n) => {
            format!("{field} must have at most {n} decimal places for {currency}.")
        }
        AmountError::TooLarge => format!("{field} is too large."),
    }
}

/// A string with content, or `None` for absent or blank.
fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// Checks a `transactionReferenceNumber` given on its own (the lookup by reference), by the
/// same rule and with the same messages as in a create request; a refusal names
/// `TransactionReferenceNumber`.
pub fn parse_transaction_reference(
    value: Option<&str>,
) -> Result<MerchantReference, ValidationErrors> {
    let mut c = Checker {
        errors: ValidationErrors::new(),
    };
    let reference = c.required_text(
        "TransactionReferenceNumber",
        &value.map(str::to_owned),
        MerchantReference::parse,
    );
    match reference {
        Some(reference) if c.errors.is_empty() => Ok(reference),
        _ => Err(c.errors),
    }
}

/// Collects errors while fields are checked one by one.
struct Checker {
    errors: ValidationErrors,
}

impl Checker {
    /// `Metadata` as a whole (`Metadata`) and each entry (`Metadata[key]`).
    fn metadata(&mut self, entries: &[(String, Option<String>)]) -> Metadata {
        if entries.len() > MAX_METADATA_KEYS {
            self.errors.add(
                "Metadata",
                format!("Metadata may hold at most {MAX_METADATA_KEYS} keys."),
            );
            return Metadata::empty();
        }
        let mut valid = Vec::new();
        for (key, value) in entries {
            let field = format!("Metadata[{key}]");
            let Some(value) = value else {
                self.errors
                    .add(&field, format!("{field} must be a string."));
                continue;
            };
            match Metadata::check_entry(key, value) {
                Ok(()) => valid.push((key.clone(), value.clone())),
                Err(e) => {
                    let message = match e {
                        MetadataError::BadKey => {
                            format!("{field}: a metadata key must not be empty or hold '[' or ']'.")
                        }
                        MetadataError::KeyTooLong => format!(
                            "{field}: a metadata key must be at most \
                             {MAX_METADATA_KEY_CHARS} characters long."
                        ),
                        MetadataError::ValueTooLong => format!(
                            "{field} must be at most {MAX_METADATA_VALUE_CHARS} characters long."
                        ),
                        MetadataError::BadValue | MetadataError::TooManyKeys => {
                            format!("{field} contains characters that are not allowed.")
                        }
                    };
                    self.errors.add(&field, message);
                }
            }
        }
        Metadata::parse(valid).unwrap_or_default()
    }

    fn required_text<T>(
        &mut self,
        field: &str,
        value: &Option<String>,
        parse: impl Fn(&str) -> Result<T, TextError>,
    ) -> Option<T> {
        match present(value) {
            None => {
                self.errors.add(field, required(field));
                None
            }
            Some(s) => self.text(field, s, parse),
        }
    }

    fn optional_text<T>(
        &mut self,
        field: &str,
        value: &Option<String>,
        parse: impl Fn(&str) -> Result<T, TextError>,
    ) -> Option<T> {
        present(value).and_then(|s| self.text(field, s, parse))
    }

    fn text<T>(
        &mut self,
        field: &str,
        s: &str,
        parse: impl Fn(&str) -> Result<T, TextError>,
    ) -> Option<T> {
        parse(s)
            .map_err(|e| self.errors.add(field, text_message(field, e)))
            .ok()
    }

    fn url(
        &mut self,
        field: &str,
        value: &Option<String>,
        is_required: bool,
        rule: CallbackRule,
    ) -> Option<CallbackUrl> {
        match present(value) {
            None => {
                if is_required {
                    self.errors.add(field, required(field));
                }
                None
            }
            Some(s) => CallbackUrl::parse(s)
                .and_then(|url| rule.check(&url).map(|()| url))
                .map_err(|e| {
                    let message = match (e, rule) {
                        (InvalidUrl::Malformed, _) => {
                            format!("{field} must be an absolute http or https URL.")
                        }
                        (InvalidUrl::Credentials, _) => {
                            format!("{field} must not contain a user name or password.")
                        }
                        (InvalidUrl::NotHttps, CallbackRule::HttpsOnly) => {
                            format!("{field} must use https.")
                        }
                        (InvalidUrl::NotHttps, CallbackRule::HttpsOrLoopbackHttp) => format!(
                            "{field} must use https (plain http is allowed only to localhost in the sandbox)."
                        ),
                    };
                    self.errors.add(field, message)
                })
                .ok(),
        }
    }

    fn email(&mut self, field: &str, value: &Option<String>, is_required: bool) -> Option<Email> {
        match present(value) {
            None => {
                if is_required {
                    self.errors.add(field, required(field));
                }
                None
            }
            Some(s) => Email::parse(s)
                .map_err(|_| {
                    self.errors
                        .add(field, format!("{field} must be a valid email address."))
                })
                .ok(),
        }
    }

    fn culture(
        &mut self,
        field: &str,
        value: &Option<String>,
        is_required: bool,
    ) -> Option<Culture> {
        match present(value) {
            None => {
                if is_required {
                    self.errors.add(field, required(field));
                }
                None
            }
            Some(s) => Culture::parse(s)
                .map_err(|_| {
                    self.errors
                        .add(field, format!("{field} must be one of: es, en."))
                })
                .ok(),
        }
    }

    /// An optional instant in UTC, ISO 8601 (RFC 3339 with `Z` or `+00:00`).
    fn utc_instant(&mut self, field: &str, value: &Option<String>) -> Option<OffsetDateTime> {
        let text = present(value)?;
        match OffsetDateTime::parse(text, &Rfc3339) {
            Ok(at) if at.offset().is_utc() => Some(at),
            _ => {
                self.errors.add(
                    field,
                    format!(
                        "{field} must be a UTC date and time in ISO 8601, such as \
                         2026-11-23T12:00:00Z."
                    ),
                );
                None
            }
        }
    }

    /// A currency code that must equal the request's currency, when that one is known.
    fn same_currency(&mut self, field: &str, value: &Option<String>, currency: Option<Currency>) {
        match (present(value), currency) {
            (None, _) => self.errors.add(field, required(field)),
            (Some(code), Some(currency)) if code != currency.code() => self.errors.add(
                field,
                format!("{field} must equal CurrencyCode ({}).", currency.code()),
            ),
            _ => {}
        }
    }

    fn line_amount(
        &mut self,
        field: &str,
        value: Option<Decimal>,
        currency: Option<Currency>,
    ) -> Option<LineAmount> {
        let Some(value) = value else {
            self.errors.add(field, required(field));
            return None;
        };
        let currency = currency?;
        LineAmount::new(value, currency)
            .map_err(|e| self.errors.add(field, amount_message(field, e, currency)))
            .ok()
    }
}

/// Which request is being validated: their required fields differ (spec 2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionFlow {
    /// POST /pay/api/start-payment: callbacks required.
    IntegratedCheckout,
    /// POST /pay/api/generate-payment-link: description, email and culture required;
    /// no callbacks.
    PaymentLink,
}

impl SessionRequest {
    /// Checks every field for `flow`, the callback URLs against `rule`; reports every failure
    /// at once, keyed by PascalCase name.
    pub fn validate(
        &self,
        flow: SessionFlow,
        rule: CallbackRule,
    ) -> Result<NewSession, ValidationErrors> {
        let mut c = Checker {
            errors: ValidationErrors::new(),
        };
        let is_link = flow == SessionFlow::PaymentLink;

        let callbacks = if is_link {
            None
        } else {
            let success = c.url("CallbackSuccessUrl", &self.callback_success_url, true, rule);
            let fail = c.url("CallbackFailUrl", &self.callback_fail_url, true, rule);
            let back = c.url("CallbackBackUrl", &self.callback_back_url, false, rule);
            success.zip(fail).map(|(success, fail)| Callbacks {
                success,
                fail,
                back,
            })
        };

        let currency = match present(&self.currency_code) {
            None => {
                c.errors.add("CurrencyCode", required("CurrencyCode"));
                None
            }
            Some(code) => Currency::parse(code)
                .map_err(|_| {
                    c.errors.add(
                        "CurrencyCode",
                        "CurrencyCode must be an ISO 4217 currency code such as CRC or USD.",
                    )
                })
                .ok(),
        };

        let amount = match (self.total_transaction_amount, currency) {
            (None, _) => {
                c.errors
                    .add("TotalTransactionAmount", required("TotalTransactionAmount"));
                None
            }
            (Some(value), Some(currency)) => Amount::new(value, currency)
                .map_err(|e| {
                    c.errors.add(
                        "TotalTransactionAmount",
                        amount_message("TotalTransactionAmount", e, currency),
                    )
                })
                .ok(),
            (Some(value), None) => {
                if value <= Decimal::ZERO {
                    c.errors.add(
                        "TotalTransactionAmount",
                        "TotalTransactionAmount must be greater than 0.",
                    );
                }
                None
            }
        };

        let terminal = c.optional_text(
            "TerminalNumber",
            &self.terminal_number,
            TerminalNumber::parse,
        );
        let reference = c.required_text(
            "TransactionReferenceNumber",
            &self.transaction_reference_number,
            MerchantReference::parse,
        );
        let description = if is_link {
            c.required_text(
                "GeneralPurchaseDescription",
                &self.general_purchase_description,
                without_hidden_format(DisplayText::parse),
            )
        } else {
            c.optional_text(
                "GeneralPurchaseDescription",
                &self.general_purchase_description,
                without_hidden_format(DisplayText::parse),
            )
        };
        let email = c.email("UserEmail", &self.user_email, is_link);
        let culture = c.culture("Culture", &self.culture, is_link);

        if self.additional_charges.len() > MAX_CHARGES {
            c.errors.add(
                "AdditionalCharges",
                format!("AdditionalCharges may hold at most {MAX_CHARGES} entries."),
            );
        }
        let charges: Vec<Option<Charge>> = self
            .additional_charges
            .iter()
            .take(MAX_CHARGES)
            .enumerate()
            .map(|(i, charge)| {
                let f = |name: &str| format!("AdditionalCharges[{i}].{name}");
                let name = c.optional_text(
                    &f("ChargeName"),
                    &charge.charge_name,
                    without_hidden_format(DisplayText::parse),
                );
                c.same_currency(
                    &f("ChargeCurrencyCode"),
                    &charge.charge_currency_code,
                    currency,
                );
                let amount = c.line_amount(&f("ChargeAmount"), charge.charge_amount, currency);
                amount.map(|amount| Charge { name, amount })
            })
            .collect();

        if self.items.len() > MAX_ITEMS {
            c.errors.add(
                "Items",
                format!("Items may hold at most {MAX_ITEMS} entries."),
            );
        }
        let items: Vec<Option<Item>> = self
            .items
            .iter()
            .take(MAX_ITEMS)
            .enumerate()
            .map(|(i, item)| {
                let f = |name: &str| format!("Items[{i}].{name}");
                let code = c.optional_text(
                    &f("ItemCode"),
                    &item.item_code,
                    without_hidden_format(ItemCode::parse),
                );
                let description = c.optional_text(
                    &f("Description"),
                    &item.description,
                    without_hidden_format(DisplayText::parse),
                );
                let quantity = match item.quantity {
                    None => {
                        c.errors.add(f("Quantity"), required(&f("Quantity")));
                        None
                    }
                    Some(q) => match u32::try_from(q) {
                        Ok(q @ 1..=1_000_000) => Some(q),
                        _ => {
                            c.errors.add(
                                f("Quantity"),
                                format!("{} must be between 1 and 1000000.", f("Quantity")),
                            );
                            None
                        }
                    },
                };
                c.same_currency(&f("CurrencyCode"), &item.currency_code, currency);
                let amount = c.line_amount(&f("Amount"), item.amount, currency);
                quantity.zip(amount).map(|(quantity, amount)| Item {
                    code,
                    quantity,
                    description,
                    amount,
                })
            })
            .collect();

        let expires_at = c.utc_instant("ExpirationDateTime", &self.expiration_date_time);
        let metadata = c.metadata(&self.metadata);
        let capture_method = present(&self.capture_method).and_then(|m| {
            let parsed = CaptureMethod::parse(m);
            if parsed.is_none() {
                c.errors.add(
                    "CaptureMethod",
                    "CaptureMethod must be automatic or manual.",
                );
            }
            parsed
        });

        let errors = c.errors;
        match (amount, reference) {
            (Some(amount), Some(reference)) if errors.is_empty() => Ok(NewSession {
                callbacks,
                amount,
                terminal,
                reference,
                description,
                email,
                culture,
                items: items.into_iter().flatten().collect(),
                charges: charges.into_iter().flatten().collect(),
                expires_at,
                metadata,
                capture_method,
            }),
            _ => Err(errors),
        }
    }
}
