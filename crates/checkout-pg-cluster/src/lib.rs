//! A private PostgreSQL cluster made with the system's PostgreSQL programs, for the server's
//! sandbox mode ([`LocalCluster::persistent`]) and for tests ([`LocalCluster::ephemeral`],
//! [`LocalCluster::shared`]). Not an adapter: the PostgreSQL adapter is `checkout-postgres`,
//! the test-database harness over these clusters is `checkout-test-db`.
//!
//! The server listens on a unix socket only (`listen_addresses = ''`), in a short folder
//! (socket paths are limited to about 107 bytes), with `trust` authentication for the
//! superuser `postgres`: the socket's folder is private (0700), so only the cluster's owner
//! (and root) can connect. As root the programs run as the `postgres` user (else `nobody`)
//! through `runuser`, and the cluster's folders belong to that user.

mod binaries;
mod lock;
mod owner;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{bail, Context};

pub use binaries::{BinariesNotFound, PgBinaries, DEBIAN_PACKAGE};
pub use owner::effective_uid;
use owner::{run, Owner};

use crate::lock::{fingerprint, ProcessLock, DEFAULT_WAIT};

/// The port a started cluster uses. With no TCP listener it only names the socket file
/// (`.s.PGSQL.5432`), which lives in the cluster's own folder, so clusters never clash.
pub const PORT: u16 = 5432;

/// The superuser every cluster is created with.
pub const SUPERUSER: &str = "postgres";

/// The database [`LocalCluster::url`] names: the one `initdb` creates.
pub const DEFAULT_DATABASE: &str = "postgres";

/// The longest socket folder used as is; longer ones get a short folder under `/tmp`.
const SOCKET_DIR_MAX: usize = 90;

/// How much a cluster may trade durability for speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    /// PostgreSQL's defaults: fsync on, synchronous commit, full page writes.
    Full,
    /// For throwaway test data: `fsync`, `synchronous_commit` and `full_page_writes` off.
    Relaxed,
}

/// What dropping the handle does.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OnDrop {
    /// Nothing: the server keeps running.
    Leave,
    /// Stops the server (fast shutdown: a clean checkpoint).
    Stop,
    /// Stops the server at once and deletes this folder (ephemeral clusters).
    StopAndRemove(PathBuf),
}

/// A PostgreSQL server on a unix socket, made from the system's programs.
#[derive(Debug)]
pub struct LocalCluster {
    bins: PgBinaries,
    owner: Owner,
    data_dir: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    started: bool,
    on_drop: OnDrop,
}

/// Percent-encodes a URL component, leaving unreserved characters and `/`.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The URL of `database` on the server whose socket is in `socket_dir`.
pub fn socket_url(socket_dir: &Path, port: u16, database: &str) -> String {
    format!(
        "postgres://{SUPERUSER}@/{}?host={}&port={port}",
        encode(database),
        encode(&socket_dir.to_string_lossy()),
    )
}

/// `pg_ctl` hands paths to a shell: refuse the characters that would break its quoting.
fn check_path(path: &Path) -> anyhow::Result<()> {
    let s = path
        .to_str()
        .with_context(|| format!("{} is not valid UTF-8", path.display()))?;
    if s.chars()
        .any(|c| c.is_control() || matches!(c, '\'' | '"' | '$' | '`' | '\\'))
    {
        bail!("{s} holds a quote, `$`, `\\` or control character; choose another folder");
    }
    Ok(())
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    let path =
        std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))?;
    check_path(&path)?;
    Ok(path)
}

/// True when `dir` holds an initialised cluster.
fn is_cluster(dir: &Path) -> bool {
    dir.join("PG_VERSION").is_file()
}

/// The socket folder for a data folder: itself when short enough, else a folder under
/// `/tmp` named after it.
fn socket_dir_for(data_dir: &Path) -> PathBuf {
    if data_dir.as_os_str().len() <= SOCKET_DIR_MAX {
        data_dir.to_path_buf()
    } else {
        let hash = fingerprint(data_dir.as_os_str().as_encoded_bytes());
        PathBuf::from(format!("/tmp/hc-s-{hash:016x}"))
    }
}

