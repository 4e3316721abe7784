//! The bearer-token extractor of the protected routes (spec 5).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::AUTHORIZATION;
use actix_web::{web, FromRequest, HttpRequest};
use checkout_domain::auth::Claims;

use crate::problem::ApiError;
use crate::AppState;

/// The authenticated merchant terminal: a valid token with the role SvcTerminal.
#[derive(Debug, Clone)]
pub struct Caller(pub Claims);

/// The token of an `Authorization: Bearer <token>` header, if there is one.
fn bearer(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_owned())
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let state = state.ok_or_else(|| {
                ApiError::from(checkout_domain::CheckoutError::Unknown(anyhow::anyhow!(
                    "application state missing"
                )))
            })?;
            let claims = state.checkout.authenticate(token.as_deref()).await?;
            Ok(Caller(claims))
        })
    }
}
