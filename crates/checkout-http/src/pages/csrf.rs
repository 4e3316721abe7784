//! CSRF protection of the page forms (`docs/decisions/0013-payer-forms-csrf-and-prg.md`).
//!
//! - The browser's cookie holds a random nonce **signed by the service** (`nonce.mac`): a
//!   value the service did not issue is treated as absent, so it is never trusted.
//! - The form token is `nonce.mac` too, the MAC over that nonce **and the checkout session
//!   id** under the service key: a token is good for one session and only the service can
//!   issue one.
//! - A post is refused when the browser says it came from another site (`Sec-Fetch-Site`,
//!   else `Origin`). When the browser says it came from this origin (`Sec-Fetch-Site:
//!   same-origin`, sent by every current browser) a valid token for the session is enough,
//!   so another tab's cookie can never break a form already open; without that header the
//!   token must also match the cookie's nonce.
//! - The cookie is `SameSite=Lax`, so a payer arriving from webmail or from the shop brings
//!   it along, and it is set only when the browser sent no valid one: a page never replaces
//!   the nonce an open tab's token names.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::HttpRequest;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::hmac;

/// The cookie holding the browser's signed CSRF nonce.
pub const COOKIE: &str = "hc_csrf";

/// The server's CSRF key.
pub struct CsrfKey(hmac::Key);

impl std::fmt::Debug for CsrfKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CsrfKey(***)")
    }
}

/// Where a post came from, as the browser tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostSite {
    /// `Sec-Fetch-Site: same-origin`: one of this service's own pages.
    SameOrigin,
    /// Another site, or another origin of this site: never one of our forms.
    Foreign,
    /// The browser said nothing usable (an old browser, or `Origin: null`).
    Unknown,
}

impl CsrfKey {
    /// A key from 32 secret bytes (the server derives them from its signing key, so that
    /// every instance sharing that key accepts the others' forms).
    pub fn new(secret: &[u8; 32]) -> Self {
        CsrfKey(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    fn sign(&self, message: &str) -> String {
        URL_SAFE_NO_PAD.encode(hmac::sign(&self.0, message.as_bytes()).as_ref())
    }

    fn verify_mac(&self, message: &str, mac: &str) -> bool {
        URL_SAFE_NO_PAD
            .decode(mac)
            .is_ok_and(|tag| hmac::verify(&self.0, message.as_bytes(), &tag).is_ok())
    }

    /// A new cookie value (`nonce.mac`), or `None` if the OS has no randomness.
    pub fn new_cookie_value(&self) -> Option<String> {
        let mut bytes = [0u8; 32];
        getrandom::getrandom(&mut bytes).ok()?;
        let nonce = URL_SAFE_NO_PAD.encode(bytes);
        let mac = self.sign(&cookie_message(&nonce));
        Some(format!("{nonce}.{mac}"))
    }

    /// The nonce of a cookie value this service issued; `None` for any other value.
    pub fn cookie_nonce<'v>(&self, value: &'v str) -> Option<&'v str> {
        let (nonce, mac) = value.split_once('.')?;
        (nonce.len() >= 32 && self.verify_mac(&cookie_message(nonce), mac)).then_some(nonce)
    }

    /// The form token for the browser nonce `nonce` and `session_id`.
    pub fn token(&self, nonce: &str, session_id: &str) -> String {
        format!("{nonce}.{}", self.sign(&token_message(nonce, session_id)))
    }

    /// Whether a post with `token` for `session_id`, from `site`, with the browser's cookie
    /// nonce `cookie_nonce`, may act: a token of this service for this session, from no other
    /// site, and either vouched for by the browser as same-origin or naming the cookie's
    /// nonce (checked as a MAC, in constant time).
    pub fn accepts(
        &self,
        site: PostSite,
        cookie_nonce: Option<&str>,
        session_id: &str,
        token: Option<&str>,
    ) -> bool {
        let Some((nonce, mac)) = token.and_then(|t| t.trim().split_once('.')) else {
            return false;
        };
        match site {
            PostSite::Foreign => false,
            PostSite::SameOrigin => self.verify_mac(&token_message(nonce, session_id), mac),
            PostSite::Unknown => {
                cookie_nonce.is_some_and(|c| self.verify_mac(&token_message(c, session_id), mac))
            }
        }
    }
}

fn cookie_message(nonce: &str) -> String {
    format!("hosted-checkout csrf cookie v2|{nonce}")
}

fn token_message(nonce: &str, session_id: &str) -> String {
    format!("hosted-checkout csrf token v2|{nonce}|{session_id}")
}

/// The raw value of the browser's CSRF cookie, if it sent one.
pub fn cookie_value(req: &HttpRequest) -> Option<String> {
    req.cookie(COOKIE).map(|c| c.value().to_owned())
}

