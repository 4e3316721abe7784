//! Files only their owner may read: keys and credentials.

use std::path::Path;

/// Options that create a new file (never an existing one) with mode 0600 from the start, so
/// that it is never readable by others, not even for an instant.
#[cfg(unix)]
pub fn private_file_options() -> std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    options
}

/// Options that create a new file (never an existing one).
#[cfg(not(unix))]
pub fn private_file_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    options
}

/// Makes `dir` and its missing parents, the new ones with mode 0700.
#[cfg(unix)]
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Makes `dir` and its missing parents.
#[cfg(not(unix))]
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}
