#!/usr/bin/env bash
# Checks the Prometheus alert rules (deploy/prometheus/alerts.yml) with promtool: their syntax
# and their unit tests (deploy/prometheus/alerts.test.yml: which alerts fire, and which do not,
# for given series). Installs the Debian `prometheus` package (which ships promtool) when
# promtool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v promtool >/dev/null 2>&1; then
    echo "== installing prometheus (for promtool)" >&2
    sudo_cmd=()
    if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
promtool check rules deploy/prometheus/alerts.yml
(cd deploy/prometheus && promtool test rules alerts.test.yml)
