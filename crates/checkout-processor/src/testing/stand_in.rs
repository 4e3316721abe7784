//! A tiny HTTP stand-in for Stripe on 127.0.0.1:0 that answers each connection from a script
//! or a function of the request: hang, close or reset the connection, or answer a status and a
//! JSON body. It records every request. One request per connection (`connection: close`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use url::Url;

/// What the stand-in does with one connection.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Reads the request and never answers.
    Hang,
    /// Reads the request and closes the connection without a word.
    Close,
    /// Reads the request and resets the connection (TCP RST).
    Reset,
    /// Answers this status and JSON body.
    Json(u16, serde_json::Value),
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body, as text.
    pub body: String,
}

impl Recorded {
    /// The path, without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The form fields of the body, decoded.
    pub fn form(&self) -> Vec<(String, String)> {
        url::form_urlencoded::parse(self.body.as_bytes())
            .into_owned()
            .collect()
    }

    /// The value of form field `name`.
    pub fn field(&self, name: &str) -> Option<String> {
        self.form()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// A running stand-in; stops on drop.
pub struct StandIn {
    /// Its base URL.
    pub base_url: Url,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl StandIn {
    /// Starts a stand-in whose n-th connection gets `replies[n]` (the last reply repeats).
    pub async fn start(replies: Vec<Reply>) -> Self {
        assert!(!replies.is_empty());
        let served = std::sync::atomic::AtomicUsize::new(0);
        StandIn::answering(move |_| {
            let n = served.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            replies[n.min(replies.len() - 1)].clone()
        })
        .await
    }

    /// Starts a stand-in that answers each request with `respond(request)`.
    pub async fn answering(respond: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let respond = Arc::new(respond);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let recorded = recorded.clone();
                let respond = respond.clone();
                tokio::spawn(async move { serve(stream, &*respond, recorded).await });
            }
        });
        StandIn {
            base_url: Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap(),
            requests,
            task,
        }
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    respond: &(dyn Fn(&Recorded) -> Reply + Send + Sync),
    recorded: Arc<Mutex<Vec<Recorded>>>,
) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let reply = respond(&request);
    recorded.lock().unwrap().push(request);
    match reply {
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(120)).await;
        }
        Reply::Close => {
            drop(stream);
        }
        Reply::Reset => {
            let _ = stream.set_zero_linger();
            drop(stream);
        }
        Reply::Json(status, body) => {
            let body = body.to_string();
            let head = format!(
                "HTTP/1.1 {status} Stand-in\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(body.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let head_end = loop {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}
