#!/usr/bin/env bash
# Installs `aiosmtpd` (the asyncio SMTP server from PyPI) into a private virtualenv, once, for
# the SMTP server that the receipt tests start (scripts/smtp_receiver.py: a real SMTP server
# the service sends its e-mail receipts to, which parses each message with Python's `email`
# package).
#
# Run it before those tests (scripts/test.sh does, and exports SMTP_RECEIVER_PYTHON).
# Idempotent and safe to run several times at once (scripts/python-venv.sh locks). The last
# line of output is the absolute path of the virtualenv's Python interpreter.
#
# Environment:
#   SMTP_RECEIVER_VENV  where the virtualenv goes
#                       (default: $HOME/.cache/hosted-checkout/smtp-receiver-venv)
#   PYTHON              the interpreter that makes the venv (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."

exec ./scripts/python-venv.sh \
    "${SMTP_RECEIVER_VENV:-${HOME}/.cache/hosted-checkout/smtp-receiver-venv}" \
    'aiosmtpd>=1.4,<2' 'from aiosmtpd.smtp import SMTP'
