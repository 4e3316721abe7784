#!/usr/bin/env bash
# Installs `standardwebhooks` (the Standard Webhooks reference library for Python, from PyPI) into
# a private virtualenv, once, for the webhook receiver that crates/checkout-webhooks' tests run
# (scripts/webhook_receiver.py verifies every delivery with that library, not with our code).
#
# Run it before those tests (scripts/test.sh does, and exports WEBHOOK_RECEIVER_PYTHON).
# Idempotent and safe to run several times at once (scripts/python-venv.sh locks). The last
# line of output is the absolute path of the virtualenv's Python interpreter.
#
# Environment:
#   WEBHOOK_RECEIVER_VENV  where the virtualenv goes
#                          (default: $HOME/.cache/hosted-checkout/webhook-receiver-venv)
#   PYTHON                 the interpreter that makes the venv (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."

exec ./scripts/python-venv.sh \
    "${WEBHOOK_RECEIVER_VENV:-${HOME}/.cache/hosted-checkout/webhook-receiver-venv}" \
    'standardwebhooks>=1.1,<2' 'from standardwebhooks import Webhook'
