//! GET /.well-known/jwks.json: the public keys that verify the service's tokens.

use actix_web::{web, HttpResponse};

use crate::AppState;

/// The token-signing keys.
///
/// The JSON Web Key Set (RFC 7517) of the keys that sign the service's access tokens, for
/// verifying a token without calling the service. Public: no bearer token is needed.
#[utoipa::path(
    get,
    path = "/.well-known/jwks.json",
    tag = "Security",
    responses(
        (status = 200, description = "JWKS", body = Object, example = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "sandbox-1", "use": "sig", "alg": "EdDSA", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]})),
        (status = 431, description = "Request headers too large: refused by the HTTP layer before any route, with no body"),
    )
)]
pub async fn jwks(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "public, max-age=300"))
        .json(&state.jwks)
}
