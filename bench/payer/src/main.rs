//! The card-payment load generator of `bench/run.sh`.
//!
//! Each of PAYERS payers pays one new session after another through the hosted page, as a
//! browser would: start-payment over the API, the checkout page for its CSRF token and cookie,
//! then the card form post with the sandbox's approving test card. Every payer keeps one
//! keep-alive HTTP/1.1 connection; all of them run on one thread, so the generator costs a
//! small part of a core next to the load it makes (the Python payers it replaces cost about
//! 2 ms of CPU per payment, as much as the service).
//!
//! Appends one line per payment to OUTPUT_FILE: the form post's HTTP status and its time in
//! seconds (or `start-payment-failed` / `page-failed`). Runs until it is killed.
//!
//! ```text
//! bench-payer BASE_URL TOKEN REFERENCE_PREFIX OUTPUT_FILE PAYERS
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// An HTTP answer: the status, the cookies it sets (`name=value`) and the body.
struct Answer {
    status: u16,
    cookies: Vec<String>,
    body: Vec<u8>,
}

/// One request: method, path, extra headers, body.
struct Request<'a> {
    method: &'a str,
    path: &'a str,
    headers: &'a [(&'a str, &'a str)],
    body: &'a [u8],
}

/// One keep-alive HTTP/1.1 connection, opened again after an error or a `Connection: close`.
struct Connection {
    /// `host:port`.
    authority: String,
    stream: Option<BufReader<TcpStream>>,
}

impl Connection {
    fn new(authority: &str) -> Connection {
        Connection {
            authority: authority.to_owned(),
            stream: None,
        }
    }

    /// Sends one request and reads its whole answer; after an error the next request opens a
    /// new connection.
    async fn send(&mut self, request: Request<'_>) -> io::Result<Answer> {
        let answer = self.exchange(&request).await;
        if answer.is_err() {
            self.stream = None;
        }
        answer
    }

    async fn exchange(&mut self, request: &Request<'_>) -> io::Result<Answer> {
        let Request {
            method,
            path,
            headers,
            body,
        } = *request;
        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => {
                let tcp = TcpStream::connect(&self.authority).await?;
                tcp.set_nodelay(true)?;
                self.stream.insert(BufReader::new(tcp))
            }
        };
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.authority,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        stream.get_mut().write_all(&bytes).await?;

        let mut line = String::new();
        stream.read_line(&mut line).await?;
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| bad(&format!("status line {line:?}")))?;
        let mut length = None;
        let mut chunked = false;
        let mut close = false;
        let mut cookies = Vec::new();
        loop {
            line.clear();
            if stream.read_line(&mut line).await? == 0 {
                return Err(bad("connection closed in the headers"));
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                "set-cookie" => cookies.push(value.split(';').next().unwrap_or("").to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                stream.read_line(&mut line).await?;
                let size = usize::from_str_radix(line.trim(), 16)
                    .map_err(|_| bad(&format!("chunk size {line:?}")))?;
                let mut chunk = vec![0; size + 2];
                stream.read_exact(&mut chunk).await?;
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length.unwrap_or(0), 0);
            stream.read_exact(&mut body).await?;
        }
        if close {
            self.stream = None;
        }
        Ok(Answer {
            status,
            cookies,
            body,
        })
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// The text between `start` and the next `"` in `text`.
fn between<'a>(text: &'a str, start: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let len = text[from..].find('"')?;
    Some(&text[from..from + len])
}

/// `value` percent-encoded for an `application/x-www-form-urlencoded` body.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// How one payment went: the line written for it.
async fn pay(conn: &mut Connection, token: &str, reference: &str) -> String {
    let bearer = format!("Bearer {token}");
    let body = format!(
        "{{\"callbackSuccessUrl\":\"https://merchant.example/ok\",\
         \"callbackFailUrl\":\"https://merchant.example/fail\",\
         \"totalTransactionAmount\":25.50,\"currencyCode\":\"USD\",\
         \"transactionReferenceNumber\":\"{reference}\"}}"
    );
    let created = conn
        .send(Request {
            method: "POST",
            path: "/pay/api/start-payment",
            headers: &[
                ("Authorization", &bearer),
                ("Content-Type", "application/json"),
            ],
            body: body.as_bytes(),
        })
        .await;
    let session = match created {
        Ok(answer) if answer.status == 200 => {
            match between(
                &String::from_utf8_lossy(&answer.body),
                "\"checkoutSessionId\":\"",
            ) {
                Some(id) => id.to_owned(),
                None => return "start-payment-failed".into(),
            }
        }
        _ => return "start-payment-failed".into(),
    };

    let page = match conn
        .send(Request {
            method: "GET",
            path: &format!("/pay/checkout-payment/{session}"),
            headers: &[],
            body: &[],
        })
        .await
    {
        Ok(page) if page.status == 200 && !page.cookies.is_empty() => page,
        _ => return "page-failed".into(),
    };
    let html = String::from_utf8_lossy(&page.body);
    let Some(csrf) = between(&html, "name=\"csrfToken\" value=\"") else {
        return "page-failed".into();
    };
    let csrf = csrf.replace("&#x2F;", "/").replace("&amp;", "&");
    let form = format!(
        "checkoutSessionId={session}&csrfToken={}&lg=en&cardholderName=Bench+Payer\
         &cardNumber=4242424242424242&cardExpiry=12%2F34&cardCvv=123",
        form_encode(&csrf)
    );
    // The CSRF cookie is `Secure`; over plain http it goes back as a header, as a test client's.
    let cookie = page.cookies.join("; ");
    let started = Instant::now();
    match conn
        .send(Request {
            method: "POST",
            path: "/pay/process-payment",
            headers: &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Cookie", &cookie),
            ],
            body: form.as_bytes(),
        })
        .await
    {
        Ok(posted) => format!("{} {:.3}", posted.status, started.elapsed().as_secs_f64()),
        Err(_) => "page-failed".into(),
    }
}

/// One payer: pays one session after another, forever.
async fn payer(authority: String, token: Arc<str>, prefix: String, out: Arc<Mutex<File>>) {
    let mut conn = Connection::new(&authority);
    let mut n: u64 = 0;
    loop {
        n += 1;
        let line = pay(&mut conn, &token, &format!("{prefix}-{n}")).await;
        let failed = !line.starts_with(|c: char| c.is_ascii_digit());
        if let Ok(mut file) = out.lock() {
            // One write per line, so that a killed payer leaves whole lines.
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
        if failed {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, base, token, prefix, output, payers] = args.as_slice() else {
        eprintln!("usage: bench-payer BASE_URL TOKEN REFERENCE_PREFIX OUTPUT_FILE PAYERS");
        std::process::exit(2);
    };
    let authority = base
        .strip_prefix("http://")
        .ok_or_else(|| bad("BASE_URL must be http://host:port"))?
        .trim_end_matches('/')
        .to_owned();
    let payers: usize = payers.parse().map_err(|_| bad("PAYERS is not a number"))?;
    let out = Arc::new(Mutex::new(
        OpenOptions::new().create(true).append(true).open(output)?,
    ));
    let token: Arc<str> = Arc::from(token.as_str());
    let mut tasks = Vec::with_capacity(payers);
    for i in 0..payers {
        tasks.push(tokio::spawn(payer(
            authority.clone(),
            token.clone(),
            format!("{prefix}-pay{i}"),
            out.clone(),
        )));
    }
    for task in tasks {
        let _ = task.await;
    }
    Ok(())
}
