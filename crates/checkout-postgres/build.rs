//! Rebuilds the crate when a migration changes, and hands the crate a fingerprint of the
//! migrations (names and contents) so that the test harness never reuses a stale template.

use std::fs;
use std::path::Path;

/// FNV-1a, 64 bits: stable across Rust versions, unlike `DefaultHasher`.
fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *hash ^= u64::from(*b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn hash_dir(dir: &Path, hash: &mut u64) -> std::io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        fnv1a(hash, entry.file_name().as_encoded_bytes());
        fnv1a(hash, b"\0");
        if path.is_dir() {
            hash_dir(&path, hash)?;
        } else {
            fnv1a(hash, &fs::read(&path)?);
            fnv1a(hash, b"\0");
        }
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    // Read at run time: a build script binary reused from another checkout must not hash
    // that checkout's migrations.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let migrations = Path::new(&manifest_dir).join("../../migrations");
    println!("cargo:rerun-if-changed={}", migrations.display());
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    hash_dir(&migrations, &mut hash)?;
    println!("cargo:rustc-env=CHECKOUT_MIGRATIONS_FINGERPRINT={hash:016x}");
    Ok(())
}