/// A new empty folder `/tmp/hc-<kind>-<pid>-<n>` for a throwaway cluster, owned by `owner`.
fn fresh_folder(owner: &Owner, kind: &str) -> anyhow::Result<PathBuf> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let base = PathBuf::from(format!("/tmp/hc-{kind}-{}-{n}", std::process::id()));
    if base.exists() {
        std::fs::remove_dir_all(&base)
            .with_context(|| format!("removing the leftover {}", base.display()))?;
    }
    owner.prepare_dir(&base)?;
    Ok(base)
}

/// Runs `initdb` into `dir` (which must exist, empty, owned by `owner`) and writes the
/// cluster's settings.
fn initdb(
    bins: &PgBinaries,
    owner: &Owner,
    dir: &Path,
    durability: Durability,
) -> anyhow::Result<()> {
    let mut cmd = owner.command(&bins.program("initdb"));
    cmd.arg("-D")
        .arg(dir)
        .args(["-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C"]);
    if durability == Durability::Relaxed {
        cmd.arg("--no-sync");
    }
    run(cmd, "initdb")?;
    let mut settings = String::from(
        "\n# Written by checkout-pg-cluster: a private cluster on a unix socket only.\n\
         listen_addresses = ''\n\
         unix_socket_permissions = 0700\n",
    );
    if durability == Durability::Relaxed {
        settings.push_str(
            "# Throwaway test data: speed over durability.\n\
             fsync = off\n\
             synchronous_commit = off\n\
             full_page_writes = off\n\
             max_connections = 200\n",
        );
    }
    let conf = dir.join("postgresql.conf");
    let mut text =
        std::fs::read_to_string(&conf).with_context(|| format!("reading {}", conf.display()))?;
    text.push_str(&settings);
    std::fs::write(&conf, text).with_context(|| format!("writing {}", conf.display()))
}

/// Initialises a cluster in `data_dir` through a sibling folder renamed into place, so that
/// an interrupted `initdb` never leaves a half-made cluster under the real name.
fn init_atomically(
    bins: &PgBinaries,
    owner: &Owner,
    data_dir: &Path,
    durability: Durability,
) -> anyhow::Result<()> {
    if let Ok(mut entries) = std::fs::read_dir(data_dir) {
        if entries.next().is_some() {
            bail!(
                "{} is neither empty nor a PostgreSQL data folder; choose another folder",
                data_dir.display()
            );
        }
    }
    let mut tmp = data_dir.as_os_str().to_owned();
    tmp.push(".init");
    let tmp = PathBuf::from(tmp);
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("removing {}", tmp.display()))?;
    }
    owner.prepare_dir(&tmp)?;
    if let Err(e) = initdb(bins, owner, &tmp, durability) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, data_dir)
        .with_context(|| format!("moving the new cluster to {}", data_dir.display()))
}

impl LocalCluster {
    /// A new throwaway cluster in a fresh folder under `/tmp`, with durability off (`fsync`,
    /// `synchronous_commit` and `full_page_writes` off). Dropping the handle stops the server
    /// and deletes the folder. Blocks for `initdb` and the start (a few seconds): call it from
    /// `spawn_blocking` in async code.
    pub fn ephemeral() -> anyhow::Result<LocalCluster> {
        let mut cluster = LocalCluster::made_afresh("e", PORT)?;
        cluster.start()?;
        Ok(cluster)
    }

