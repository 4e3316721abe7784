#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what the tests need, then nextest.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hosted-checkout/target}"

cargo nextest run --workspace --no-fail-fast "$@"