/// Where a post came from: `Sec-Fetch-Site` when the browser sends it, else `Origin`
/// compared with `own_origins` (`null` and a missing header say nothing).
pub fn post_site(req: &HttpRequest, own_origins: &[&str]) -> PostSite {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase())
    };
    if let Some(site) = header("sec-fetch-site") {
        return match site.as_str() {
            "same-origin" => PostSite::SameOrigin,
            // `none` is a navigation the user typed; a form post never is.
            _ => PostSite::Foreign,
        };
    }
    match header("origin") {
        None => PostSite::Unknown,
        Some(origin) if origin == "null" => PostSite::Unknown,
        Some(origin) if own_origins.iter().any(|o| o.eq_ignore_ascii_case(&origin)) => {
            PostSite::Unknown
        }
        Some(_) => PostSite::Foreign,
    }
}

/// The cookie carrying `value`: `HttpOnly`, `SameSite=Lax` (a top-level arrival from another
/// site brings it; a cross-site post does not), for `/pay` only, and `Secure` when `secure`
/// (the public base URL is https; a browser drops a `Secure` cookie over plain http, such as
/// the sandbox's).
pub fn cookie(value: &str, secure: bool) -> Cookie<'static> {
    Cookie::build(COOKIE, value.to_owned())
        .path("/pay")
        .secure(secure)
        .http_only(true)
        .same_site(SameSite::Lax)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_lax_and_secure_only_over_https() {
        let https = cookie("s", true).to_string();
        assert!(
            https.contains("Secure") && https.contains("HttpOnly") && https.contains("Lax"),
            "{https}"
        );
        let http = cookie("s", false).to_string();
        assert!(
            !http.contains("Secure") && http.contains("HttpOnly"),
            "{http}"
        );
    }

    #[test]
    fn only_cookie_values_the_service_issued_are_read() {
        let key = CsrfKey::new(&[7; 32]);
        let value = key.new_cookie_value().unwrap_or_default();
        let nonce = key.cookie_nonce(&value).expect("an issued value");
        assert!(value.starts_with(nonce));
        // Any long value, as the old check accepted, is refused now.
        assert_eq!(key.cookie_nonce(&"a".repeat(64)), None);
        let forged = format!("{nonce}.{}", "A".repeat(43));
        assert_eq!(key.cookie_nonce(&forged), None);
        assert_eq!(CsrfKey::new(&[8; 32]).cookie_nonce(&value), None);
    }

    #[test]
    fn a_token_acts_for_its_session_only_and_never_from_another_site() {
        let key = CsrfKey::new(&[7; 32]);
        let value = key.new_cookie_value().unwrap_or_default();
        let nonce = key.cookie_nonce(&value).unwrap_or_default().to_owned();
        let token = key.token(&nonce, "session-a");
        let ok = |site, cookie: Option<&str>, session, token: &str| {
            key.accepts(site, cookie, session, Some(token))
        };
        // Without fetch metadata the cookie must match.
        assert!(ok(PostSite::Unknown, Some(&nonce), "session-a", &token));
        assert!(!ok(PostSite::Unknown, None, "session-a", &token));
        assert!(!ok(PostSite::Unknown, Some("other"), "session-a", &token));
        // The browser vouching for our origin: another tab's cookie does not matter.
        assert!(ok(PostSite::SameOrigin, Some("other"), "session-a", &token));
        assert!(ok(PostSite::SameOrigin, None, "session-a", &token));
        // Never from another site, never for another session, never an unissued token.
        assert!(!ok(PostSite::Foreign, Some(&nonce), "session-a", &token));
        assert!(!ok(PostSite::SameOrigin, Some(&nonce), "session-b", &token));
        assert!(!ok(PostSite::SameOrigin, None, "session-a", "not-a-token"));
        assert!(!ok(
            PostSite::SameOrigin,
            None,
            "session-a",
            &format!("{nonce}.x")
        ));
        assert!(!key.accepts(PostSite::SameOrigin, None, "session-a", None));
        let other_key = CsrfKey::new(&[8; 32]);
        assert!(!other_key.accepts(PostSite::SameOrigin, None, "session-a", Some(&token)));
    }

    #[test]
    fn fetch_metadata_comes_first_then_the_origin() {
        use actix_web::test::TestRequest;
        let own = ["https://pay.example"];
        let site = |headers: &[(&str, &str)]| {
            let mut req = TestRequest::post();
            for (name, value) in headers {
                req = req.insert_header((*name, *value));
            }
            post_site(&req.to_http_request(), &own)
        };
        assert_eq!(
            site(&[("Sec-Fetch-Site", "same-origin")]),
            PostSite::SameOrigin
        );
        for other in ["same-site", "cross-site", "none"] {
            assert_eq!(site(&[("Sec-Fetch-Site", other)]), PostSite::Foreign);
        }
        assert_eq!(
            site(&[
                ("Sec-Fetch-Site", "cross-site"),
                ("Origin", "https://pay.example")
            ]),
            PostSite::Foreign
        );
        assert_eq!(
            site(&[("Origin", "https://evil.example")]),
            PostSite::Foreign
        );
        assert_eq!(
            site(&[("Origin", "https://pay.example")]),
            PostSite::Unknown
        );
        assert_eq!(site(&[("Origin", "null")]), PostSite::Unknown);
        assert_eq!(site(&[]), PostSite::Unknown);
    }
}
