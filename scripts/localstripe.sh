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
python="${PYTHON:-python3}"
bin="${venv}/bin/localstripe"

if [[ ! -x "${venv}/bin/python" ]]; then
    echo "creating virtualenv ${venv}" >&2
    mkdir -p "$(dirname "${venv}")"
    "${python}" -m venv "${venv}"
fi

if [[ ! -x "${bin}" ]] || ! "${venv}/bin/python" -c 'import localstripe' 2>/dev/null; then
    echo "installing localstripe into ${venv}" >&2
    "${venv}/bin/python" -m pip install --quiet --disable-pip-version-check localstripe >&2
fi

if [[ ! -x "${bin}" ]]; then
    echo "localstripe was installed but ${bin} is missing" >&2
    exit 1
fi

echo "${bin}"
