#!/usr/bin/env bash
# Installs localstripe (a fake Stripe server from PyPI) into a private virtualenv, once.
#
# The stripe adapter's tests in crates/checkout-processor start it themselves; run this script
# before them (CI runs it in .ci/run). Idempotent: a second run only checks and prints the path.
# The last line of output is the absolute path of the `localstripe` executable.
#
# Environment:
#   LOCALSTRIPE_VENV  where the virtualenv goes (default: $HOME/.cache/hosted-checkout/localstripe-venv)
#   PYTHON            the interpreter that makes the venv (default: python3)
set -euo pipefail

venv="${LOCALSTRIPE_VENV:-${HOME}/.cache/hosted-checkout/localstripe-venv}"
bin="${venv}/bin/localstripe"

"$(dirname "$0")/python-venv.sh" "${venv}" localstripe 'import localstripe' >/dev/null

if [[ ! -x "${bin}" ]]; then
    echo "localstripe was installed but ${bin} is missing" >&2
    exit 1
fi

echo "${bin}"
