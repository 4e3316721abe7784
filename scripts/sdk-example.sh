#!/usr/bin/env bash
# Runs the Rust SDK's example shop (crates/checkout-client/examples/shop.rs: a token, a payment
# link, its status polled, the link withdrawn, the events feed read up to that event) against
# a fresh sandbox started as scripts/sandbox-server.sh starts it. Exits non-zero when the
# example fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hosted-checkout/target}"

cargo build --quiet -p checkout-client --example shop
source scripts/sandbox-server.sh
start_sandbox

echo "== the SDK's example shop against $base"
CHECKOUT_BASE_URL="$base" CHECKOUT_CLIENT_ID=sandbox-client CHECKOUT_CLIENT_SECRET="$secret" \
    CHECKOUT_POLL_SECONDS="${CHECKOUT_POLL_SECONDS:-2}" RUST_LOG="${RUST_LOG:-checkout_client=info}" \
    "$CARGO_TARGET_DIR/debug/examples/shop"
