#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine.
#
# Installs what the tests need (from Debian: the PostgreSQL server binaries, chromium,
# chromium-driver, npm and openssl, when missing; axe-core, jsqr and oidc-provider from npm;
# localstripe, the Standard Webhooks library and the Prometheus client's text parser from PyPI
# into private virtualenvs), then runs every test with cargo-nextest. PAGES_FULL_MATRIX=1 makes the page tests walk all eight
# combinations of size, language and script instead of three.
# The tests start their own private Postgres cluster, their own localstripe and their own webhook
# receiver; nothing else needs to be running. Extra arguments go to `cargo nextest run` (for
# example a test filter). Snapshot tests never accept a new or changed snapshot here.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hosted-checkout/target}"

have_initdb() {
    command -v initdb >/dev/null 2>&1 || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

# Debian packages the tests need: the PostgreSQL server binaries, and headless Chromium with
# its WebDriver for the page tests.
packages=()
have_initdb || packages+=(postgresql)
command -v chromium >/dev/null 2>&1 || packages+=(chromium)
command -v chromedriver >/dev/null 2>&1 || packages+=(chromium-driver)
command -v npm >/dev/null 2>&1 || packages+=(npm)
# The identity tests make a private CA for an https OpenID Connect provider.
command -v openssl >/dev/null 2>&1 || packages+=(openssl)
if ((${#packages[@]})); then
    echo "== installing ${packages[*]}" >&2
    sudo_cmd=()
    if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${packages[@]}" >/dev/null
fi

echo "== localstripe" >&2
LOCALSTRIPE_BIN="$(./scripts/localstripe.sh)"
export LOCALSTRIPE_BIN

echo "== webhook receiver (standardwebhooks)" >&2
WEBHOOK_RECEIVER_PYTHON="$(./scripts/webhook-receiver.sh)"
export WEBHOOK_RECEIVER_PYTHON

echo "== SMTP receiver (aiosmtpd), the mail server of the receipt tests" >&2
SMTP_RECEIVER_PYTHON="$(./scripts/smtp-receiver.sh)"
export SMTP_RECEIVER_PYTHON

echo "== Prometheus text parser (prometheus-client)" >&2
PROMETHEUS_PARSER_PYTHON="$(./scripts/prometheus-parser.sh)"
export PROMETHEUS_PARSER_PYTHON

echo "== axe-core (npm), for the page tests' accessibility scans" >&2
./scripts/axe.sh >/dev/null

echo "== jsqr (npm), the QR decoder of the payment-link QR code tests" >&2
./scripts/jsqr.sh >/dev/null

echo "== oidc-provider (npm), the OpenID Connect provider of the identity adapter's tests" >&2
OIDC_PROVIDER_DIR="$(./scripts/oidc-provider.sh)"
export OIDC_PROVIDER_DIR

echo "== cargo nextest" >&2
# A missing or changed insta snapshot fails its test and nothing is written: snapshots are
# accepted by a person (`cargo insta review`), never by a run.
export INSTA_UPDATE=no
cargo nextest run --workspace --no-fail-fast "$@"

echo "== the SDK's rustdoc examples (cargo test --doc; nextest runs no doctests)" >&2
cargo test --quiet --doc -p checkout-client
