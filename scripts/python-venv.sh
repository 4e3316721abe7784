#!/usr/bin/env bash
# Makes (once) a private virtualenv with one PyPI requirement and prints its interpreter's
# absolute path as the last line. Idempotent and safe to run several times at once (a lock
# serialises the installs).
#
# Usage: scripts/python-venv.sh VENV_DIR REQUIREMENT IMPORT_CHECK
#   VENV_DIR      where the virtualenv goes
#   REQUIREMENT   a pip requirement, such as 'prometheus-client>=0.20,<1'
#   IMPORT_CHECK  a Python statement that must run once installed
# Environment: PYTHON, the interpreter that makes the venv (default: python3).
set -euo pipefail

venv="$1"
requirement="$2"
check="$3"
python="${PYTHON:-python3}"
interpreter="${venv}/bin/python"

mkdir -p "$(dirname "${venv}")"
exec 9>"${venv}.lock"
flock 9

if [[ ! -x "${interpreter}" ]]; then
    echo "creating virtualenv ${venv}" >&2
    "${python}" -m venv "${venv}"
fi
if ! "${interpreter}" -c "${check}" 2>/dev/null; then
    echo "installing ${requirement} into ${venv}" >&2
    "${interpreter}" -m pip install --quiet --disable-pip-version-check "${requirement}" >&2
fi
if ! "${interpreter}" -c "${check}"; then
    echo "${requirement} was installed but ${interpreter} cannot run: ${check}" >&2
    exit 1
fi
echo "${interpreter}"
