#!/usr/bin/env bash
# Generates a Python client (openapi-python-client) and a TypeScript one (openapi-typescript
# types for openapi-fetch, type-checked by tsc) from the live sandbox's /openapi.json, and
# runs the whole merchant flow with each (scripts/clients/flow.py and flow.ts: token,
# start-payment, payment link and its QR code, status, lookup by reference, cancel, events), with no
# hand-written HTTP. Tools are cached in $HOME/.cache/hosted-checkout/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hosted-checkout/target}"
cache="$HOME/.cache/hosted-checkout"
venv="$cache/openapi-py-venv"
./scripts/python-venv.sh "$venv" 'openapi-python-client==0.29.1' 'import openapi_python_client' >/dev/null
./scripts/python-venv.sh "$venv" 'python-dateutil>=2.8,<3' 'import dateutil, httpx, attrs' >/dev/null
bin="$(./scripts/openapi-node.sh)"

source scripts/sandbox-server.sh
start_sandbox
curl -sf "$base/openapi.json" -o "$work/openapi.json"

echo "== openapi-python-client"
# The QR code route answers images; the generator reads them as bytes when told which media
# types are binary (its documented `content_type_overrides`).
cat >"$work/py.yaml" <<'YAML'
post_hooks: []
content_type_overrides:
  image/png: application/octet-stream
  image/svg+xml: application/octet-stream
YAML
(cd "$work" && "$venv/bin/openapi-python-client" generate --path openapi.json --meta none \
    --output-path pyclient --config py.yaml --fail-on-warning >/dev/null)
cp scripts/clients/flow.py "$work/"
"$venv/bin/python" "$work/flow.py" "$base" "$secret"

echo "== openapi-typescript + openapi-fetch"
mkdir -p "$work/ts"
ln -s "$(dirname "$bin")" "$work/ts/node_modules"
"$bin/openapi-typescript" "$work/openapi.json" -o "$work/ts/schema.d.ts" --silent
cp scripts/clients/flow.ts "$work/ts/"
(cd "$work/ts" && "$bin/tsc" --noEmit --strict --target es2022 --module nodenext \
    --moduleResolution nodenext --types node --skipLibCheck flow.ts)
(cd "$work/ts" && "$bin/tsx" flow.ts "$base" "$secret")
