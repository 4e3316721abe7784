//! Loopback HTTP pieces of the SDK tests: a TCP proxy between the SDK and the server that
//! logs each request, can lose one answer and can move to another server, and a webhook
//! receiver that keeps each delivery's raw bytes and headers.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

pub use checkout_processor::testing::wire::{take_request, Request};

/// A TCP proxy to a server.
pub struct Proxy {
    /// `http://127.0.0.1:<port>`: give it to the SDK.
    pub base: String,
    target: Arc<Mutex<SocketAddr>>,
    seen: Arc<Mutex<Vec<Request>>>,
    lose_answer_of: Arc<Mutex<Option<(String, String)>>>,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    /// A proxy to the server at `base` (`http://127.0.0.1:<port>`).
    pub async fn start(base: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let proxy = Proxy {
            base: format!("http://{}", listener.local_addr().expect("address")),
            target: Arc::new(Mutex::new(address(base))),
            seen: Arc::default(),
            lose_answer_of: Arc::default(),
            connections: Arc::default(),
        };
        let (target, seen, lose, connections) = (
            proxy.target.clone(),
            proxy.seen.clone(),
            proxy.lose_answer_of.clone(),
            proxy.connections.clone(),
        );
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let to = *target.lock().unwrap();
                let task = tokio::spawn(relay(client, to, seen.clone(), lose.clone()));
                connections.lock().unwrap().push(task.abort_handle());
            }
        });
        proxy
    }

    /// Forwards the next `method path` request to the server, waits until the server
    /// starts answering it, then closes the connection without passing the answer on: the
    /// request was served, its answer lost.
    pub fn lose_next_answer(&self, method: &str, path: &str) {
        *self.lose_answer_of.lock().unwrap() = Some((method.to_owned(), path.to_owned()));
    }

    /// Sends new connections to the server at `base`, and closes every open one.
    pub fn switch_to(&self, base: &str) {
        *self.target.lock().unwrap() = address(base);
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }

    /// Every request seen so far.
    pub fn seen(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests seen for `method path`.
    pub fn seen_for(&self, method: &str, path: &str) -> Vec<Request> {
        self.seen()
            .into_iter()
            .filter(|r| r.is(method, path))
            .collect()
    }
}

fn address(base: &str) -> SocketAddr {
    base.trim_start_matches("http://")
        .parse()
        .expect("a loopback base URL")
}

/// Relays one connection both ways, logging each request; when a request's answer is to be
/// lost, closes both sides as soon as the server starts answering it.
async fn relay(
    client: TcpStream,
    to: SocketAddr,
    seen: Arc<Mutex<Vec<Request>>>,
    lose: Arc<Mutex<Option<(String, String)>>>,
) {
    let Ok(upstream) = TcpStream::connect(to).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut upstream_read, mut upstream_write) = upstream.into_split();
    let mut pending = Vec::new();
    let mut answer_lost = false;
    let mut from_client = [0u8; 16 * 1024];
    let mut from_upstream = [0u8; 16 * 1024];
    loop {
        tokio::select! {
            read = client_read.read(&mut from_client) => {
                let n = match read { Ok(0) | Err(_) => return, Ok(n) => n };
                pending.extend_from_slice(&from_client[..n]);
                while let Some(request) = take_request(&mut pending) {
                    let mut rule = lose.lock().unwrap();
                    if rule.as_ref().is_some_and(|(m, p)| request.is(m, p)) {
                        *rule = None;
                        answer_lost = true;
                    }
                    seen.lock().unwrap().push(request);
                }
                if upstream_write.write_all(&from_client[..n]).await.is_err() {
                    return;
                }
            }
            read = upstream_read.read(&mut from_upstream) => {
                let n = match read { Ok(0) | Err(_) => return, Ok(n) => n };
                if answer_lost {
                    return;
                }
                if client_write.write_all(&from_upstream[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A merchant's webhook receiver: answers every request 200 and keeps it as received.
pub struct Receiver {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    received: Arc<Mutex<Vec<Request>>>,
}

impl Receiver {
    /// A receiver on a free loopback port.
    pub async fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let received: Arc<Mutex<Vec<Request>>> = Arc::default();
        let log = received.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut buffer = Vec::new();
                    let mut chunk = [0u8; 16 * 1024];
                    loop {
                        if let Some(request) = take_request(&mut buffer) {
                            log.lock().unwrap().push(request);
                            let _ = stream
                                .write_all(
                                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\
                                      content-type: text/plain\r\n\r\nok",
                                )
                                .await;
                            continue;
                        }
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                        }
                    }
                });
            }
        });
        Receiver { base, received }
    }

    /// Waits (up to `within`) for a delivery whose body holds `needle`; returns it.
    pub async fn wait_for(&self, needle: &str, within: Duration) -> Request {
        let started = Instant::now();
        loop {
            let found = self
                .received
                .lock()
                .unwrap()
                .iter()
                .find(|r| String::from_utf8_lossy(&r.body).contains(needle))
                .cloned();
            if let Some(request) = found {
                return request;
            }
            assert!(
                started.elapsed() < within,
                "no delivery with {needle} within {within:?}; received: {:#?}",
                self.received.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