    /// A cluster made by `initdb` (durability off) in a fresh folder under `/tmp` whose name
    /// starts with `prefix`, to listen on `port`, not started yet; dropping the handle stops
    /// the server and deletes the folder.
    fn made_afresh(prefix: &str, port: u16) -> anyhow::Result<LocalCluster> {
        let bins = PgBinaries::find()?;
        let owner = Owner::detect()?;
        let base = fresh_folder(&owner, prefix)?;
        // Built first, so that a failed initdb still removes the folder on drop.
        let cluster = LocalCluster {
            bins,
            owner,
            socket_dir: base.clone(),
            data_dir: base.join("data"),
            port,
            started: false,
            on_drop: OnDrop::StopAndRemove(base),
        };
        cluster.owner.prepare_dir(&cluster.data_dir)?;
        initdb(
            &cluster.bins,
            &cluster.owner,
            &cluster.data_dir,
            Durability::Relaxed,
        )?;
        Ok(cluster)
    }

    /// Makes this cluster's data folder with durability off, all at once or not at all.
    fn init_throwaway(&self) -> anyhow::Result<()> {
        init_atomically(&self.bins, &self.owner, &self.data_dir, Durability::Relaxed)
    }

    /// The folder `dir` of a lasting cluster taken for this process (other callers for it
    /// wait), with the binaries and the user that run the cluster, checked to reach `dir`.
    fn taken(dir: &Path) -> anyhow::Result<(ProcessLock, PgBinaries, Owner)> {
        let lock = ProcessLock::acquire(&format!("cluster {}", dir.display()), DEFAULT_WAIT)?;
        let bins = PgBinaries::find()?;
        let owner = Owner::detect()?;
        owner.check_reachable(dir)?;
        Ok((lock, bins, owner))
    }

    /// The cluster kept in `data_dir` (made there on first use, with PostgreSQL's full
    /// durability), started if it is not running. Dropping the handle stops the server if
    /// this handle started it; a server found already running (started by another process,
    /// or left by one that was killed) is left running. Blocks: call it from `spawn_blocking`
    /// in async code. Concurrent callers for one folder are serialised.
    pub fn persistent(data_dir: impl AsRef<Path>) -> anyhow::Result<LocalCluster> {
        let data_dir = absolute(data_dir.as_ref())?;
        let (_lock, bins, owner) = LocalCluster::taken(&data_dir)?;
        if !is_cluster(&data_dir) {
            init_atomically(&bins, &owner, &data_dir, Durability::Full)?;
        }
        let socket_dir = socket_dir_for(&data_dir);
        if socket_dir != data_dir {
            owner.prepare_dir(&socket_dir)?;
        }
        let mut cluster = LocalCluster {
            bins,
            owner,
            data_dir,
            socket_dir,
            port: PORT,
            started: false,
            on_drop: OnDrop::Leave,
        };
        if !cluster.adopt_running()? {
            cluster.start()?;
            cluster.on_drop = OnDrop::Stop;
        }
        Ok(cluster)
    }

