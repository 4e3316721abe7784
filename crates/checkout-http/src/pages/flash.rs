//! What a card form shown again after a post keeps (Post/Redirect/Get): every answer to
//! `POST /pay/process-payment` is a 303 to the session's GET page, and what that page must
//! show again travels in a signed, short-lived cookie (`hc_form`): the cardholder name, a
//! valid expiry, the failed fields and the notice above the form. Never the card number or
//! the code (`docs/decisions/0009-pages-never-show-card-data-again.md`).
//!
//! The cookie names the session and a random id that the redirect's `form=` query parameter
//! repeats, so a reload shows the same form while a fresh opening of the page shows a clean
//! one, and another session's page never shows it. It lives [`LIFETIME`], is `HttpOnly` and
//! is sent to `/pay` only.

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::HttpRequest;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use checkout_domain::card::{CardField, CardFieldError};
use ring::hmac;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// The cookie's name.
pub const COOKIE: &str = "hc_form";

/// How long a re-shown form is kept.
pub const LIFETIME: std::time::Duration = std::time::Duration::from_secs(600);

/// The notice above a re-shown form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notice {
    /// SVC_003: the processor could not be reached; nothing was charged.
    ProcessorUnreachable,
    /// SVC_004: the processor refused the request; nothing was charged.
    ProcessorRefused,
    /// SVC_006 with another card allowed.
    DeclinedTryAnother,
    /// The form's token could not be used: type the card again.
    Retype,
    /// An unexpected error; nothing the page knows of was charged.
    Unexpected,
    /// The card-testing guard wants a proof of work with the next post: the form is shown
    /// with a fresh challenge; nothing was charged and the card was not sent.
    ChallengeRequired,
}

/// A card form to show again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flash {
    /// Matches the redirect's `form=` parameter.
    pub id: String,
    /// The checkout session it belongs to.
    pub session: String,
    /// Unix time after which it is ignored.
    pub expires: i64,
    /// The cardholder name.
    pub holder: String,
    /// The expiry as `MM/YY` when it was valid, else empty.
    pub expiry: String,
    /// The failed fields, in the form's order.
    pub errors: Vec<(FieldCode, ErrorCode)>,
    /// The notice above the form.
    pub notice: Option<Notice>,
    /// The form is shown with a card-testing guard challenge (a challenged payer who
    /// mistyped keeps one), also without [`Notice::ChallengeRequired`].
    #[serde(default)]
    pub challenge: bool,
}

/// A card field as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum FieldCode {
    Name,
    Number,
    Expiry,
    Cvv,
}

/// A field error as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum ErrorCode {
    Required,
    Invalid,
    Expired,
}

impl FieldCode {
    /// The stored code of `field`.
    pub fn of(field: CardField) -> Self {
        match field {
            CardField::CardholderName => FieldCode::Name,
            CardField::CardNumber => FieldCode::Number,
            CardField::Expiry => FieldCode::Expiry,
            CardField::Cvv => FieldCode::Cvv,
        }
    }

    /// The field.
    pub fn field(self) -> CardField {
        match self {
            FieldCode::Name => CardField::CardholderName,
            FieldCode::Number => CardField::CardNumber,
            FieldCode::Expiry => CardField::Expiry,
            FieldCode::Cvv => CardField::Cvv,
        }
    }
}

impl ErrorCode {
    /// The stored code of `error`.
    pub fn of(error: CardFieldError) -> Self {
        match error {
            CardFieldError::Required => ErrorCode::Required,
            CardFieldError::Invalid => ErrorCode::Invalid,
            CardFieldError::Expired => ErrorCode::Expired,
        }
    }

    /// The error.
    pub fn error(self) -> CardFieldError {
        match self {
            ErrorCode::Required => CardFieldError::Required,
            ErrorCode::Invalid => CardFieldError::Invalid,
            ErrorCode::Expired => CardFieldError::Expired,
        }
    }
}

/// Signs and reads flashes with a key of the service.
pub struct FlashKey(hmac::Key);

impl std::fmt::Debug for FlashKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FlashKey(***)")
    }
}

impl FlashKey {
    /// A key from 32 secret bytes (derived apart from the CSRF key's).
    pub fn new(secret: &[u8; 32]) -> Self {
        let derived = hmac::sign(
            &hmac::Key::new(hmac::HMAC_SHA256, secret),
            b"hosted-checkout form flash v1",
        );
        FlashKey(hmac::Key::new(hmac::HMAC_SHA256, derived.as_ref()))
    }

