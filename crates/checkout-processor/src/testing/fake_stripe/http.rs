//! Raw HTTP/1.1 over one TCP connection: read one request, write one answer, close.

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

pub(super) use crate::testing::wire::Request;

/// Reads one request; `None` when the peer closes early or sends too much.
pub(super) async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    crate::testing::wire::read_request(stream, &mut Vec::new()).await
}

/// An answer: status, headers (besides `content-length` and `connection`) and body.
#[derive(Clone, Debug)]
pub(super) struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn json(status: u16, body: &Value) -> Response {
        Response {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    pub fn html(status: u16, body: String) -> Response {
        Response {
            status,
            headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
            body,
        }
    }

    pub fn see_other(location: &str) -> Response {
        Response {
            status: 303,
            headers: vec![("location".into(), location.to_owned())],
            body: String::new(),
        }
    }

    /// Sets header `name` (lower case), replacing any value it had.
    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.retain(|(n, _)| n != name);
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Writes `response` and closes the connection.
pub(super) async fn write(stream: &mut TcpStream, response: &Response) {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        response.body.len()
    ));
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(response.body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Fake Stripe",
    }
}
