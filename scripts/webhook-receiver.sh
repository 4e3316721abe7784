#!/usr/bin/env bash
# Installs `standardwebhooks` (the Standard Webhooks reference library for Python, from PyPI) into
# a private virtualenv, once, for the webhook receiver that crates/checkout-webhooks' tests run
# (scripts/webhook_receiver.py verifies every delivery with that library, not with our code).
#
# Run it before those tests (scripts/test.sh does, and exports WEBHOOK_RECEIVER_PYTHON).
# Idempotent, and safe to run several times at once (a lock serialises the installs): a second
# run only checks and prints the path. The last line of output is the absolute path of the
# virtualenv's Python interpreter, which has `standardwebhooks` installed.
#
# Environment:
#   WEBHOOK_RECEIVER_VENV  where the virtualenv goes
#                          (default: $HOME/.cache/hosted-checkout/webhook-receiver-venv)
#   PYTHON                 the interpreter that makes the venv (default: python3)
set -euo pipefail

venv="${WEBHOOK_RECEIVER_VENV:-${HOME}/.cache/hosted-checkout/webhook-receiver-venv}"
python="${PYTHON:-python3}"
interpreter="${venv}/bin/python"

mkdir -p "$(dirname "${venv}")"
# Tests run in parallel processes and may all call this script at once.
exec 9>"${venv}.lock"
flock 9

if [[ ! -x "${interpreter}" ]]; then
    echo "creating virtualenv ${venv}" >&2
    "${python}" -m venv "${venv}"
fi

if ! "${interpreter}" -c 'import standardwebhooks' 2>/dev/null; then
    echo "installing standardwebhooks into ${venv}" >&2
    "${interpreter}" -m pip install --quiet --disable-pip-version-check 'standardwebhooks>=1.1,<2' >&2
fi

if ! "${interpreter}" -c 'from standardwebhooks import Webhook' 2>/dev/null; then
    echo "standardwebhooks was installed but ${interpreter} cannot import it" >&2
    exit 1
fi

echo "${interpreter}"
