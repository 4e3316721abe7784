//! A TCP front for the test cluster's unix socket that the test can take down and bring back
//! on the same port: a database outage (every open connection cut, new ones refused) without
//! stopping the cluster other tests share. Or it can blackhole: stop forwarding bytes in both
//! directions without closing any socket (new connections are accepted and hang too), as a
//! network partition does, and heal: forward again what was held, as TCP retransmits after a
//! partition.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The proxy; [`DbProxy::down`] cuts it, [`DbProxy::up`] restores it on the same port.
pub struct DbProxy {
    address: SocketAddr,
    socket: PathBuf,
    user: String,
    database: String,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
    /// True while blackholed.
    holes: watch::Sender<bool>,
}

impl DbProxy {
    /// A proxy in front of the database of `url` (the test harness's unix-socket URL).
    pub async fn start(url: &str) -> DbProxy {
        // `postgres://user@/db?host=/socket/folder&port=N`: the url crate wants a host.
        let parsed =
            url::Url::parse(&url.replacen("@/", "@localhost/", 1)).expect("a database URL");
        let query = |key: &str| {
            parsed
                .query_pairs()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.into_owned())
                .unwrap_or_else(|| panic!("no {key} in the test database URL"))
        };
        let socket = PathBuf::from(query("host")).join(format!(".s.PGSQL.{}", query("port")));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let proxy = DbProxy {
            address: listener.local_addr().expect("address"),
            socket,
            user: parsed.username().to_owned(),
            database: parsed.path().trim_start_matches('/').to_owned(),
            tasks: Arc::new(Mutex::new(Vec::new())),
            holes: watch::channel(false).0,
        };
        proxy.serve(listener);
        proxy
    }

    /// The URL the service is given: TCP to the proxy.
    pub fn url(&self) -> String {
        format!(
            "postgres://{}@{}/{}",
            self.user, self.address, self.database
        )
    }

    fn serve(&self, listener: TcpListener) {
        let socket = self.socket.clone();
        let tasks = self.tasks.clone();
        let holes = self.holes.clone();
        let acceptor = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let socket = socket.clone();
                let holes = holes.clone();
                let pipe = tokio::spawn(async move {
                    if let Ok(upstream) = UnixStream::connect(&socket).await {
                        let (client_read, client_write) = tokio::io::split(client);
                        let (upstream_read, upstream_write) = tokio::io::split(upstream);
                        tokio::select! {
                            () = pump(client_read, upstream_write, holes.subscribe()) => {}
                            () = pump(upstream_read, client_write, holes.subscribe()) => {}
                        }
                    }
                });
                tasks.lock().unwrap().push(pipe);
            }
        });
        self.tasks.lock().unwrap().push(acceptor);
    }

    /// Cuts every connection and stops listening: connecting is refused.
    pub fn down(&self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }

    /// Stops forwarding bytes, in both directions and on every connection, new ones
    /// included, without closing any socket.
    pub fn blackhole(&self) {
        self.holes.send_replace(true);
    }

    /// Forwards again, what was held first.
    pub fn heal(&self) {
        self.holes.send_replace(false);
    }

    /// Listens again on the same port.
    pub async fn up(&self) {
        let listener = TcpListener::bind(self.address).await.expect("rebind");
        self.serve(listener);
    }
}

/// Copies `from` to `to`, holding what it read while `holes` is true.
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    mut holes: watch::Receiver<bool>,
) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if holes.wait_for(|held| !held).await.is_err() {
            return;
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
}

impl Drop for DbProxy {
    fn drop(&mut self) {
        self.down();
    }
}
