//! Key files, the JWKS, and key rotation.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use checkout_domain::ports::IdentityProvider;
use checkout_identity::{BuiltinIdentity, Environment, KeySet, SigningKey};

use crate::support::*;

#[test]
fn jwks_lists_the_public_key_and_nothing_private() {
    let key = SigningKey::generate().unwrap();
    let kid = key.kid().to_owned();
    let public = *key.verifying_key().public_key();
    let jwks = KeySet::new(key).jwks();

    let keys = jwks["keys"].as_array().unwrap();
    assert_eq!(jwks.as_object().unwrap().len(), 1, "{jwks}");
    assert_eq!(keys.len(), 1);
    let jwk = keys[0].as_object().unwrap();
    let mut members: Vec<&str> = jwk.keys().map(String::as_str).collect();
    members.sort_unstable();
    assert_eq!(
        members,
        ["alg", "crv", "kid", "kty", "use", "x"],
        "no `d`: {jwks}"
    );
    assert_eq!(jwk["kty"], "OKP");
    assert_eq!(jwk["crv"], "Ed25519");
    assert_eq!(jwk["alg"], "EdDSA");
    assert_eq!(jwk["use"], "sig");
    assert_eq!(jwk["kid"], kid.as_str());
    let x = jwk["x"].as_str().unwrap();
    assert_eq!(x.len(), 43);
    assert_eq!(URL_SAFE_NO_PAD.decode(x).unwrap(), public);
}

#[tokio::test]
async fn the_jwks_kid_is_the_token_header_kid() {
    let (identity, _) = sandbox();
    let issued = identity
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    assert_eq!(
        header(issued.token.expose())["kid"],
        identity.jwks()["keys"][0]["kid"]
    );
}

#[tokio::test]
async fn a_retired_key_still_verifies_its_tokens_after_rotation() {
    let old = SigningKey::generate().unwrap();
    let old_public = old.verifying_key().clone();
    let before = BuiltinIdentity::new(config(Environment::Sandbox), KeySet::new(old), clients());
    let old_token = before
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();

    let new = SigningKey::generate().unwrap();
    let new_kid = new.kid().to_owned();
    let keys = KeySet::new(new).with_verification_key(old_public.clone());
    let after = BuiltinIdentity::new(config(Environment::Sandbox), keys, clients());
    let new_token = after
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();

    assert_eq!(
        after
            .verify(old_token.token.expose())
            .await
            .unwrap()
            .client_id,
        CLIENT
    );
    assert_eq!(
        after
            .verify(new_token.token.expose())
            .await
            .unwrap()
            .client_id,
        CLIENT
    );
    assert_eq!(header(new_token.token.expose())["kid"], new_kid.as_str());
    assert!(before.verify(new_token.token.expose()).await.is_err());

    let jwks = after.jwks();
    let kids: Vec<&str> = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap())
        .collect();
    assert_eq!(kids, [new_kid.as_str(), old_public.kid()]);
}

#[tokio::test]
async fn a_key_loaded_from_disk_verifies_tokens_signed_before_the_restart() {
    let dir = TempDir::new();
    let path = dir.path().join("keys").join("sandbox.pk8");

    let first = SigningKey::load_or_create(&path).unwrap();
    let kid = first.kid().to_owned();
    let before = BuiltinIdentity::new(config(Environment::Sandbox), KeySet::new(first), clients());
    let token = before
        .issue_token(&credentials(CLIENT, SECRET))
        .await
        .unwrap();
    drop(before);

    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        SigningKey::from_pkcs8_der(&bytes).unwrap().kid(),
        kid,
        "PKCS#8 DER"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
    }

    let again = SigningKey::load_or_create(&path).unwrap();
    assert_eq!(again.kid(), kid);
    let after = BuiltinIdentity::new(config(Environment::Sandbox), KeySet::new(again), clients());
    let claims = after.verify(token.token.expose()).await.unwrap();
    assert_eq!(claims.client_id, CLIENT);
    assert_eq!(SigningKey::load(&path).unwrap().kid(), kid);
    let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(leftovers, 1, "no temporary file is left behind");
}

#[test]
fn load_or_create_reads_a_pem_file_and_refuses_garbage() {
    let dir = TempDir::new();
    let key = SigningKey::generate().unwrap();
    let pem_path = dir.path().join("key.pem");
    std::fs::write(&pem_path, key.to_pem()).unwrap();
    assert_eq!(
        SigningKey::load_or_create(&pem_path).unwrap().kid(),
        key.kid()
    );

    let garbage = dir.path().join("garbage.pk8");
    std::fs::write(&garbage, b"not a key").unwrap();
    assert!(SigningKey::load_or_create(&garbage).is_err());
    assert_eq!(
        std::fs::read(&garbage).unwrap(),
        b"not a key",
        "never overwritten"
    );

    assert!(SigningKey::load(&dir.path().join("missing.pk8")).is_err());
}
