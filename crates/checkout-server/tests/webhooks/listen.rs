//! `checkout listen --forward-to URL` run as a developer runs it, on "another machine" (its
//! own data folder, no database, none of the server's settings) that reaches the sandbox only
//! over HTTP: every event of the feed arrives at the Python receiver signed with the secret
//! `listen` printed, verified there by the `standardwebhooks` library; a restart resumes from
//! the saved cursor.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::support::cli::{developer_command, developer_dir, run_developer_command};
use crate::support::TestServer;
use crate::{body_of, receiver, wait_for};

/// A running `checkout listen`, its stdout lines in a channel; killed on drop.
struct Listener {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Listener {
    fn start(server: &TestServer, dir: &std::path::Path, forward_to: &str) -> Listener {
        let mut child = developer_command(
            server,
            dir,
            &["listen", "--forward-to", forward_to, "--poll-ms", "100"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("checkout listen starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Listener { child, lines }
    }

    /// The next line that `matches`, within 20 s.
    fn line(&self, matches: impl Fn(&str) -> bool) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .expect("checkout listen printed the line in time");
            if matches(&line) {
                return line;
            }
        }
    }

    fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let status = self.child.wait().expect("listen ends");
        assert!(status.success(), "listen ends cleanly on SIGTERM: {status}");
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `checkout trigger <kind>` against `server`; answers the session it made.
fn trigger(server: &TestServer, dir: &std::path::Path, kind: &str) -> String {
    let out = run_developer_command(server, dir, &["trigger", kind]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "trigger {kind}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("session ")?.strip_suffix(" created"))
        .expect("the session")
        .to_owned()
}

#[tokio::test]
async fn listen_forwards_the_feed_signed_for_standard_webhooks_and_resumes_after_a_restart() {
    let Some(receiver) = receiver("listen") else {
        return;
    };
    let server = TestServer::start(
        "listen",
        crate::support::Mode::Sandbox,
        &[(
            "CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_CLIENT_PER_MINUTE",
            "1000",
        )],
    )
    .await;
    let dir = developer_dir("listen");
    // An event from before `listen` first starts: not forwarded (new events only).
    let before = trigger(&server, &dir, "payment.cancelled");
    // Visible in the feed first (it holds back events while older transactions of the shared
    // test cluster run), so that it is before the point `listen` starts from.
    let token = server.token().await;
    let started = std::time::Instant::now();
    loop {
        let feed = server.get("/pay/api/events?limit=100", Some(&token)).await;
        let events = feed.body["events"].as_array().cloned().unwrap_or_default();
        if events
            .iter()
            .any(|e| e["data"]["checkoutSessionId"] == before.as_str())
        {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{}", feed.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let forward_to = receiver.url("/hooks").to_string();
    let listener = Listener::start(&server, &dir, &forward_to);
    let secret_line = listener.line(|l| l.contains("webhook signing secret is"));
    let secret = secret_line
        .split_whitespace()
        .find(|w| w.starts_with("whsec_"))
        .expect("a whsec_ secret")
        .to_owned();
    receiver.set_secrets(std::slice::from_ref(&secret));
    listener.line(|l| l.starts_with("Ready"));

    let paid = trigger(&server, &dir, "payment.succeeded");
    let line = listener.line(|l| l.contains("payment.succeeded"));
    assert!(
        line.ends_with(&format!("--> POST {forward_to} [200]")),
        "{line}"
    );

    // The receiver got it, verified by the standardwebhooks library with the printed secret,
    // its body exactly the feed's event.
    let requests = wait_for(&receiver, Duration::from_secs(10), "the forward", |r| {
        !r.is_empty()
    })
    .await;
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let request = &requests[0];
    assert_eq!(
        request["verified"],
        serde_json::json!([true]),
        "{request:#}"
    );
    let body = body_of(request);
    assert_eq!(body["type"], "payment.succeeded");
    assert_eq!(body["data"]["checkoutSessionId"], paid.as_str());
    assert_eq!(request["headers"]["webhook-id"], body["id"]);
    let feed = server.get("/pay/api/events?limit=100", Some(&token)).await;
    let in_feed = feed.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == body["id"])
        .expect("the event is in the feed")
        .clone();
    assert_eq!(in_feed, body);
    assert!(
        !receiver
            .requests()
            .iter()
            .any(|r| body_of(r)["data"]["checkoutSessionId"] == before.as_str()),
        "the event from before listen started was not forwarded"
    );

    // Stopped, an event happens, started again: it resumes from the saved cursor, so the
    // missed event arrives and the one already forwarded is not sent again.
    listener.stop();
    let missed = trigger(&server, &dir, "payment.voided");
    let listener = Listener::start(&server, &dir, &forward_to);
    let ready = listener.line(|l| l.starts_with("Ready"));
    assert!(ready.contains("resuming after cursor"), "{ready}");
    assert!(
        listener
            .line(|l| l.contains("payment.voided"))
            .ends_with("[200]"),
        "the missed event is forwarded"
    );
    let requests = wait_for(
        &receiver,
        Duration::from_secs(10),
        "the missed events",
        |r| r.iter().any(|r| body_of(r)["type"] == "payment.voided"),
    )
    .await;
    for request in &requests {
        assert_eq!(
            request["verified"],
            serde_json::json!([true]),
            "{request:#}"
        );
    }
    let types: Vec<String> = requests
        .iter()
        .map(|r| body_of(r)["type"].as_str().unwrap().to_owned())
        .collect();
    // The voided session was authorised first: both its events, in the feed's order.
    assert_eq!(
        types,
        ["payment.succeeded", "payment.authorized", "payment.voided"]
    );
    assert!(requests
        .iter()
        .skip(1)
        .all(|r| body_of(r)["data"]["checkoutSessionId"] == missed.as_str()));

    // A receiver that fails is shown as such, one line per forward.
    receiver.set_mode("fail");
    trigger(&server, &dir, "payment.expired");
    let line = listener.line(|l| l.contains("payment.expired"));
    assert!(line.ends_with("[500]"), "{line}");
    listener.stop();
}
