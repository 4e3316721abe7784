#!/usr/bin/env bash
# Installs axe-core (npm) into a private folder and prints the path of `axe.min.js`, which the
# browser tests inject into each page state. Reuses the installed copy on later runs.
set -euo pipefail
VERSION="4.10.3"
DIR="${AXE_DIR:-$HOME/.cache/hosted-checkout/axe-core-$VERSION}"
FILE="$DIR/node_modules/axe-core/axe.min.js"
if [[ ! -f "$FILE" ]]; then
    mkdir -p "$DIR"
    exec 9>"$DIR.lock"
    flock 9
    if [[ ! -f "$FILE" ]]; then
        npm install --silent --no-audit --no-fund --prefix "$DIR" "axe-core@$VERSION" >&2
    fi
fi
echo "$FILE"
