//! A small W3C WebDriver client over reqwest, driving Debian's headless Chromium through
//! `chromedriver`: just what the page tests need (navigate, find, type, click, read,
//! windows, screenshots).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

/// The key W3C WebDriver names an element reference with.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A headless Chromium session; chromedriver is stopped on drop.
pub struct Browser {
    http: reqwest::Client,
    session: String,
    driver: Child,
    screenshots: PathBuf,
    profile: PathBuf,
}

/// A found element.
#[derive(Debug, Clone)]
pub struct Element(String);

fn find_program(candidates: &[&str]) -> Option<PathBuf> {
    for name in candidates {
        if name.contains('/') {
            if Path::new(name).exists() {
                return Some(PathBuf::from(name));
            }
            continue;
        }
        if let Some(paths) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&paths) {
                let path = dir.join(name);
                if path.is_file() {
                    return Some(path);
                }
            }
        }
    }
    None
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session. Screenshots go to `screenshots`.
    pub async fn start(screenshots: &Path) -> Browser {
        let driver_path = find_program(&["chromedriver", "/usr/bin/chromedriver"]).expect(
            "chromedriver not found: install Debian's chromium and chromium-driver \
             (./scripts/test.sh does)",
        );
        let chromium = find_program(&["chromium", "/usr/bin/chromium", "chromium-browser"])
            .expect("chromium not found: install Debian's chromium package");
        let port = free_port();
        let driver = Command::new(driver_path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("client");
        let base = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        loop {
            let ready = http
                .get(format!("{base}/status"))
                .send()
                .await
                .ok()
                .map(|r| r.status().is_success())
                .unwrap_or(false);
            if ready {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // A profile of its own: Chromium refuses a profile another instance holds.
        let profile =
            std::env::temp_dir().join(format!("hc-chromium-{}-{port}", std::process::id()));
        let capabilities = json!({
            "capabilities": { "alwaysMatch": {
                "browserName": "chrome",
                "pageLoadStrategy": "normal",
                "goog:chromeOptions": {
                    "binary": chromium,
                    "args": [
                        "--headless=new", "--no-sandbox", "--disable-gpu",
                        "--disable-dev-shm-usage", "--window-size=412,915",
                        "--no-first-run", "--no-default-browser-check",
                        format!("--user-data-dir={}", profile.display()),
                    ]
                }
            }}
        });
        let response: Value = http
            .post(format!("{base}/session"))
            .json(&capabilities)
            .send()
            .await
            .expect("new session")
            .json()
            .await
            .expect("json");
        let session = response["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {response}"))
            .to_owned();
        std::fs::create_dir_all(screenshots).expect("screenshot folder");
        Browser {
            http,
            session: format!("{base}/session/{session}"),
            driver,
            screenshots: screenshots.to_owned(),
            profile,
        }
    }

    /// The whole answer to a WebDriver command, errors included.
    async fn raw(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.json(&body);
        }
        request
            .send()
            .await
            .expect("chromedriver answers")
            .json()
            .await
            .expect("json")
    }

    /// The value of a WebDriver command; a WebDriver error fails the test.
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let response = self.raw(method, path, body).await;
        if let Some(error) = response["value"].get("error") {
            panic!("webdriver {path}: {error} {}", response["value"]["message"]);
        }
        response["value"].clone()
    }

    /// Opens `url` and waits for the page to load.
    pub async fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    /// The current URL.
    pub async fn url(&self) -> String {
        self.call(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The page source.
    pub async fn source(&self) -> String {
        self.call(reqwest::Method::GET, "/source", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The element matching `css`, waiting up to 10 s for it.
    pub async fn find(&self, css: &str) -> Element {
        let started = Instant::now();
        loop {
            if let Some(element) = self.try_find(css).await {
                return element;
            }
            if started.elapsed() > Duration::from_secs(10) {
                let source = self.source().await;
                panic!("no element {css} at {}:\n{source}", self.url().await);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The element matching `css`, if there is one now.
    pub async fn try_find(&self, css: &str) -> Option<Element> {
        let response = self
            .raw(
                reqwest::Method::POST,
                "/element",
                Some(json!({ "using": "css selector", "value": css })),
            )
            .await;
        response["value"][ELEMENT_KEY]
            .as_str()
            .map(|id| Element(id.to_owned()))
    }

    /// Types `text` into the element.
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{}/clear", element.0),
            Some(json!({})),
        )
        .await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{}/value", element.0),
            Some(json!({ "text": text })),
        )
        .await;
    }

    /// Clicks the element.
    pub async fn click(&self, css: &str) {
        let element = self.find(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{}/click", element.0),
            Some(json!({})),
        )
        .await;
    }

    /// Clicks the element and waits until the navigation it starts has finished: the page
    /// that was shown is gone (its root element is stale) and the new one has loaded. Use it for
    /// every click that submits a form or follows a link, so that what is read next is read
    /// from the page the click led to, not from the one it left.
    pub async fn click_and_settle(&self, css: &str) {
        let old_root = self.find("html").await;
        self.click(css).await;
        let started = Instant::now();
        loop {
            if self.is_stale(&old_root).await && self.ready_state().await == "complete" {
                return;
            }
            if started.elapsed() > Duration::from_secs(15) {
                panic!(
                    "clicking {css} led nowhere: still at {}:\n{}",
                    self.url().await,
                    self.source().await
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Whether `element` belongs to a document that is no longer shown.
    async fn is_stale(&self, element: &Element) -> bool {
        let response = self
            .raw(
                reqwest::Method::GET,
                &format!("/element/{}/name", element.0),
                None,
            )
            .await;
        response["value"]["error"].as_str() == Some("stale element reference")
    }

    /// The current document's `readyState` (empty while none can be read).
    async fn ready_state(&self) -> String {
        let response = self
            .raw(
                reqwest::Method::POST,
                "/execute/sync",
                Some(json!({ "script": "return document.readyState", "args": [] })),
            )
            .await;
        response["value"].as_str().unwrap_or_default().to_owned()
    }

    /// The visible text of the element.
    pub async fn text(&self, css: &str) -> String {
        let element = self.find(css).await;
        self.call(
            reqwest::Method::GET,
            &format!("/element/{}/text", element.0),
            None,
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    /// An attribute of the element.
    pub async fn attribute(&self, css: &str, name: &str) -> Option<String> {
        let element = self.find(css).await;
        self.call(
            reqwest::Method::GET,
            &format!("/element/{}/attribute/{name}", element.0),
            None,
        )
        .await
        .as_str()
        .map(str::to_owned)
    }

    /// The current `value` of a form field (what the payer sees, not the HTML attribute).
    pub async fn value(&self, css: &str) -> String {
        let element = self.find(css).await;
        self.call(
            reqwest::Method::GET,
            &format!("/element/{}/property/value", element.0),
            None,
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    /// Waits until the current URL starts with `prefix`; returns it.
    pub async fn wait_for_url(&self, prefix: &str) -> String {
        let started = Instant::now();
        loop {
            let url = self.url().await;
            if url.starts_with(prefix) {
                return url;
            }
            if started.elapsed() > Duration::from_secs(15) {
                panic!(
                    "still at {url}, expected {prefix}...:\n{}",
                    self.source().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Opens a new tab and switches to it; returns the previous tab's handle.
    pub async fn new_tab(&self) -> String {
        let current = self.current_window().await;
        let created = self
            .call(
                reqwest::Method::POST,
                "/window/new",
                Some(json!({ "type": "tab" })),
            )
            .await;
        self.call(
            reqwest::Method::POST,
            "/window",
            Some(json!({ "handle": created["handle"] })),
        )
        .await;
        current
    }

    /// The current tab's handle.
    pub async fn current_window(&self) -> String {
        self.call(reqwest::Method::GET, "/window", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Switches to the tab `handle`.
    pub async fn switch_to(&self, handle: &str) {
        self.call(
            reqwest::Method::POST,
            "/window",
            Some(json!({ "handle": handle })),
        )
        .await;
    }

    /// Runs `script` (a function body) in the page with `args`; returns its value. WebDriver
    /// runs it through DevTools, so the page's CSP does not apply and it works with the
    /// page's own scripts disabled.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
        .await
    }

    /// Runs `script` asynchronously: it ends by calling `arguments[arguments.length - 1]`.
    pub async fn execute_async(&self, script: &str, args: Vec<Value>) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/async",
            Some(json!({ "script": script, "args": args })),
        )
        .await
    }

    /// Turns the pages' own scripts off or on (DevTools' `Emulation.setScriptExecutionDisabled`,
    /// which lasts across navigations of this tab), as a payer with JavaScript disabled.
    pub async fn set_scripts_enabled(&self, enabled: bool) {
        self.call(
            reqwest::Method::POST,
            "/goog/cdp/execute",
            Some(json!({
                "cmd": "Emulation.setScriptExecutionDisabled",
                "params": { "value": !enabled }
            })),
        )
        .await;
    }

    /// Resizes the window (CSS pixels).
    pub async fn set_size(&self, width: u32, height: u32) {
        self.call(
            reqwest::Method::POST,
            "/window/rect",
            Some(json!({ "width": width, "height": height })),
        )
        .await;
    }

    /// Reloads the page, as the payer's reload button, and waits for it to load.
    pub async fn refresh(&self) {
        self.call(reqwest::Method::POST, "/refresh", Some(json!({})))
            .await;
    }

    /// Whether the page's `<title>` contains `text`.
    pub async fn title_contains(&self, text: &str) -> bool {
        let title = self.execute("return document.title", vec![]).await;
        title.as_str().unwrap_or_default().contains(text)
    }

    /// Whether the element matching `css` has the `hidden` property.
    pub async fn hidden(&self, css: &str) -> bool {
        self.find(css).await;
        let hidden = self
            .execute(
                "return document.querySelector(arguments[0]).hidden",
                vec![json!(css)],
            )
            .await;
        hidden.as_bool().unwrap_or(false)
    }

    /// Goes back in the tab's history, as the payer's Back button, and waits for the page.
    pub async fn back(&self) {
        self.call(reqwest::Method::POST, "/back", Some(json!({})))
            .await;
    }

    /// The value of the cookie `name` the current page can see (HttpOnly ones included), if
    /// any.
    pub async fn cookie(&self, name: &str) -> Option<String> {
        let response = self
            .raw(reqwest::Method::GET, &format!("/cookie/{name}"), None)
            .await;
        response["value"]["value"].as_str().map(str::to_owned)
    }

    /// Deletes the browser's cookie `name` of `url`'s site (as a payer clearing cookies, or a
    /// first arrival racing another), through DevTools.
    pub async fn delete_cookie(&self, name: &str, url: &str) {
        self.call(
            reqwest::Method::POST,
            "/goog/cdp/execute",
            Some(json!({
                "cmd": "Network.deleteCookies",
                "params": { "name": name, "url": url }
            })),
        )
        .await;
    }

    /// Double-clicks the element with the pointer (two clicks in quick succession).
    pub async fn double_click(&self, css: &str) {
        let element = self.find(css).await;
        let origin = json!({ ELEMENT_KEY: element.0 });
        let actions = json!({ "actions": [{
            "type": "pointer", "id": "mouse", "parameters": { "pointerType": "mouse" },
            "actions": [
                { "type": "pointerMove", "origin": origin, "x": 0, "y": 0 },
                { "type": "pointerDown", "button": 0 }, { "type": "pointerUp", "button": 0 },
                { "type": "pointerDown", "button": 0 }, { "type": "pointerUp", "button": 0 }
            ]
        }]});
        self.call(reqwest::Method::POST, "/actions", Some(actions))
            .await;
    }

    /// The `id` of the focused element (empty when none has one).
    pub async fn focused_id(&self) -> String {
        self.execute(
            "return document.activeElement && document.activeElement.id || ''",
            vec![],
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    /// Injects axe-core (`axe_source`, the text of `axe.min.js`) into the page and runs it
    /// with the WCAG 2.x A and AA rules and best practices; returns the violations.
    pub async fn axe(&self, axe_source: &str) -> Vec<Value> {
        self.execute(axe_source, vec![]).await;
        let result = self
            .execute_async(
                "const done = arguments[arguments.length - 1];\
                 axe.run(document, { runOnly: { type: 'tag', values: \
                   ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } })\
                   .then(r => done(r.violations.map(v => ({ id: v.id, impact: v.impact, \
                     help: v.help, nodes: v.nodes.map(n => n.html) }))))\
                   .catch(e => done([{ id: 'axe-error', help: String(e) }]));",
                vec![],
            )
            .await;
        result.as_array().cloned().unwrap_or_default()
    }

    /// Saves a PNG screenshot as `<name>.png` in the screenshot folder; returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let data = self.call(reqwest::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data.as_str().unwrap_or_default())
            .expect("base64 png");
        let path = self.screenshots.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // End the session (it closes Chromium) with a plain blocking request, since drop
        // cannot await; then stop chromedriver.
        if let Some(rest) = self.session.strip_prefix("http://") {
            if let Some((authority, path)) = rest.split_once('/') {
                if let Ok(mut stream) = std::net::TcpStream::connect(authority) {
                    use std::io::{Read, Write};
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                    let request = format!(
                        "DELETE /{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                    let _ = stream.write_all(request.as_bytes());
                    // chromedriver may keep the connection open: read just the answer.
                    let mut answer = [0u8; 1024];
                    let _ = stream.read(&mut answer);
                }
            }
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
