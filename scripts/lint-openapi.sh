#!/usr/bin/env bash
# Lints the OpenAPI document with three independent tools; each must report 0 errors and 0
# warnings:
#   openapi-spec-validator (PyPI)        the OpenAPI 3.1 meta-schema
#   @redocly/cli lint (npm)              Redocly's `recommended` ruleset
#   @stoplight/spectral-cli lint (npm)   Spectral's `spectral:oas` ruleset
#
#   ./scripts/lint-openapi.sh                  lints docs/openapi.json (the snapshot, which a
#                                              test keeps equal to the served /openapi.json)
#   ./scripts/lint-openapi.sh path/to/doc.json lints another file
#
# The tools are installed once into $HOME/.cache/hosted-checkout/ (openapi-py-venv and
# openapi-node), with the versions pinned below.
set -euo pipefail
cd "$(dirname "$0")/.."
document="${1:-docs/openapi.json}"
cache="$HOME/.cache/hosted-checkout"

python="$(./scripts/python-venv.sh "$cache/openapi-py-venv" 'openapi-spec-validator==0.9.0' \
    'import openapi_spec_validator' | tail -n 1)"
bin="$(./scripts/openapi-node.sh)"

echo "== openapi-spec-validator $document"
"$python" -m openapi_spec_validator "$document"

echo "== redocly lint (recommended) $document"
out="$(NO_COLOR=1 "$bin/redocly" lint --extends recommended --format stylish "$document" 2>&1)" || {
    echo "$out"
    exit 1
}
echo "$out" | grep -E "warning|error|valid" || true
if echo "$out" | grep -qE "[0-9]+ (warning|error)s?\b"; then
    echo "redocly reported warnings or errors" >&2
    exit 1
fi

echo "== spectral lint (spectral:oas) $document"
ruleset="$(mktemp /tmp/hc-spectral.XXXXXX.yaml)"
trap 'rm -f "$ruleset"' EXIT
echo 'extends: ["spectral:oas"]' >"$ruleset"
"$bin/spectral" lint --ruleset "$ruleset" --fail-severity hint "$document"
echo "== the OpenAPI document passes all three linters"
