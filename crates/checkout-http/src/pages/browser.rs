//! What the pages read from and set on the browser: the CSRF cookie and token, and the
//! `Accept-Language` header.

use actix_web::cookie::Cookie;
use actix_web::{HttpRequest, HttpResponse};

use super::csrf;
use super::Pages;

/// The browser's CSRF secret, and the cookie to set when it had none.
pub fn browser_secret(pages: &Pages, req: &HttpRequest) -> (String, Option<Cookie<'static>>) {
    match csrf::browser_secret(req) {
        Some(secret) => (secret, None),
        None => {
            let secret = csrf::new_browser_secret().unwrap_or_default();
            let cookie = csrf::cookie(&secret, pages.cookies_secure());
            (secret, Some(cookie))
        }
    }
}

/// Whether the request's CSRF token matches its cookie for `session_id`.
pub fn csrf_ok(pages: &Pages, req: &HttpRequest, session_id: &str, token: Option<&str>) -> bool {
    match (csrf::browser_secret(req), token) {
        (Some(secret), Some(token)) => pages.csrf.verify(&secret, session_id, token),
        _ => false,
    }
}

/// The browser's `Accept-Language` header, for [`Lang::choose`].
pub fn accept_language(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(actix_web::http::header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
}

/// Sets `cookie` on `response` when there is one.
pub fn with_cookie(mut response: HttpResponse, cookie: Option<Cookie<'static>>) -> HttpResponse {
    if let Some(cookie) = cookie {
        if let Err(e) = response.add_cookie(&cookie) {
            tracing::warn!(error = %e, "could not set the CSRF cookie");
        }
    }
    response
}
