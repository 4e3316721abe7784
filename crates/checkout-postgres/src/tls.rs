//! TLS to the database with `sslmode=verify-full` semantics, over rustls.
//!
//! tokio-postgres knows `sslmode` `disable`, `prefer` and `require` only, and never checks
//! the server's certificate by itself. A URL that names a CA with `sslrootcert=<PEM file>`
//! (or says `sslmode=verify-full` or `verify-ca`) is connected here instead: TLS is required,
//! the server's certificate must chain to one of the file's certificates, and its name (DNS
//! or IP address) must match the host connected to, each host of a multi-host URL in turn.
//! `verify-ca` is treated as `verify-full`: the stricter check is never weaker. The CA file
//! is read on each new connection, so a rotated CA needs no restart.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use anyhow::{anyhow, bail, Context as _};
use diesel::{ConnectionError, ConnectionResult};
use diesel_async::{AsyncConnection, AsyncPgConnection};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

/// A URL split into what tokio-postgres understands and the CA to verify the server with.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Verified {
    /// The URL without `sslrootcert`, with `sslmode=require`.
    url: String,
    /// The PEM file of trusted CA certificates.
    ca_file: PathBuf,
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `Some` when `url` asks for a verified TLS connection; an error when it asks for one
/// without naming a CA.
fn verified(url: &str) -> anyhow::Result<Option<Verified>> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok(None);
    };
    let mut kept = Vec::new();
    let (mut ca_file, mut verify) = (None, false);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match (key, value) {
            ("sslrootcert", file) => ca_file = Some(PathBuf::from(percent_decode(file))),
            ("sslmode", "verify-full" | "verify-ca") => verify = true,
            ("sslmode", _) => {}
            _ => kept.push(pair),
        }
    }
    let ca_file = match (ca_file, verify) {
        (Some(file), _) => file,
        (None, true) => bail!("sslmode=verify-full needs sslrootcert=<CA file> in the URL"),
        (None, false) => return Ok(None),
    };
    kept.push("sslmode=require");
    Ok(Some(Verified {
        url: format!("{base}?{}", kept.join("&")),
        ca_file,
    }))
}

/// `url` with `sslmode=verify-full&sslrootcert=<ca_file>` added (replacing any `sslmode`
/// or `sslrootcert` it had), for a CA given apart from the URL.
pub fn with_ca_file(url: &str, ca_file: &Path) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut pairs: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("sslmode=") && !p.starts_with("sslrootcert="))
        .map(str::to_owned)
        .collect();
    let file: String = ca_file
        .to_string_lossy()
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    pairs.push("sslmode=verify-full".to_owned());
    pairs.push(format!("sslrootcert={file}"));
    format!("{base}?{}", pairs.join("&"))
}

