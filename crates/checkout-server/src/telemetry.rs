//! Logging: one JSON or compact line per event on stderr, filtered by `RUST_LOG`
//! (default `info`). Nothing logs request bodies, card data, secrets or tokens.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber (once; later calls do nothing). `CHECKOUT_LOG_FORMAT=json`
/// selects JSON lines.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let _ = if std::env::var("CHECKOUT_LOG_FORMAT").as_deref() == Ok("json") {
        builder.json().try_init()
    } else {
        builder.compact().try_init()
    };
}
