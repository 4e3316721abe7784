//! What the pages read from and set on the browser: the CSRF cookie and token, where a post
//! came from, and the `Accept-Language` header.

use actix_web::cookie::Cookie;
use actix_web::{HttpRequest, HttpResponse};

use super::csrf;
use super::Pages;

/// The browser's CSRF nonce, and the cookie to set when it sent no valid one. A valid cookie
/// is never replaced: an open tab's token names its nonce.
pub fn browser_nonce(pages: &Pages, req: &HttpRequest) -> (String, Option<Cookie<'static>>) {
    let sent = csrf::cookie_value(req);
    if let Some(nonce) = sent.as_deref().and_then(|v| pages.csrf.cookie_nonce(v)) {
        return (nonce.to_owned(), None);
    }
    let value = pages.csrf.new_cookie_value().unwrap_or_default();
    let nonce = pages
        .csrf
        .cookie_nonce(&value)
        .unwrap_or_default()
        .to_owned();
    (nonce, Some(csrf::cookie(&value, pages.cookies_secure())))
}

/// Whether a form post for `session_id` with `token` may act (see [`csrf`]).
pub fn csrf_ok(pages: &Pages, req: &HttpRequest, session_id: &str, token: Option<&str>) -> bool {
    let own = pages.own_origin();
    let host_origin = {
        let info = req.connection_info();
        format!("{}://{}", info.scheme(), info.host())
    };
    let site = csrf::post_site(req, &[own, host_origin.as_str()]);
    let cookie = csrf::cookie_value(req);
    let nonce = cookie.as_deref().and_then(|v| pages.csrf.cookie_nonce(v));
    pages.csrf.accepts(site, nonce, session_id, token)
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
            tracing::warn!(error = %e, "could not set a page cookie");
        }
    }
    response
}
