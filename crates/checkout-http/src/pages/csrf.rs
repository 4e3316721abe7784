//! CSRF protection of the page forms: a random per-browser cookie, and a form token that is
//! an HMAC-SHA256 of that cookie and the session id under a server key. A forged form cannot
//! carry a token that matches the payer's cookie, and a token is good for one session only.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::HttpRequest;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::hmac;

/// The cookie holding the browser's CSRF secret.
pub const COOKIE: &str = "hc_csrf";

/// The server's CSRF key.
pub struct CsrfKey(hmac::Key);

impl std::fmt::Debug for CsrfKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CsrfKey(***)")
    }
}

impl CsrfKey {
    /// A key from 32 secret bytes (the server derives them from its signing key, so that
    /// every instance sharing that key accepts the others' forms).
    pub fn new(secret: &[u8; 32]) -> Self {
        CsrfKey(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    /// The form token for `browser_secret` and `session_id`.
    pub fn token(&self, browser_secret: &str, session_id: &str) -> String {
        let tag = hmac::sign(&self.0, message(browser_secret, session_id).as_bytes());
        URL_SAFE_NO_PAD.encode(tag.as_ref())
    }

    /// Whether `token` is the token of `browser_secret` and `session_id` (constant time).
    pub fn verify(&self, browser_secret: &str, session_id: &str, token: &str) -> bool {
        let Ok(tag) = URL_SAFE_NO_PAD.decode(token.trim()) else {
            return false;
        };
        hmac::verify(
            &self.0,
            message(browser_secret, session_id).as_bytes(),
            &tag,
        )
        .is_ok()
    }
}

fn message(browser_secret: &str, session_id: &str) -> String {
    format!("hosted-checkout csrf v1|{browser_secret}|{session_id}")
}

/// The browser's CSRF secret from its cookie, if it sent one.
pub fn browser_secret(req: &HttpRequest) -> Option<String> {
    req.cookie(COOKIE)
        .map(|c| c.value().to_owned())
        .filter(|v| v.len() >= 32)
}

/// A new browser secret (32 random bytes), or `None` if the OS has no randomness.
pub fn new_browser_secret() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes).ok()?;
    Some(URL_SAFE_NO_PAD.encode(bytes))
}

/// The cookie carrying `secret`: `HttpOnly`, `SameSite=Strict`, for `/pay` only, and
/// `Secure` when `secure` (the public base URL is https; a browser or HTTP client drops a
/// `Secure` cookie over plain http, such as the sandbox's).
pub fn cookie(secret: &str, secure: bool) -> Cookie<'static> {
    Cookie::build(COOKIE, secret.to_owned())
        .path("/pay")
        .secure(secure)
        .http_only(true)
        .same_site(SameSite::Strict)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_secure_only_over_https() {
        let https = cookie("s", true).to_string();
        assert!(
            https.contains("Secure") && https.contains("HttpOnly"),
            "{https}"
        );
        let http = cookie("s", false).to_string();
        assert!(
            !http.contains("Secure") && http.contains("HttpOnly"),
            "{http}"
        );
    }

    #[test]
    fn a_token_verifies_for_its_browser_and_session_only() {
        let key = CsrfKey::new(&[7; 32]);
        let secret = new_browser_secret().unwrap_or_default();
        let token = key.token(&secret, "session-a");
        assert!(key.verify(&secret, "session-a", &token));
        assert!(!key.verify(&secret, "session-b", &token));
        let other = new_browser_secret().unwrap_or_default();
        assert!(!key.verify(&other, "session-a", &token));
        assert!(!key.verify(&secret, "session-a", "not-a-token"));
        assert!(!key.verify(&secret, "session-a", ""));
        let other_key = CsrfKey::new(&[8; 32]);
        assert!(!other_key.verify(&secret, "session-a", &token));
    }
}