    /// Like [`LocalCluster::ephemeral`], and also listening on `127.0.0.1:<port>` (a free
    /// port, see [`LocalCluster::port`]) with TLS on, serving the PEM certificate chain
    /// `cert_pem` and the PEM private key `key_pem`. TCP connections must use TLS
    /// (`hostssl`, trust authentication): for tests of TLS to the database.
    pub fn ephemeral_tls(cert_pem: &[u8], key_pem: &[u8]) -> anyhow::Result<LocalCluster> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("finding a free port")?
            .port();
        let mut cluster = LocalCluster::made_afresh("t", port)?;
        let dir = &cluster.data_dir;
        cluster
            .owner
            .write_private_file(&dir.join("server.crt"), cert_pem)?;
        cluster
            .owner
            .write_private_file(&dir.join("server.key"), key_pem)?;
        let conf = dir.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf)
            .with_context(|| format!("reading {}", conf.display()))?;
        text.push_str(
            "\n# A test cluster with TLS on loopback.\n\
             listen_addresses = '127.0.0.1'\n\
             ssl = on\n\
             ssl_cert_file = 'server.crt'\n\
             ssl_key_file = 'server.key'\n",
        );
        std::fs::write(&conf, text).with_context(|| format!("writing {}", conf.display()))?;
        let hba = dir.join("pg_hba.conf");
        let mut text =
            std::fs::read_to_string(&hba).with_context(|| format!("reading {}", hba.display()))?;
        // TCP only over TLS: the first matching line wins.
        text.insert_str(
            0,
            "hostnossl all all 0.0.0.0/0 reject\nhostssl all all 127.0.0.1/32 trust\n",
        );
        std::fs::write(&hba, text).with_context(|| format!("writing {}", hba.display()))?;
        cluster.start()?;
        Ok(cluster)
    }

    /// A throwaway-durability cluster in `dir` (data in `dir/data`, socket in `dir`) that
    /// outlives this process: started (and made, on first use) if it is not running, left
    /// running when the handle is dropped, so that later processes reuse it. This is the test
    /// harness's cluster, one per test run; stop it with [`LocalCluster::stop`] or
    /// `pg_ctl stop -D dir/data`. Concurrent callers for one folder are serialised. Keep
    /// `dir` short: the socket lives there.
    pub fn shared(dir: impl AsRef<Path>) -> anyhow::Result<LocalCluster> {
        let base = absolute(dir.as_ref())?;
        let (_lock, bins, owner) = LocalCluster::taken(&base)?;
        owner.prepare_dir(&base)?;
        let mut cluster = LocalCluster {
            bins,
            owner,
            data_dir: base.join("data"),
            socket_dir: base,
            port: PORT,
            started: false,
            on_drop: OnDrop::Leave,
        };
        if cluster.adopt_running()? {
            return Ok(cluster);
        }
        let existed = is_cluster(&cluster.data_dir);
        if !existed {
            cluster.init_throwaway()?;
        }
        match cluster.start() {
            Ok(()) => Ok(cluster),
            Err(e) if existed => {
                // Throwaway data that no longer starts (a crash, another PostgreSQL version):
                // make it anew.
                tracing::warn!(error = %e, "the shared test cluster did not start; recreating it");
                std::fs::remove_dir_all(&cluster.data_dir)
                    .with_context(|| format!("removing {}", cluster.data_dir.display()))?;
                cluster.init_throwaway()?;
                cluster.start()?;
                Ok(cluster)
            }
            Err(e) => Err(e),
        }
    }

    /// A `postgres://` URL of the `postgres` database, for diesel-async and tokio-postgres:
    /// `postgres://postgres@/postgres?host=<socket folder>&port=5432`.
    pub fn url(&self) -> String {
        self.url_for(DEFAULT_DATABASE)
    }

    /// A `postgres://` URL of the database `database` of this cluster.
    pub fn url_for(&self, database: &str) -> String {
        socket_url(&self.socket_dir, self.port, database)
    }

    /// The data folder.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The folder holding the server's unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The port (it names the socket file).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// True when this handle started the server, false when it found it running.
    pub fn was_started(&self) -> bool {
        self.started
    }

    /// The folder of the PostgreSQL programs used.
    pub fn binaries(&self) -> &PgBinaries {
        &self.bins
    }

    /// Stops the server now, whoever started it (an ephemeral cluster's folder is deleted
    /// too), and reports a failure instead of logging it as a drop would.
    pub fn stop(mut self) -> anyhow::Result<()> {
        if self.on_drop == OnDrop::Leave {
            self.on_drop = OnDrop::Stop;
        }
        self.release()
    }

    /// The server log, inside the data folder.
    fn log_file(&self) -> PathBuf {
        self.data_dir.join("postgres.log")
    }

    /// When the server already runs, takes its socket folder and port from its
    /// `postmaster.pid` and returns true.
    fn adopt_running(&mut self) -> anyhow::Result<bool> {
        let pid_file = self.data_dir.join("postmaster.pid");
        let Ok(text) = std::fs::read_to_string(&pid_file) else {
            return Ok(false);
        };
        let mut status = self.owner.command(&self.bins.program("pg_ctl"));
        status.arg("status").arg("-D").arg(&self.data_dir);
        let running = status
            .output()
            .context("running pg_ctl status")?
            .status
            .success();
        if !running {
            return Ok(false);
        }
        // Lines: pid, data folder, start time, port, socket folder, listen address, ...
        let lines: Vec<&str> = text.lines().collect();
        if let Some(port) = lines.get(3).and_then(|p| p.trim().parse().ok()) {
            self.port = port;
        }
        if let Some(dir) = lines.get(4).map(|d| d.trim()).filter(|d| !d.is_empty()) {
            self.socket_dir = PathBuf::from(dir.split(',').next().unwrap_or(dir).trim());
        }
        Ok(true)
    }

    fn start(&mut self) -> anyhow::Result<()> {
        check_path(&self.socket_dir)?;
        let log = self.log_file();
        let mut cmd = self.owner.command(&self.bins.program("pg_ctl"));
        cmd.args(["start", "-w", "-t", "60", "-s", "-D"])
            .arg(&self.data_dir)
            .arg("-l")
            .arg(&log)
            .arg("-o")
            .arg(format!(
                "-k '{}' -p {}",
                self.socket_dir.display(),
                self.port
            ));
        if let Err(e) = run(cmd, "starting PostgreSQL") {
            let tail = std::fs::read_to_string(&log)
                .map(|t| {
                    let lines: Vec<&str> = t.lines().collect();
                    lines[lines.len().saturating_sub(15)..].join("\n")
                })
                .unwrap_or_default();
            return Err(e.context(format!(
                "PostgreSQL in {} did not start; the end of {}:\n{tail}",
                self.data_dir.display(),
                log.display()
            )));
        }
        self.started = true;
        Ok(())
    }

    fn stop_server(&self, mode: &str) -> anyhow::Result<()> {
        let mut cmd = self.owner.command(&self.bins.program("pg_ctl"));
        cmd.args(["stop", "-w", "-t", "60", "-s", "-m", mode, "-D"])
            .arg(&self.data_dir);
        run(cmd, "stopping PostgreSQL").map(drop)
    }

    /// Does what dropping promises, once.
    fn release(&mut self) -> anyhow::Result<()> {
        match std::mem::replace(&mut self.on_drop, OnDrop::Leave) {
            OnDrop::Leave => Ok(()),
            OnDrop::Stop => self.stop_server("fast"),
            OnDrop::StopAndRemove(base) => {
                let stopped = if self.started {
                    self.stop_server("immediate")
                } else {
                    Ok(())
                };
                std::fs::remove_dir_all(&base)
                    .with_context(|| format!("removing {}", base.display()))?;
                stopped
            }
        }
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            tracing::warn!(error = %format!("{e:#}"), "releasing the private PostgreSQL cluster failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_encode_the_socket_folder() {
        assert_eq!(encode("/tmp/hc-pg-0"), "/tmp/hc-pg-0");
        assert_eq!(encode("/tmp/a b&c"), "/tmp/a%20b%26c");
    }

    #[test]
    fn long_data_folders_get_a_short_socket_folder() {
        let short = Path::new("/var/lib/hc/postgres");
        assert_eq!(socket_dir_for(short), short);
        let long = PathBuf::from(format!("/{}", "x".repeat(120)));
        let socket = socket_dir_for(&long);
        assert!(
            socket.to_string_lossy().starts_with("/tmp/hc-s-"),
            "{}",
            socket.display()
        );
        assert!(socket.as_os_str().len() + "/.s.PGSQL.5432".len() < 107);
        assert_eq!(socket, socket_dir_for(&long), "stable for one folder");
    }

    #[test]
    fn shell_breaking_paths_are_refused() {
        assert!(check_path(Path::new("/tmp/ok-dir_1")).is_ok());
        assert!(check_path(Path::new("/tmp/it's")).is_err());
        assert!(check_path(Path::new("/tmp/$HOME")).is_err());
    }
}