    /// A new flash for `session` with a fresh random id, expiring [`LIFETIME`] from now.
    pub fn start(session: &str) -> Flash {
        let mut bytes = [0u8; 12];
        let _ = getrandom::getrandom(&mut bytes);
        Flash {
            id: URL_SAFE_NO_PAD.encode(bytes),
            session: session.to_owned(),
            expires: OffsetDateTime::now_utc().unix_timestamp() + LIFETIME.as_secs() as i64,
            ..Flash::default()
        }
    }

    /// The cookie carrying `flash`.
    pub fn cookie(&self, flash: &Flash, secure: bool) -> Cookie<'static> {
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(flash).unwrap_or_default());
        let mac = URL_SAFE_NO_PAD.encode(hmac::sign(&self.0, body.as_bytes()).as_ref());
        Cookie::build(COOKIE, format!("{body}.{mac}"))
            .path("/pay")
            .secure(secure)
            .http_only(true)
            .same_site(SameSite::Lax)
            .max_age(CookieDuration::seconds(LIFETIME.as_secs() as i64))
            .finish()
    }

    /// The flash `id` of `session` the browser sent, when it is this service's, unexpired,
    /// and that one.
    pub fn read(&self, req: &HttpRequest, session: &str, id: &str) -> Option<Flash> {
        let cookie = req.cookie(COOKIE)?;
        self.decode(cookie.value())
            .filter(|f| f.id == id && f.session == session)
            .filter(|f| f.expires >= OffsetDateTime::now_utc().unix_timestamp())
    }

    fn decode(&self, value: &str) -> Option<Flash> {
        let (body, mac) = value.split_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(mac).ok()?;
        hmac::verify(&self.0, body.as_bytes(), &tag).ok()?;
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).ok()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn request_with(cookie: &Cookie<'_>) -> HttpRequest {
        TestRequest::default()
            .cookie(Cookie::new(COOKIE, cookie.value().to_owned()))
            .to_http_request()
    }

    #[test]
    fn a_flash_is_read_back_for_its_session_and_id_only() {
        let key = FlashKey::new(&[7; 32]);
        let mut flash = FlashKey::start("session-a");
        flash.holder = "Ada Lovelace".to_owned();
        flash.errors = vec![(FieldCode::Number, ErrorCode::Invalid)];
        flash.notice = Some(Notice::Retype);
        let cookie = key.cookie(&flash, true);
        assert!(cookie.http_only().unwrap_or(false) && cookie.secure().unwrap_or(false));
        let req = request_with(&cookie);
        assert_eq!(key.read(&req, "session-a", &flash.id), Some(flash.clone()));
        assert_eq!(key.read(&req, "session-b", &flash.id), None);
        assert_eq!(key.read(&req, "session-a", "other-id"), None);
        assert_eq!(
            FlashKey::new(&[8; 32]).read(&req, "session-a", &flash.id),
            None
        );
    }

    #[test]
    fn a_challenge_notice_reads_back_and_a_flash_without_the_challenge_flag_has_none() {
        let key = FlashKey::new(&[7; 32]);
        let mut flash = FlashKey::start("s");
        flash.notice = Some(Notice::ChallengeRequired);
        let req = request_with(&key.cookie(&flash, true));
        let read = key.read(&req, "s", &flash.id).expect("the flash");
        assert_eq!(read.notice, Some(Notice::ChallengeRequired));
        assert!(!read.challenge);
        // A cookie signed before the flag existed still reads, unchallenged.
        let mut old = serde_json::to_value(FlashKey::start("s")).unwrap_or_default();
        old.as_object_mut().map(|o| o.remove("challenge"));
        let body = URL_SAFE_NO_PAD.encode(old.to_string());
        let mac = URL_SAFE_NO_PAD.encode(hmac::sign(&key.0, body.as_bytes()).as_ref());
        let read = key
            .decode(&format!("{body}.{mac}"))
            .expect("an older flash");
        assert!(!read.challenge && read.notice.is_none());
    }

    #[test]
    fn an_expired_or_altered_flash_is_ignored() {
        let key = FlashKey::new(&[7; 32]);
        let mut flash = FlashKey::start("s");
        flash.expires = OffsetDateTime::now_utc().unix_timestamp() - 1;
        let req = request_with(&key.cookie(&flash, false));
        assert_eq!(key.read(&req, "s", &flash.id), None);
        let fresh = FlashKey::start("s");
        let value = key.cookie(&fresh, false).value().to_owned();
        let (body, mac) = value.split_once('.').unwrap_or_default();
        let mut other = fresh.clone();
        other.holder = "Mallory".to_owned();
        let forged_body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&other).unwrap_or_default());
        assert_ne!(forged_body, body);
        let forged = Cookie::new(COOKIE, format!("{forged_body}.{mac}"));
        assert_eq!(key.read(&request_with(&forged), "s", &fresh.id), None);
    }
}
