//! The sandbox's developer commands, `checkout listen` and `checkout trigger`: merchant-side
//! tools that reach a service (local or remote) only over HTTP, with a terminal's client
//! credentials through the token route, as the merchant's own backend does.

pub mod listen;
pub mod trigger;

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;

use crate::settings::Settings;

/// Where the service is and whose credentials to use: `--base-url`, `--client-id`,
/// `--client-secret` (or `CHECKOUT_CLIENT_SECRET`), by default the local sandbox's (its
/// address from the settings, its client id, and its secret as configured or as saved in the
/// data folder).
#[derive(Clone)]
pub struct Connection {
    /// The service's base URL, e.g. `http://127.0.0.1:8080`.
    pub base_url: String,
    /// The terminal's OAuth client id.
    pub client_id: String,
    /// Its secret.
    pub client_secret: SecretString,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("base_url", &self.base_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .finish()
    }
}

/// The flags of a developer command: each `--name value` (or `--name=value`) once, and the
/// words that are not flags, in order.
#[derive(Debug, Default)]
pub struct Flags {
    values: Vec<(String, String)>,
    switches: Vec<String>,
    /// The words that are not flags.
    pub words: Vec<String>,
}

impl Flags {
    /// Reads `args`: `--name value` for each name of `valued`, `--name` alone for each name
    /// of `switches`; any other `--...` is an error.
    pub fn parse(args: &[&str], valued: &[&str], switches: &[&str]) -> Result<Flags, String> {
        let mut flags = Flags::default();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            let Some(name) = arg.strip_prefix("--") else {
                flags.words.push((*arg).to_owned());
                continue;
            };
            let (name, inline) = match name.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (name, None),
            };
            if switches.contains(&name) && inline.is_none() {
                flags.switches.push(name.to_owned());
                continue;
            }
            if !valued.contains(&name) {
                return Err(format!("unknown option --{name}"));
            }
            let value = match inline {
                Some(v) => v,
                None => (*rest
                    .next()
                    .ok_or_else(|| format!("--{name} needs a value"))?)
                .to_owned(),
            };
            if flags.values.iter().any(|(n, _)| n == name) {
                return Err(format!("--{name} given twice"));
            }
            flags.values.push((name.to_owned(), value));
        }
        Ok(flags)
    }

    /// The value of `--name`, if given.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the switch `--name` was given.
    pub fn switch(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s == name)
    }
}

/// The flags every developer command takes for its [`Connection`].
pub const CONNECTION_FLAGS: [&str; 3] = ["base-url", "client-id", "client-secret"];

impl Connection {
    /// The connection of `flags`, the local sandbox's by default.
    pub fn of(flags: &Flags, settings: &Settings) -> anyhow::Result<Connection> {
        let base_url = flags.value("base-url").map_or_else(
            || settings.public_base_url(settings.server.port),
            str::to_owned,
        );
        let base_url = base_url.trim_end_matches('/').to_owned();
        let parsed =
            url::Url::parse(&base_url).with_context(|| format!("--base-url {base_url}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            bail!("--base-url must be an http or https URL");
        }
        let client_id = flags
            .value("client-id")
            .map_or_else(|| settings.sandbox.client_id.clone(), str::to_owned);
        let secret = match flags.value("client-secret") {
            Some(secret) => secret.to_owned(),
            None => match std::env::var("CHECKOUT_CLIENT_SECRET") {
                Ok(secret) if !secret.is_empty() => secret,
                _ => match &settings.sandbox.client_secret {
                    Some(secret) if client_id == settings.sandbox.client_id => {
                        secret.expose_secret().to_owned()
                    }
                    _ => crate::sandbox::saved_credentials(&settings.data_dir)
                        .filter(|c| c.client_id == client_id)
                        .map(|c| c.client_secret)
                        .context(
                            "no client secret: give --client-secret (or CHECKOUT_CLIENT_SECRET); \
                             a local sandbox prints its own at start",
                        )?,
                },
            },
        };
        Ok(Connection {
            base_url,
            client_id,
            client_secret: SecretString::from(secret),
        })
    }
}

/// An answer that is not a success, as the developer reads it: the status and the
/// ProblemDetails' detail (or the body's start).
#[derive(Debug, thiserror::Error)]
#[error("{method} {path}: {status} {detail}")]
pub struct Refused {
    /// The request's method.
    pub method: Method,
    /// The request's path.
    pub path: String,
    /// The answer's status.
    pub status: StatusCode,
    /// The ProblemDetails (`null` when the body was not JSON).
    pub problem: Value,
    /// Its detail, for the message.
    pub detail: String,
}

/// A merchant-side client of the service: a token from the token route, kept until shortly
/// before it expires, then renewed (and renewed once at once when a call answers 401).
pub struct Remote {
    http: reqwest::Client,
    connection: Connection,
    token: Option<(String, Instant)>,
}

impl Remote {
    /// A client for `connection`.
    pub fn new(connection: Connection) -> anyhow::Result<Remote> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("checkout-cli/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Remote {
            http,
            connection,
            token: None,
        })
    }

    /// The service's base URL.
    pub fn base_url(&self) -> &str {
        &self.connection.base_url
    }

    /// The HTTP client (for requests to other places, such as a forward).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    async fn token(&mut self) -> anyhow::Result<String> {
        if let Some((token, renew_at)) = &self.token {
            if Instant::now() < *renew_at {
                return Ok(token.clone());
            }
        }
        let url = format!("{}/api/public/security/auth", self.connection.base_url);
        let response = self
            .http
            .post(&url)
            .json(&serde_json::json!({
                "client_id": self.connection.client_id,
                "client_secret": self.connection.client_secret.expose_secret(),
            }))
            .send()
            .await
            .with_context(|| format!("reaching {url}"))?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!(
                "the token route refused client {}: {status} {}",
                self.connection.client_id,
                body["detail"].as_str().unwrap_or_default()
            );
        }
        let token = body["token"]
            .as_str()
            .context("the token answer has no token")?
            .to_owned();
        let lifetime = body["expiresIn"].as_u64().unwrap_or(60);
        // Renewed a minute before it expires (or half-way for a short-lived token).
        let margin = (lifetime / 2).min(60);
        let renew_at = Instant::now() + Duration::from_secs(lifetime.saturating_sub(margin));
        self.token = Some((token.clone(), renew_at));
        Ok(token)
    }

    /// Sends `method path` (with `body` as JSON when given) with the bearer token, renewing
    /// the token once when the answer is 401; answers the status and the body's JSON (`null`
    /// when the body is empty or not JSON).
    pub async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<(StatusCode, Value)> {
        for renewed in [false, true] {
            let token = self.token().await?;
            let url = format!("{}{path}", self.connection.base_url);
            let mut request = self.http.request(method.clone(), &url).bearer_auth(token);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request
                .send()
                .await
                .with_context(|| format!("{method} {url}"))?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && !renewed {
                self.token = None;
                continue;
            }
            let text = response.text().await.unwrap_or_default();
            let value = serde_json::from_str(&text).unwrap_or(Value::Null);
            return Ok((status, value));
        }
        unreachable!("the loop returns on its second turn")
    }

    /// [`send`](Self::send), with any answer but a 2xx an error ([`Refused`]).
    pub async fn call(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Value> {
        let (status, value) = self.send(method.clone(), path, body).await?;
        if status.is_success() {
            return Ok(value);
        }
        let detail = value["detail"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| value["title"].as_str().map(str::to_owned))
            .unwrap_or_default();
        Err(Refused {
            method,
            path: path.to_owned(),
            status,
            problem: value,
            detail,
        }
        .into())
    }
}
