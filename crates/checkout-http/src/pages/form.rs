//! The page forms as posted (`application/x-www-form-urlencoded`). Every field is optional so
//! that a missing one is a message, never actix's default error.

use serde::de::DeserializeOwned;
use serde::Deserialize;

/// The card form.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PaymentForm {
    /// The session.
    pub checkout_session_id: Option<String>,
    /// The CSRF token.
    pub csrf_token: Option<String>,
    /// The page language.
    pub lg: Option<String>,
    /// Cardholder name.
    pub cardholder_name: Option<String>,
    /// Card number.
    pub card_number: Option<String>,
    /// Expiry, MM/YY.
    pub card_expiry: Option<String>,
    /// CVV.
    pub card_cvv: Option<String>,
    /// The card-testing guard's proof of work: the challenge's salt.
    pub pow_salt: Option<String>,
    /// The challenge.
    pub pow_challenge: Option<String>,
    /// The challenge's signature.
    pub pow_signature: Option<String>,
    /// The number the page's script found.
    pub pow_number: Option<String>,
}

impl std::fmt::Debug for PaymentForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaymentForm")
            .field("checkout_session_id", &self.checkout_session_id)
            .finish_non_exhaustive()
    }
}

/// The cancel and challenge forms.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ActionForm {
    /// The session (cancel form).
    pub checkout_session_id: Option<String>,
    /// The CSRF token.
    pub csrf_token: Option<String>,
    /// The page language.
    pub lg: Option<String>,
    /// `pass` or `fail` (challenge form).
    pub outcome: Option<String>,
}

/// The `lg` query parameter.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct LangQuery {
    /// `es` or `en`.
    pub lg: Option<String>,
    /// Present (`1`) after a declined card when the terminal allows another: the form says so.
    pub declined: Option<String>,
    /// The id of a re-shown form (its state is in the signed `hc_form` cookie).
    pub form: Option<String>,
    /// Present (`1`) when a card post could not be used: the form asks to type the card again.
    pub retype: Option<String>,
    /// Present (`1`) when the card-testing guard asked for a proof of work: the form carries
    /// a fresh challenge even when its `hc_form` cookie is gone (the post is decided by the
    /// guard again, whatever the address says).
    pub verify: Option<String>,
}

/// Parses a posted form; an unreadable body is an empty form.
pub fn parse<T: DeserializeOwned + Default>(body: &[u8]) -> T {
    serde_urlencoded::from_bytes(body).unwrap_or_default()
}
