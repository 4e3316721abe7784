//! Raw HTTP/1.1 requests as the loopback stand-ins of the tests read them: one parser for the
//! fake processors here and the server's own test receivers and proxies.

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// The most a request's head and body may hold together; a peer sending more is dropped.
const MAX_REQUEST: usize = 1024 * 1024 + 64 * 1024;

/// One HTTP/1.1 request as it crossed the wire.
#[derive(Clone, Debug)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path with its query.
    pub target: String,
    /// Header names in lower case, values trimmed.
    pub headers: Vec<(String, String)>,
    /// The body's exact bytes (as long as its `content-length`).
    pub body: Vec<u8>,
}

impl Request {
    /// The path, without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// True for `method` on `path` (the query ignored).
    pub fn is(&self, method: &str, path: &str) -> bool {
        self.method == method && self.path() == path
    }

    /// The query's fields, decoded.
    pub fn query(&self) -> Vec<(String, String)> {
        self.target
            .split_once('?')
            .map(|(_, query)| decode(query.as_bytes()))
            .unwrap_or_default()
    }

    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the body is declared form-encoded.
    pub fn is_form(&self) -> bool {
        self.header("content-type").is_some_and(|t| {
            t.to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        })
    }

    /// The form fields of the body, decoded; none when the body is not declared
    /// form-encoded (as a real server reads it).
    pub fn form(&self) -> Vec<(String, String)> {
        if self.is_form() {
            decode(&self.body)
        } else {
            Vec::new()
        }
    }

    /// The value of form field `name`.
    pub fn field(&self, name: &str) -> Option<String> {
        self.form()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn decode(bytes: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(bytes).into_owned().collect()
}

/// Takes one whole request (head and `content-length` body) off the front of `buffer`;
/// `None` while it is not whole yet (or its first line is not a request line).
pub fn take_request(buffer: &mut Vec<u8>) -> Option<Request> {
    let end = buffer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
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
    if buffer.len() < end + 4 + length {
        return None;
    }
    let body = buffer[end + 4..end + 4 + length].to_vec();
    buffer.drain(..end + 4 + length);
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

/// Reads from `stream` into `buffer` until it holds a whole request, and takes it; `None`
/// when the peer closes first or sends more than a request may hold. What follows the
/// request stays in `buffer` for the next call (keep-alive).
pub async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Request> {
    loop {
        if let Some(request) = take_request(buffer) {
            return Some(request);
        }
        if buffer.len() > MAX_REQUEST {
            return None;
        }
        let mut chunk = [0u8; 16 * 1024];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}
