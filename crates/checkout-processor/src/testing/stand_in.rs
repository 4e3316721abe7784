//! A tiny HTTP stand-in for Stripe on 127.0.0.1:0 that answers each connection from a script
//! or a function of the request: hang, close or reset the connection, or answer a status and a
//! JSON body. It records every request. One request per connection (`connection: close`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
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
pub use super::wire::Request as Recorded;

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
    let Some(request) = super::wire::read_request(&mut stream, &mut Vec::new()).await else {
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
