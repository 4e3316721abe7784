//! A stand-in merchant website on loopback: answers every GET with a small page, so that the
//! browser really lands on the callback URLs the service redirects to. `/inbox?link=…` is a
//! webmail of sorts: a page listing each `link` as `<a id="link-N">`, opened from
//! `http://localhost:<port>` so that following one is a cross-site navigation to the service
//! on `127.0.0.1`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

/// The merchant site's base URL, `http://127.0.0.1:<port>`; it serves until the process ends.
pub fn start() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the merchant site");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut line = String::new();
                while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                    line.clear();
                }
                let path = first.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let page = if let Some(query) = path.strip_prefix("/inbox?") {
                    let links: String = url::form_urlencoded::parse(query.as_bytes())
                        .filter(|(k, _)| k == "link")
                        .enumerate()
                        .map(|(n, (_, v))| {
                            format!(
                                "<li><a id=\"link-{n}\" href=\"{}\">Invoice {n}</a></li>",
                                v.replace('&', "&amp;").replace('"', "&quot;")
                            )
                        })
                        .collect();
                    format!(
                        "<!doctype html><html><head><title>Inbox</title></head>\
                         <body><h1 id=\"inbox\">Inbox</h1><ul>{links}</ul></body></html>"
                    )
                } else {
                    format!(
                    "<!doctype html><html><head><title>Merchant</title></head>\
                     <body><h1 id=\"merchant\">Merchant page</h1><p id=\"path\">{}</p></body></html>",
                    path.replace('&', "&amp;").replace('<', "&lt;")
                )
                };
                let mut stream = &stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}
