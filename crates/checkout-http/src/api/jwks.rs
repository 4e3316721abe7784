//! GET /.well-known/jwks.json: the public keys that verify the service's tokens.

use actix_web::{web, HttpResponse};

use crate::AppState;

/// The JSON Web Key Set of the token-signing keys.
#[utoipa::path(
    get,
    path = "/.well-known/jwks.json",
    tag = "Security",
    responses((status = 200, description = "JWKS", body = Object))
)]
pub async fn jwks(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "public, max-age=300"))
        .json(&state.jwks)
}
