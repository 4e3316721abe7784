#!/usr/bin/env bash
# Installs `prometheus-client` (the Prometheus project's Python client, from PyPI) into a
# private virtualenv, once, for the server tests that scrape `/metrics` and parse it with that
# library's text-format parser (scripts/parse_metrics.py), not with our code.
#
# Run it before those tests (scripts/test.sh does, and exports PROMETHEUS_PARSER_PYTHON).
# The last line of output is the absolute path of the virtualenv's Python interpreter.
#
# Environment:
#   PROMETHEUS_PARSER_VENV  where the virtualenv goes
#                           (default: $HOME/.cache/hosted-checkout/prometheus-parser-venv)
#   PYTHON                  the interpreter that makes the venv (default: python3)
set -euo pipefail
cd "$(dirname "$0")"
exec ./python-venv.sh \
    "${PROMETHEUS_PARSER_VENV:-${HOME}/.cache/hosted-checkout/prometheus-parser-venv}" \
    'prometheus-client>=0.20,<1' \
    'from prometheus_client.parser import text_string_to_metric_families'