/// A rustls client configuration trusting the certificates of the PEM file `ca_file` only.
fn client_config(ca_file: &Path) -> anyhow::Result<Arc<ClientConfig>> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca_file)
        .with_context(|| format!("reading the database CA file {}", ca_file.display()))?
    {
        let cert = cert.with_context(|| format!("parsing {}", ca_file.display()))?;
        roots
            .add(cert)
            .with_context(|| format!("a certificate of {}", ca_file.display()))?;
    }
    if roots.is_empty() {
        bail!("{} holds no certificate", ca_file.display());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow!("TLS versions: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Opens one connection to `url`: verified TLS when the URL names a CA (see the module),
/// else as diesel-async does.
pub async fn establish(url: &str) -> ConnectionResult<AsyncPgConnection> {
    let bad = |e: anyhow::Error| ConnectionError::BadConnection(format!("{e:#}"));
    let Some(target) = verified(url).map_err(bad)? else {
        return AsyncPgConnection::establish(url).await;
    };
    let tls = MakeRustls(client_config(&target.ca_file).map_err(bad)?);
    let config: tokio_postgres::Config = target
        .url
        .parse()
        .map_err(|e| bad(anyhow!("the database URL: {e}")))?;
    let (client, connection) = config
        .connect(tls)
        .await
        .map_err(|e| ConnectionError::BadConnection(with_causes(&e)))?;
    AsyncPgConnection::try_from_client_and_connection(client, connection).await
}

/// Opens one pooled connection to `url` (verified TLS when the URL names a CA), with the
/// bounds of `settings` applied whatever the URL says, watched by `watchdog`: this process
/// drives the connection, so that the watchdog can close it when it stalls.
pub(crate) async fn establish_pooled(
    url: &str,
    settings: &crate::PoolSettings,
    watchdog: &crate::watchdog::Watchdog,
) -> ConnectionResult<AsyncPgConnection> {
    use diesel_async::AsyncConnection as _;
    let bad = |e: anyhow::Error| ConnectionError::BadConnection(format!("{e:#}"));
    let target = verified(url).map_err(bad)?;
    let text = target.as_ref().map_or(url, |t| t.url.as_str());
    let mut config: tokio_postgres::Config = text
        .parse()
        .map_err(|e| bad(anyhow!("the database URL: {e}")))?;
    settings.apply(&mut config);
    let failed = |e: tokio_postgres::Error| ConnectionError::BadConnection(with_causes(&e));
    let (watch, close) = watchdog.watch();
    let client = match target {
        Some(target) => {
            let tls = MakeRustls(client_config(&target.ca_file).map_err(bad)?);
            let (client, connection) = config.connect(tls).await.map_err(failed)?;
            drive(connection, close);
            client
        }
        None => {
            let (client, connection) = config
                .connect(tokio_postgres::NoTls)
                .await
                .map_err(failed)?;
            drive(connection, close);
            client
        }
    };
    let mut conn = AsyncPgConnection::try_from(client).await?;
    conn.set_instrumentation(watch);
    Ok(conn)
}

/// Drives `connection` until it ends or `close` fires (the watchdog closes it: its pending
/// statements fail at once and its client reports closed, which the pool drops).
fn drive<S, T>(
    connection: tokio_postgres::Connection<S, T>,
    close: tokio::sync::oneshot::Receiver<()>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        tokio::select! {
            ended = connection => {
                if let Err(e) = ended {
                    tracing::debug!(error = %with_causes(&e), "database connection ended");
                }
            }
            _ = close => {}
        }
    });
}

/// `e` and its causes, `: `-separated: tokio-postgres says "error performing TLS handshake"
/// and leaves why (an unknown issuer, a name mismatch) to the source.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Makes a [`Rustls`] connector per host, verifying the host's name.
#[derive(Clone)]
struct MakeRustls(Arc<ClientConfig>);

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = Rustls;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> io::Result<Rustls> {
        let name = ServerName::try_from(domain.to_owned()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{domain:?} is not a host name or IP address to verify"),
            )
        })?;
        Ok(Rustls {
            config: self.0.clone(),
            name,
        })
    }
}

/// The TLS handshake with one host.
struct Rustls {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

impl<S> TlsConnect<S> for Rustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let stream = tokio_rustls::TlsConnector::from(self.config)
                .connect(self.name, stream)
                .await?;
            Ok(RustlsStream(stream))
        })
    }
}

/// A TLS stream to the database.
struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for RustlsStream<S> {
    /// No channel binding: SCRAM runs without it, as with `channel_binding=prefer` against a
    /// server that offers none; the certificate check above authenticates the server.
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn urls_naming_a_ca_are_verified_and_others_left_alone() {
        assert_eq!(verified("postgres://u@h/db").unwrap(), None);
        assert_eq!(verified("postgres://u@h/db?sslmode=require").unwrap(), None);
        assert_eq!(
            verified("postgres://u@h:5/db?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x")
                .unwrap(),
            Some(Verified {
                url: "postgres://u@h:5/db?application_name=x&sslmode=require".into(),
                ca_file: "/etc/ca.pem".into(),
            })
        );
        assert!(verified("postgres://u@h/db?sslmode=verify-full").is_err());
        let url = with_ca_file(
            "postgres://u@h/db?sslmode=disable&x=1",
            Path::new("/c a.pem"),
        );
        assert_eq!(
            url,
            "postgres://u@h/db?x=1&sslmode=verify-full&sslrootcert=/c%20a.pem"
        );
        assert_eq!(
            verified(&url).unwrap().unwrap().ca_file,
            Path::new("/c a.pem")
        );
    }
}
