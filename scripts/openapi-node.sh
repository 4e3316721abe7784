#!/usr/bin/env bash
# Installs (once) the npm tools of the OpenAPI checks into $HOME/.cache/hosted-checkout/
# openapi-node, at pinned versions, and prints its node_modules/.bin folder as the last line.
# Safe to run several times at once (a lock serialises the installs).
set -euo pipefail
dir="${OPENAPI_NODE_DIR:-$HOME/.cache/hosted-checkout/openapi-node}"
packages=(
    @redocly/cli@2.77.0
    @stoplight/spectral-cli@6.16.3
    openapi-typescript@7.13.0
    openapi-fetch@0.17.0
    typescript@5.9.3
    tsx@4.23.15
)
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
stamp="$dir/.installed"
if [[ "$(cat "$stamp" 2>/dev/null)" != "${packages[*]}" ]]; then
    echo "installing ${packages[*]} into $dir" >&2
    [[ -f "$dir/package.json" ]] || echo '{"name":"hc-openapi-tools","private":true}' >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --silent --save-exact "${packages[@]}" >&2)
    echo "${packages[*]}" >"$stamp"
fi
echo "$dir/node_modules/.bin"
