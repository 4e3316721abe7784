//! Who runs the server programs. PostgreSQL refuses to run as root: as root they run as the
//! `postgres` system user (else `nobody`) through `runuser`, and the folders are given to
//! that user; as anyone else they run directly.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{anyhow, bail, Context};

/// The user that owns a cluster's files and runs its programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Owner {
    /// This process's user (not root).
    Current {
        /// Its uid.
        uid: u32,
    },
    /// A system user, switched to with `runuser` (this process is root).
    System {
        /// The user name.
        name: String,
        /// Its uid.
        uid: u32,
        /// Its primary gid.
        gid: u32,
        /// The `runuser` program.
        runuser: PathBuf,
    },
}

/// The effective uid of this process.
pub fn effective_uid() -> anyhow::Result<u32> {
    if let Ok(meta) = std::fs::metadata("/proc/self") {
        return Ok(meta.uid());
    }
    let out = Command::new("id")
        .arg("-u")
        .output()
        .context("running `id -u`")?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .context("reading the output of `id -u`")
}

/// The uid and gid of the user `name`, from `/etc/passwd`.
fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.as_slice() {
            [user, _, uid, gid, ..] if *user == name => {
                Some((uid.parse().ok()?, gid.parse().ok()?))
            }
            _ => None,
        }
    })
}

fn find_runuser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join("runuser"))
        .find(|p| p.is_file())
}

impl Owner {
    /// The owner for this process: itself, or when root the `postgres` user (else `nobody`).
    pub(crate) fn detect() -> anyhow::Result<Owner> {
        let uid = effective_uid()?;
        if uid != 0 {
            return Ok(Owner::Current { uid });
        }
        let (name, (uid, gid)) = ["postgres", "nobody"]
            .into_iter()
            .find_map(|n| lookup_user(n).map(|ids| (n.to_owned(), ids)))
            .ok_or_else(|| {
                anyhow!(
                    "PostgreSQL cannot run as root and there is no `postgres` or `nobody` user \
                     to run it as; create one (the Debian package `postgresql` does) or run as \
                     a normal user"
                )
            })?;
        let runuser = find_runuser().ok_or_else(|| {
            anyhow!(
                "running as root needs `runuser` (Debian package `util-linux`) to switch to {name}"
            )
        })?;
        Ok(Owner::System {
            name,
            uid,
            gid,
            runuser,
        })
    }

    /// The uid that owns the files.
    pub(crate) fn uid(&self) -> u32 {
        match self {
            Owner::Current { uid } | Owner::System { uid, .. } => *uid,
        }
    }

    /// A command that runs `program` as the owner, from `/` (a folder every user can enter).
    pub(crate) fn command(&self, program: &Path) -> Command {
        let mut cmd = match self {
            Owner::Current { .. } => Command::new(program),
            Owner::System { name, runuser, .. } => {
                let mut cmd = Command::new(runuser);
                cmd.arg("-u").arg(name).arg("--").arg(program);
                cmd
            }
        };
        cmd.current_dir("/");
        cmd
    }

    /// Creates `dir` (and its parents) if needed, makes it private (0700) and gives it to the
    /// owner. An existing `dir` must be a real folder (not a link) owned by the owner or by
    /// this process.
    pub(crate) fn prepare_dir(&self, dir: &Path) -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::symlink_metadata(dir) {
            Ok(meta) => {
                let ours = meta.uid() == self.uid() || Some(meta.uid()) == effective_uid().ok();
                if !meta.is_dir() || !ours {
                    bail!(
                        "refusing to use {}: it is not a folder owned by uid {}",
                        dir.display(),
                        self.uid()
                    );
                }
            }
            Err(_) => std::fs::create_dir_all(dir)
                .with_context(|| format!("creating {}", dir.display()))?,
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("making {} private", dir.display()))?;
        if let Owner::System { uid, gid, .. } = self {
            std::os::unix::fs::chown(dir, Some(*uid), Some(*gid))
                .with_context(|| format!("giving {} to uid {uid}", dir.display()))?;
        }
        Ok(())
    }

    /// Writes `bytes` to the new file `path`, mode 0600, owned by the owner (PostgreSQL
    /// refuses a private key that others can read).
    pub(crate) fn write_private_file(&self, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("creating {}", path.display()))?;
        file.write_all(bytes)
            .with_context(|| format!("writing {}", path.display()))?;
        if let Owner::System { uid, gid, .. } = self {
            std::os::unix::fs::chown(path, Some(*uid), Some(*gid))
                .with_context(|| format!("giving {} to uid {uid}", path.display()))?;
        }
        Ok(())
    }

    /// Checks that the owner can reach `dir`: every existing folder above it must be
    /// searchable by that user. Only a system owner can be locked out.
    pub(crate) fn check_reachable(&self, dir: &Path) -> anyhow::Result<()> {
        let Owner::System { name, uid, gid, .. } = self else {
            return Ok(());
        };
        for ancestor in dir.ancestors().skip(1) {
            let Ok(meta) = std::fs::metadata(ancestor) else {
                continue;
            };
            let mode = meta.mode();
            let searchable = mode & 0o001 != 0
                || (meta.uid() == *uid && mode & 0o100 != 0)
                || (meta.gid() == *gid && mode & 0o010 != 0);
            if !searchable {
                bail!(
                    "the `{name}` user that runs PostgreSQL cannot reach {}: {} is not searchable \
                     by it; choose a data folder it can reach, or allow it (chmod o+x {})",
                    dir.display(),
                    ancestor.display(),
                    ancestor.display()
                );
            }
        }
        Ok(())
    }
}

/// Runs `cmd`, failing with its output when it fails.
pub(crate) fn run(mut cmd: Command, what: &str) -> anyhow::Result<Output> {
    let out = cmd
        .output()
        .with_context(|| format!("{what}: could not run {:?}", cmd.get_program()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        bail!(
            "{what} failed ({}): {} {}",
            out.status,
            stderr.trim(),
            stdout.trim()
        );
    }
    Ok(out)
}
