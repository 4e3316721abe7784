//! A lock between processes of one machine, released by the kernel when its holder exits,
//! even by a crash: no stale lock files to detect.
//!
//! On Linux it is an abstract unix socket bound under a name derived from the locked thing:
//! binding is atomic, a second bind fails with `AddrInUse`, and the name vanishes with the
//! socket. Elsewhere it falls back to a lock file made with `create_new`, taken over when it
//! is older than [`STALE_AFTER`].

use std::time::{Duration, Instant};

/// How long [`ProcessLock::acquire`] waits by default.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(180);

#[cfg(not(target_os = "linux"))]
const STALE_AFTER: Duration = Duration::from_secs(600);

/// FNV-1a, 64 bits: a stable, short name for anything.
pub(crate) fn fingerprint(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub(crate) struct ProcessLock {
    #[cfg(target_os = "linux")]
    _socket: std::os::unix::net::UnixListener,
    #[cfg(not(target_os = "linux"))]
    path: std::path::PathBuf,
}

impl ProcessLock {
    /// Takes the lock named `name`, waiting up to `wait` for another holder to let go.
    pub(crate) fn acquire(name: &str, wait: Duration) -> anyhow::Result<ProcessLock> {
        let key = format!("hosted-checkout-{:016x}", fingerprint(name.as_bytes()));
        let started = Instant::now();
        loop {
            if let Some(lock) = Self::try_acquire(&key)? {
                return Ok(lock);
            }
            if started.elapsed() > wait {
                anyhow::bail!(
                    "timed out after {} s waiting for the lock on {name}, held by another process",
                    wait.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    #[cfg(target_os = "linux")]
    fn try_acquire(key: &str) -> anyhow::Result<Option<ProcessLock>> {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixListener};

        let addr = SocketAddr::from_abstract_name(key.as_bytes())?;
        match UnixListener::bind_addr(&addr) {
            Ok(socket) => Ok(Some(ProcessLock { _socket: socket })),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Ok(None),
            Err(e) => Err(anyhow::Error::new(e).context("binding the lock socket")),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn try_acquire(key: &str) -> anyhow::Result<Option<ProcessLock>> {
        use std::fs::OpenOptions;
        use std::io::Write;

        let path = std::env::temp_dir().join(format!("{key}.lock"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                let _ = writeln!(file, "{}", std::process::id());
                Ok(Some(ProcessLock { path }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = std::fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_AFTER);
                if stale {
                    let _ = std::fs::remove_file(&path);
                }
                Ok(None)
            }
            Err(e) => Err(anyhow::Error::new(e).context("creating the lock file")),
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl Drop for ProcessLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_excludes_others_until_dropped() {
        let name = format!("lock-test-{}", std::process::id());
        let first = ProcessLock::acquire(&name, Duration::ZERO).unwrap();
        let err = ProcessLock::acquire(&name, Duration::ZERO).unwrap_err();
        assert!(err.to_string().contains("timed out"), "{err}");
        drop(first);
        ProcessLock::acquire(&name, Duration::ZERO).unwrap();
    }
}
